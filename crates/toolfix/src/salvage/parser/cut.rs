//! The end of input with frames open: close them, decide whether the text was evidently
//! cut, and find the values that touch the cut ([`Truncation`]).

use super::{Frame, Kind, Parser, State};
use crate::report::{Truncation, Uncertain, UncertainKind};
use crate::salvage::FixKind as K;
use crate::salvage::lex::is_ws;
use crate::span::Span;

impl Parser<'_> {
    /// The input ended with frames open: close them all.
    pub(super) fn close_at_eof(&mut self) {
        let token = self.cut_token.take();
        let token = self.drop_cut_member(token);
        self.record_cut_with(token, true);
        let end = self.end;
        let mut noted = false;
        while let Some(f) = self.stack.last().copied() {
            if f.kind == Kind::Wrapper && f.count == 0 {
                // `ObjectId(` cut before its value holds nothing: it goes. (In an object,
                // its member went with it above.)
                self.stack.pop();
                if self.stack.last().is_some_and(|p| p.kind != Kind::Object) {
                    // In an array the element is nothing: the comma inserted before it goes.
                    self.edits.clear_value(f.open, end);
                    self.forget_missing_comma();
                    let mut k = f.open;
                    while k > 0 && is_ws(self.b[k - 1]) {
                        k -= 1;
                    }
                    if k > 0 && self.b[k - 1] == b',' {
                        self.edits.delete(k - 1, k, Some(K::TrailingComma));
                    }
                    self.edits.delete(f.open, end, Some(K::TruncatedToken));
                }
                continue;
            }
            if f.kind == Kind::Object && matches!(f.state, State::Colon | State::Value) {
                // A member with no value left (a wrapper cut before its value): it goes.
                self.drop_cut_member(None);
            }
            let f = self.stack.last().copied().unwrap_or(f);
            if let Some(comma) = f.pending_comma {
                self.edits.delete(comma, comma + 1, Some(K::TrailingComma));
            }
            if !noted {
                self.edits.note(end, end, K::TruncatedContainer);
                noted = true;
            }
            let clean = Frame { pending_comma: None, state: State::Next, ..f };
            self.finish_frame_at(clean, end);
            self.close_frame(end);
        }
        self.pos = end;
    }

    /// The input ended inside a member of an object before its value was complete: after
    /// the key (`{"a":`), or with the value cut to nothing (`{"a": tr`, `{"a": -`,
    /// `{"a": "`, `{"a": ObjectId(`). The member goes, key and all, as a cut key does:
    /// nothing the model did not write (such as `null`) stands in for the value. Returns
    /// the token to report as uncertain (left out, at the member's pointer).
    #[cold]
    fn drop_cut_member(&mut self, token: Option<(UncertainKind, usize, bool)>) -> Option<(UncertainKind, usize, bool)> {
        // Wrappers cut before their value (`ObjectId(`) are part of the member.
        let mut depth = self.stack.len();
        while depth > 1 && self.stack.get(depth - 1).is_some_and(|f| f.kind == Kind::Wrapper && f.count == 0) {
            depth -= 1;
        }
        let f = depth.checked_sub(1).and_then(|d| self.stack.get(d)).copied()?;
        let dangling = f.kind == Kind::Object && matches!(f.state, State::Colon | State::Value);
        if !dangling || token.is_some_and(|(_, _, kept)| kept) {
            return token;
        }
        self.stack.truncate(depth);
        let (start, end) = (f.key_start, self.end);
        // The key's own fixes (requoting, a missing colon) and the value's go with it, and
        // so does a comma inserted before the key.
        // (An insertion at the key's start made before the key belongs to the value before.)
        self.edits.rollback(f.key_edits, start);
        self.edits.clear_range(start, end + 1);
        self.edits.pop_insertion(f.last_end, K::MissingComma);
        // The comma after the member before it is pending again (no member before: none; a
        // leading comma was already dropped).
        let after_member = f.count > 0 || f.last_end > f.open + 1;
        let comma = if after_member { self.comma_between(f.last_end, start) } else { None };
        self.edits.delete(start, end, Some(K::TruncatedKey));
        let top = self.top();
        top.state = State::Open;
        top.pending_comma = comma;
        Some(token.map_or((UncertainKind::Member, start, false), |(kind, at, _)| (kind, at, false)))
    }

    /// The input ended with frames open: decide whether it was evidently cut, find the
    /// values that touch the cut (`token`, finished as a value when `done`, among them),
    /// and report them.
    #[cold]
    pub(super) fn record_cut_with(&mut self, token: Option<(UncertainKind, usize, bool)>, done: bool) {
        let end = self.end;
        let Some(&top) = self.stack.last() else { return };
        // Only the top-level closer missing is a dropped brace; an array or object left
        // open inside may lack members, so its value is not the one the model meant.
        let evident = token.is_some()
            || matches!(top.state, State::Colon | State::Value)
            || (top.state == State::Open && (top.pending_comma.is_some() || top.count == 0))
            || self.stack.iter().skip(1).any(|f| f.kind != Kind::Wrapper);
        let mut uncertain = Vec::new();
        let mut path = String::new();
        let n = self.stack.len();
        for idx in 0..n {
            let f = self.stack[idx];
            if idx > 0 && f.kind != Kind::Wrapper {
                let kind = if f.kind == Kind::Object { UncertainKind::Object } else { UncertainKind::Array };
                uncertain.push(Uncertain { kind, span: Span::new(f.open, end), pointer: path.clone(), kept: true });
            }
            if idx + 1 < n {
                self.push_segment(&mut path, f, f.count);
            }
        }
        match token {
            Some((kind, start, kept)) => {
                if kind != UncertainKind::Key {
                    let index = if kept && done { top.count.saturating_sub(1) } else { top.count };
                    self.push_segment(&mut path, top, index);
                }
                uncertain.push(Uncertain { kind, span: Span::new(start, end), pointer: path, kept });
            }
            None if top.kind == Kind::Object && matches!(top.state, State::Colon | State::Value) => {
                self.push_segment(&mut path, top, 0);
                let span = Span::new(top.key_start, end);
                uncertain.push(Uncertain { kind: UncertainKind::Member, span, pointer: path, kept: true });
            }
            None => {}
        }
        if evident {
            for u in &uncertain {
                self.edits.note(u.span.start, u.span.end, u.kind.fix_kind());
            }
        }
        self.cut = Some(Truncation { at: end, evident, uncertain });
    }

    /// A string that never closed was read as ending before `, key:` inside it (a closing
    /// quote lost), at `open`: the text may as well have been cut inside that string, so
    /// the string is uncertain, and so is the object holding it, whose members after the
    /// string may be no members the model wrote (listed first: the outermost value).
    #[cold]
    pub(super) fn record_split(&mut self, open: usize) {
        self.record_cut_with(Some((UncertainKind::String, open, true)), false);
        let Some(&top) = self.stack.last() else { return };
        let mut path = String::new();
        let n = self.stack.len();
        for idx in 0..n.saturating_sub(1) {
            let f = self.stack[idx];
            self.push_segment(&mut path, f, f.count);
        }
        // A nested object is listed already (every container open at a cut is).
        let Some(cut) = self.cut.as_mut() else { return };
        if cut.uncertain.iter().any(|u| u.kind == UncertainKind::Object && u.pointer == path) {
            return;
        }
        let span = Span::new(top.open, self.end);
        cut.uncertain.insert(0, Uncertain { kind: UncertainKind::Object, span, pointer: path, kept: true });
        self.edits.note(span.start, span.end, UncertainKind::Object.fix_kind());
    }

    /// The input ended inside a top-level string: the whole value is uncertain.
    #[cold]
    pub(super) fn record_top_cut(&mut self, open: usize) {
        let span = Span::new(open, self.end);
        self.edits.note(open, self.end, UncertainKind::String.fix_kind());
        let uncertain = vec![Uncertain { kind: UncertainKind::String, span, pointer: String::new(), kept: true }];
        self.cut = Some(Truncation { at: self.end, evident: true, uncertain });
    }

    /// Append to `path` the step into frame `f`'s current member (element `index` of an
    /// array).
    pub(super) fn push_segment(&self, path: &mut String, f: Frame, index: usize) {
        match f.kind {
            Kind::Object => {
                let raw = self.src.get(f.key_start..f.key_end).unwrap_or("");
                let key = match serde_json::from_str::<String>(raw) {
                    Ok(k) if raw.starts_with('"') => k,
                    _ => raw.trim_matches(|c| matches!(c, '"' | '\'' | '`' | '“' | '”' | '‘' | '’' | '„')).to_owned(),
                };
                crate::pointer::push(path, &key);
            }
            Kind::Array | Kind::Tuple => crate::pointer::push(path, &index.to_string()),
            Kind::Wrapper => {}
        }
    }
}
