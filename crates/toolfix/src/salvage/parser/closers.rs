//! Closing brackets: the right one, a typo for it, one that closes several frames at once,
//! one with nothing to close, and a `}` that ended the top-level value too early.

use super::{Frame, KEY_BITS_MAX, Kind, Parser, State};
use crate::salvage::FixKind as K;
use crate::salvage::lex::{key_then_colon, quoted_then, skip_layout};

impl Parser<'_> {
    /// Handle a closing bracket `c` at `self.pos`.
    pub(super) fn closer(&mut self, c: u8) {
        let i = self.pos;
        let Some(top) = self.stack.last().copied() else {
            return;
        };
        if closes(top, c) {
            self.close_top(i, i + 1, c);
            return;
        }
        let deeper = self.stack.iter().rposition(|f| closes(*f, c));
        let Some(depth) = deeper else {
            if skip_layout(self.b, i + 1, self.end) >= self.end && top.kind != Kind::Wrapper {
                // `{"a": 1]` at the end of the text: a typo for the top's closer, which
                // closes it as the right one would (a tuple's close rewrites the byte itself).
                let right = match top.kind {
                    Kind::Object => b'}',
                    Kind::Tuple => b')',
                    _ => b']',
                };
                if top.kind == Kind::Tuple {
                    self.edits.note(i, i + 1, K::MismatchedBracket);
                } else {
                    self.edits.replace(i, i + 1, if right == b'}' { "}" } else { "]" }, Some(K::MismatchedBracket));
                }
                self.close_top(i, i + 1, right);
                return;
            }
            self.edits.delete(i, i + 1, Some(K::ExtraClosingBracket));
            self.pos += 1;
            return;
        };
        // Either `c` is a typo for the top's closer, or the frames above `depth` lack
        // their closers. What follows decides: a key after `,` means an object context.
        let j = skip_layout(self.b, i + 1, self.end);
        let after_comma = (self.at(j) == Some(b',')).then(|| skip_layout(self.b, j + 1, self.end));
        let parent_of = |idx: usize| idx.checked_sub(1).and_then(|p| self.stack.get(p)).map(|f| f.kind);
        let top_idx = self.stack.len() - 1;
        let typo_parent = parent_of(top_idx);
        let missing_parent = parent_of(depth);
        let wants_object = after_comma.map(|k| key_then_colon(self.b, k, self.end));
        let typo = match wants_object {
            Some(true) => typo_parent == Some(Kind::Object) || missing_parent != Some(Kind::Object),
            Some(false) => typo_parent != Some(Kind::Object) || missing_parent == Some(Kind::Object),
            None => false,
        };
        if typo && matches!(top.kind, Kind::Tuple | Kind::Wrapper) {
            // `[(1], 2]`: the typo closes the tuple or wrapper as its `)` would.
            self.edits.note(i, i + 1, K::MismatchedBracket);
            self.close_top(i, i + 1, b')');
        } else if typo {
            let closer = closer_text(top);
            self.settle_before_close(top, i);
            self.edits.replace(i, i + 1, closer, Some(K::MismatchedBracket));
            self.close_frame(i + 1);
            self.pos = i + 1;
        } else {
            self.edits.note(i, i + 1, K::MismatchedBracket);
            while self.stack.len() > depth + 1 {
                if let Some(f) = self.stack.last().copied() {
                    self.finish_frame_at(f, i);
                }
                self.close_frame(i);
            }
            self.close_top(i, i + 1, c);
        }
    }

    /// Close the top frame with the closer at `i..end`.
    pub(super) fn close_top(&mut self, i: usize, end: usize, c: u8) {
        let Some(f) = self.stack.last().copied() else { return };
        self.settle_before_close(f, i);
        match f.kind {
            Kind::Tuple => self.close_tuple(f, i, end),
            Kind::Wrapper => {
                self.edits.delete(i, end, None);
            }
            _ => {
                if let Some(want) = f.close_as {
                    if want != c {
                        self.edits.replace(i, end, if want == b'}' { "}" } else { "]" }, None);
                    }
                } else if c == b')' {
                    self.edits.replace(i, end, "]", Some(K::MismatchedBracket));
                }
            }
        }
        self.pos = end;
        self.close_frame(end);
    }

    /// Before frame `f` closes at `i`: drop its trailing comma, give a dangling key `null`.
    /// Inlined always: small and on every close (whether the compiler inlines it otherwise
    /// changes with how the crate is split into codegen units).
    #[expect(
        clippy::inline_always,
        reason = "left to the compiler, it is inlined or not as the crate's codegen units fall"
    )]
    #[inline(always)]
    pub(super) fn settle_before_close(&mut self, f: Frame, i: usize) {
        if let Some(comma) = f.pending_comma {
            self.edits.delete(comma, comma + 1, Some(K::TrailingComma));
        }
        if f.kind == Kind::Object && f.state == State::Colon {
            self.edits.insert(f.key_end, ": null", Some(K::MissingValue));
        } else if f.kind == Kind::Object && f.state == State::Value {
            self.edits.insert(i, "null", Some(K::MissingValue));
        }
    }

    pub(super) fn close_tuple(&mut self, f: Frame, i: usize, end: usize) {
        if f.count == 1 && !f.saw_comma {
            // (x) is just x.
            self.edits.delete(f.open, f.open + 1, Some(K::TupleOrSet));
            self.edits.delete(i, end, None);
        } else {
            self.edits.replace(f.open, f.open + 1, "[", Some(K::TupleOrSet));
            self.edits.replace(i, end, "]", None);
        }
    }

    /// Pop the top frame, which ended at `end`, and tell its parent.
    pub(super) fn close_frame(&mut self, end: usize) {
        if let Some(f) = self.stack.pop() {
            if f.kind == Kind::Object && !self.keys_may_repeat && self.keys.len() > f.keys_from + KEY_BITS_MAX {
                self.compare_keys(f.keys_from);
            }
            self.keys.truncate(f.keys_from);
            self.last_closed = Some((f, end));
            self.value_done(end, false);
        }
    }

    /// Compare the keys of an object with many, as it closes (from `first` in
    /// [`Parser::keys`]): sorted by fingerprint, then by text.
    #[cold]
    fn compare_keys(&mut self, first: usize) {
        let b = self.b;
        let text = |&(from, to, _): &(usize, usize, u64)| b.get(from..to).unwrap_or_default();
        let Some(keys) = self.keys.get_mut(first..) else { return };
        keys.sort_unstable_by(|x, y| x.2.cmp(&y.2).then_with(|| text(x).cmp(text(y))));
        self.keys_may_repeat |= keys.windows(2).any(|w| matches!(w, [x, y] if x.2 == y.2 && text(x) == text(y)));
    }

    /// Before closing a frame that lacked its closer at `at`: insert what it needs.
    pub(super) fn finish_frame_at(&mut self, f: Frame, at: usize) {
        if let Some(comma) = f.pending_comma {
            self.edits.delete(comma, comma + 1, Some(K::TrailingComma));
        }
        match (f.kind, f.state) {
            (Kind::Object, State::Colon) => {
                self.edits.insert(f.key_end, ": null", None);
            }
            (Kind::Object, State::Value) => {
                self.edits.insert(at, " null", None);
            }
            _ => {}
        }
        match f.kind {
            Kind::Tuple => {
                if f.count == 1 && !f.saw_comma {
                    self.edits.delete(f.open, f.open + 1, None);
                } else {
                    self.edits.replace(f.open, f.open + 1, "[", None);
                    self.edits.insert(at, "]", None);
                }
            }
            Kind::Wrapper => {}
            _ => {
                self.edits.insert(at, closer_text(f), None);
            }
        }
    }

    /// After the top-level value closed with `}`: `{"a": 1}, "b": 2}` closed too early.
    pub(super) fn reopen_after_premature_close(&mut self) -> bool {
        let Some((frame, end)) = self.last_closed else {
            return false;
        };
        if frame.kind != Kind::Object || end != self.pos || self.b.get(end - 1) != Some(&b'}') {
            return false;
        }
        let j = skip_layout(self.b, end, self.end);
        if self.at(j) != Some(b',') {
            return false;
        }
        let k = skip_layout(self.b, j + 1, self.end);
        // `"k": v` or `"k" "v"` (its colon missing) is a member, so the `}` came too early.
        if !key_then_colon(self.b, k, self.end) && !quoted_then(self.b, k, self.end, b"\"") {
            return false;
        }
        self.edits.delete(end - 1, end, Some(K::PrematureClose));
        self.last_closed = None;
        // An object with no member yet (`{a b}, "k": 1}` drops `a b`) takes the comma as a
        // leading one; a dangling key (`{"e"}, "k": 1`) got `null` and is a member.
        let state = if frame.count == 0 && frame.state == State::Open { State::Open } else { State::Next };
        // A dangling key's `null` made it a member, counted as one (a member dropped later
        // leaves the comma before it pending, as after any member).
        let count = frame.count + usize::from(matches!(frame.state, State::Colon | State::Value));
        // Its keys before the `}` were compared and forgotten: the rest are not compared
        // with them.
        self.keys_may_repeat = true;
        self.stack.push(Frame { state, count, last_end: end - 1, keys_from: self.keys.len(), ..frame });
        true
    }
}

/// Does `c` close frame `f`?
pub(super) fn closes(f: Frame, c: u8) -> bool {
    match (f.kind, c) {
        (Kind::Object, b'}') | (Kind::Array, b']') | (Kind::Tuple | Kind::Wrapper, b')') => true,
        // A set converted to an array still closes with `}`; an array turned object with `]`.
        (Kind::Array, b'}') => f.close_as == Some(b']'),
        (Kind::Object, b']') => f.close_as == Some(b'}'),
        (Kind::Array, b')') => true,
        _ => false,
    }
}

pub(super) fn closer_text(f: Frame) -> &'static str {
    match f.kind {
        Kind::Object => "}",
        Kind::Array | Kind::Tuple => "]",
        Kind::Wrapper => "",
    }
}
