//! One pass over a text that pairs JSON brackets, shared by every JSON-in-prose candidate
//! of a scan, so that a reply full of unclosed `{"name": ...` costs one pass, not one pass
//! per brace.
//!
//! The pass starts at the first candidate asked about. At depth 0 only brackets matter (a
//! `"` in prose does not open a string); inside a container, strings are JSON strings. Any
//! closer closes the innermost opener, as in `json::scan::value_end`, whose answer this
//! gives for every opener the pass saw. Openers
//! nested deeper than the cap are counted but not recorded (no JSON call is that deep),
//! so the pass holds bounded state.

/// Where a candidate's bracket closes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Extent {
    /// One past its closer.
    Closed(usize),
    /// The text ends first.
    Open,
    /// Not an opener for the pass (inside a JSON string of an enclosing container, or
    /// nested deeper than the cap).
    NotOpener,
}

/// The bytes the pass looks at outside strings.
static MATTERS: [bool; 256] = {
    let mut t = [false; 256];
    t[b'{' as usize] = true;
    t[b'[' as usize] = true;
    t[b'}' as usize] = true;
    t[b']' as usize] = true;
    t[b'"' as usize] = true;
    t
};

/// The pass, advanced lazily as far as the questions need.
#[derive(Clone, Debug, Default)]
pub(crate) struct Brackets {
    /// The pass has started (at the first candidate asked about).
    started: bool,
    pos: usize,
    /// Indexes into `pairs` of the open openers, innermost last.
    stack: Vec<usize>,
    /// Openers past the depth cap, not recorded.
    excess: usize,
    in_string: bool,
    escaped: bool,
    /// Every opener recorded, in text order: its position and one past its closer
    /// (`None` while open).
    pairs: Vec<(usize, Option<usize>)>,
    /// Entries of `pairs` dropped by `rebase` (stack indexes count them).
    dropped: usize,
}

impl Brackets {
    /// The extent of the bracket at `q`; `None` when the text so far ends before it closes
    /// and more may come (`is_final` false). Openers nested deeper than `max_depth` are
    /// not recorded.
    pub(crate) fn extent(&mut self, text: &str, q: usize, is_final: bool, max_depth: usize) -> Option<Extent> {
        if !self.started {
            self.started = true;
            self.pos = q;
        }
        self.advance(text, Some(q), text.len(), max_depth);
        match self.pair(q) {
            // (The pass may have seen a longer text before: a closer past this text's end
            // does not close it here.)
            Some((_, Some(end))) if *end <= text.len() => Some(Extent::Closed(*end)),
            Some(_) if is_final => Some(Extent::Open),
            Some(_) => None,
            None if q < self.pos => Some(Extent::NotOpener),
            None => None,
        }
    }

    /// The opener recorded at `q` (with one past its closer, once closed).
    fn pair(&self, q: usize) -> Option<&(usize, Option<usize>)> {
        let i = self.pairs.binary_search_by_key(&q, |(open, _)| *open).ok()?;
        self.pairs.get(i)
    }

    /// Scan until the opener at `q` is passed and closed, or `to` (or the text) ends.
    fn advance(&mut self, text: &str, q: Option<usize>, to: usize, max_depth: usize) {
        let bytes = text.as_bytes();
        let to = to.min(bytes.len());
        while self.pos < to {
            if let Some(q) = q
                && self.pos > q
                && !matches!(self.pair(q), Some((_, None)))
            {
                return;
            }
            // Skip what cannot matter: in a string, to its quote or a backslash; outside,
            // to the next bracket (or quote, inside a container).
            let rest = bytes.get(self.pos..to).unwrap_or_default();
            let skip = if self.in_string && !self.escaped {
                memchr::memchr2(b'"', b'\\', rest)
            } else if self.in_string {
                Some(0)
            } else {
                rest.iter().position(|b| MATTERS[usize::from(*b)])
            };
            let Some(skip) = skip else {
                self.pos = to;
                return;
            };
            self.pos += skip;
            let Some(&b) = bytes.get(self.pos) else { return };
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
                        if self.stack.len() >= max_depth {
                            self.excess += 1;
                        } else {
                            self.stack.push(self.dropped + self.pairs.len());
                            self.pairs.push((self.pos, None));
                        }
                    }
                    b'}' | b']' => {
                        if self.excess > 0 {
                            self.excess -= 1;
                        } else if let Some(open) = self.stack.pop()
                            && let Some(pair) = open.checked_sub(self.dropped).and_then(|i| self.pairs.get_mut(i))
                        {
                            pair.1 = Some(self.pos + 1);
                        }
                    }
                    b'"' if !self.stack.is_empty() || self.excess > 0 => self.in_string = true,
                    _ => {}
                }
            }
            self.pos += 1;
        }
    }

    /// The text before `by` is dropped: read it to the end first, then shift every
    /// position down by `by` and forget the openers before it (never asked about again).
    pub(crate) fn rebase(&mut self, text: &str, by: usize, max_depth: usize) {
        if !self.started {
            return;
        }
        self.advance(text, None, by, max_depth);
        self.pos = self.pos.saturating_sub(by);
        let gone = self.pairs.partition_point(|(open, _)| *open < by);
        self.pairs.drain(..gone);
        self.dropped += gone;
        for (open, close) in &mut self.pairs {
            *open -= by;
            *close = close.map(|c| c.saturating_sub(by));
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
                match b.extent(t, i, true, 128).unwrap() {
                    Extent::Closed(e) => assert_eq!(value_end(t, i), Some(End::Closed(e)), "{i}"),
                    Extent::Open => assert_eq!(value_end(t, i), Some(End::Open), "{i}"),
                    Extent::NotOpener => assert!(t[..i].ends_with("\"}")),
                }
            }
        }
    }

    #[test]
    fn rebased_answers_agree_and_depth_is_capped() {
        let t = "{{ prose } {\"a\": [1]} tail";
        let mut whole = Brackets::default();
        let mut cut = Brackets::default();
        assert_eq!(cut.extent(t, 0, false, 128), None);
        cut.rebase(t, 10, 128);
        let rest = &t[10..];
        assert_eq!(cut.extent(rest, 1, true, 128), Some(Extent::Closed(11)));
        assert_eq!(whole.extent(t, 11, true, 128), Some(Extent::Closed(21)));
        let deep = "[[[[{}]]]]";
        let mut capped = Brackets::default();
        assert_eq!(capped.extent(deep, 1, true, 2), Some(Extent::Closed(9)));
        assert_eq!(capped.extent(deep, 4, true, 2), Some(Extent::NotOpener));
    }
}
