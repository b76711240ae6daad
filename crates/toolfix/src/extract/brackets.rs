//! One pass over a text that pairs JSON brackets, shared by every JSON-in-prose candidate
//! of a scan, so that a reply full of unclosed `{"name": ...` costs one pass, not one pass
//! per brace.
//!
//! At depth 0 only brackets matter (a `"` in prose does not open a string); inside a
//! container, strings are JSON strings. Any closer closes the innermost opener, as in
//! `json::scan::value_end`, whose answer this gives for every opener the pass saw.

use std::collections::HashMap;

/// Where a candidate's bracket closes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Extent {
    /// One past its closer.
    Closed(usize),
    /// The text ends first.
    Open,
    /// Not an opener for the pass (it is inside a JSON string of an enclosing container).
    NotOpener,
}

/// The pass, advanced lazily as far as the questions need.
#[derive(Clone, Debug, Default)]
pub(crate) struct Brackets {
    pos: usize,
    stack: Vec<usize>,
    in_string: bool,
    escaped: bool,
    /// Opener position -> one past its closer (`None` while open).
    pairs: HashMap<usize, Option<usize>>,
}

impl Brackets {
    /// The extent of the bracket at `q`; `None` when the text so far ends before it closes
    /// and more may come (`is_final` false).
    pub(crate) fn extent(&mut self, text: &str, q: usize, is_final: bool) -> Option<Extent> {
        self.advance(text, q);
        match self.pairs.get(&q) {
            // (The pass may have seen a longer text before: a closer past this text's end
            // does not close it here.)
            Some(Some(end)) if *end <= text.len() => Some(Extent::Closed(*end)),
            Some(_) if is_final => Some(Extent::Open),
            Some(_) => None,
            None if q < self.pos => Some(Extent::NotOpener),
            None => None,
        }
    }

    /// Scan until the opener at `q` is passed and closed, or the text ends.
    fn advance(&mut self, text: &str, q: usize) {
        let bytes = text.as_bytes();
        while let Some(&b) = bytes.get(self.pos) {
            if self.pos > q && !matches!(self.pairs.get(&q), Some(None)) {
                return;
            }
            if self.in_string {
                if self.escaped {
                    self.escaped = false;
                } else if b == b'\\' {
                    self.escaped = true;
                } else if b == b'"' {
                    self.in_string = false;
                }
            } else {
                match b {
                    b'{' | b'[' => {
                        self.stack.push(self.pos);
                        self.pairs.insert(self.pos, None);
                    }
                    b'}' | b']' => {
                        if let Some(open) = self.stack.pop() {
                            self.pairs.insert(open, Some(self.pos + 1));
                        }
                    }
                    b'"' if !self.stack.is_empty() => self.in_string = true,
                    _ => {}
                }
            }
            self.pos += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::json::scan::{End, value_end};

    #[test]
    fn agrees_with_value_end() {
        let t = r#"say "hi" {"a": "}{", "b": [1, {"c": 2}]} and { "x": "y" [ {"name": "#;
        let mut b = Brackets::default();
        for (i, c) in t.char_indices() {
            if c == '{' || c == '[' {
                match b.extent(t, i, true).unwrap() {
                    Extent::Closed(e) => assert_eq!(value_end(t, i), Some(End::Closed(e)), "{i}"),
                    Extent::Open => assert_eq!(value_end(t, i), Some(End::Open), "{i}"),
                    Extent::NotOpener => assert!(t[..i].ends_with("\"}")),
                }
            }
        }
    }
}
