//! The end of input with frames open: close them, decide whether the text was evidently
//! cut, and find the values that touch the cut ([`Truncation`]).

use super::{Frame, Kind, Parser, State};
use crate::Span;
use crate::report::{Truncation, Uncertain, UncertainKind};
use crate::salvage::FixKind as K;
use crate::salvage::lex::{is_ident, is_ws};

impl Parser<'_> {
    /// The input ended with frames open: close them all.
    pub(super) fn close_at_eof(&mut self) {
        self.record_cut();
        let end = self.end;
        let mut noted = false;
        while let Some(f) = self.stack.last().copied() {
            if f.kind == Kind::Wrapper && f.count == 0 {
                // `ObjectId(` cut before its value holds nothing: it goes, and its parent
                // is left waiting for the value (an object's key gets `null` below).
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
                let at = if f.state == State::Colon { f.key_end } else { end };
                let text = if f.state == State::Colon { ": null" } else { " null" };
                self.edits.insert(at, text, Some(K::TruncatedKey));
                let f2 = self.top();
                f2.state = State::Next;
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

    /// The input ended with frames open: decide whether it was evidently cut, find the
    /// values that touch the cut, and report them.
    #[cold]
    pub(super) fn record_cut(&mut self) {
        let token = self.cut_token.take();
        self.record_cut_with(token, true);
    }

    /// As [`Parser::record_cut`], for `token` (finished as a value when `done`).
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
                // A value cut to nothing in an object leaves its key, with `null`.
                let kept = kept || (top.kind == Kind::Object && kind != UncertainKind::Key);
                if kind != UncertainKind::Key {
                    let index = if kept && done { top.count.saturating_sub(1) } else { top.count };
                    self.push_segment(&mut path, top, index);
                }
                uncertain.push(Uncertain { kind, span: Span::new(start, end), pointer: path, kept });
            }
            None if top.kind == Kind::Object && matches!(top.state, State::Colon | State::Value) => {
                self.push_segment(&mut path, top, 0);
                let span = Span::new(self.key_start(top), end);
                uncertain.push(Uncertain { kind: UncertainKind::Key, span, pointer: path, kept: true });
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

    /// The input ended inside a top-level string: the whole value is uncertain.
    #[cold]
    pub(super) fn record_top_cut(&mut self, open: usize) {
        let span = Span::new(open, self.end);
        self.edits.note(open, self.end, UncertainKind::String.fix_kind());
        let uncertain = vec![Uncertain { kind: UncertainKind::String, span, pointer: String::new(), kept: true }];
        self.cut = Some(Truncation { at: self.end, evident: true, uncertain });
    }

    /// Where the last key of object frame `f` starts, found back from its end (only at a
    /// cut, so the hot path keeps no record of it): the matching quote of a quoted key, the
    /// first character of an unquoted one.
    pub(super) fn key_start(&self, f: Frame) -> usize {
        let (b, floor, end) = (self.b, f.open + 1, f.key_end);
        let Some(&last) = b.get(end.wrapping_sub(1)).filter(|_| end > floor) else { return end };
        if matches!(last, b'"' | b'\'' | b'`') {
            let mut k = end - 1;
            while k > floor {
                k -= 1;
                let escaped = b[floor..k].iter().rev().take_while(|&&c| c == b'\\').count() % 2 == 1;
                if b[k] == last && !escaped {
                    return k;
                }
            }
            return floor;
        }
        let mut k = end;
        while k > floor && (is_ident(b[k - 1]) || b[k - 1] == b'\\' || b[k - 1] >= 0x80) {
            k -= 1;
        }
        k
    }

    /// Append to `path` the step into frame `f`'s current member (element `index` of an
    /// array).
    pub(super) fn push_segment(&self, path: &mut String, f: Frame, index: usize) {
        match f.kind {
            Kind::Object => {
                let raw = self.src.get(self.key_start(f)..f.key_end).unwrap_or("");
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
