//! Byte spans into the original text.

use std::fmt;
use std::ops::Range;

/// A half-open byte range `start..end` into the text a stage was given.
///
/// Every fix and every extracted call carries one, so the original text is always
/// recoverable from a report.
///
/// ```
/// use toolfix::Span;
/// let s = Span::new(2, 5);
/// assert_eq!(&"a {b} c"[s.range()], "{b}");
/// assert_eq!(s.len(), 3);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Span {
    /// First byte of the span.
    pub start: usize,
    /// One past the last byte of the span.
    pub end: usize,
}

impl Span {
    /// A span from `start` to `end` (half-open).
    #[must_use]
    pub const fn new(start: usize, end: usize) -> Self {
        Span { start, end }
    }

    /// An empty span at `at`: where text was inserted.
    #[must_use]
    pub const fn at(at: usize) -> Self {
        Span { start: at, end: at }
    }

    /// Length in bytes.
    #[must_use]
    pub const fn len(self) -> usize {
        self.end.saturating_sub(self.start)
    }

    /// True when the span covers no byte (an insertion point).
    #[must_use]
    pub const fn is_empty(self) -> bool {
        self.end <= self.start
    }

    /// The span as a `Range` for slicing.
    #[must_use]
    pub const fn range(self) -> Range<usize> {
        self.start..self.end
    }

    /// The span moved right by `offset` bytes (for text found inside a larger text).
    #[must_use]
    pub const fn shift(self, offset: usize) -> Self {
        Span { start: self.start + offset, end: self.end + offset }
    }
}

impl From<Range<usize>> for Span {
    fn from(r: Range<usize>) -> Self {
        Span { start: r.start, end: r.end }
    }
}

impl fmt::Display for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}..{}", self.start, self.end)
    }
}

impl serde::Serialize for Span {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeTuple;
        let mut t = s.serialize_tuple(2)?;
        t.serialize_element(&self.start)?;
        t.serialize_element(&self.end)?;
        t.end()
    }
}

/// Line and column (both 1-based, column in characters) of byte `offset` in `text`.
///
/// Only for the error path: it scans the text up to `offset`.
#[must_use]
pub(crate) fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let offset = floor_char_boundary(text, offset.min(text.len()));
    let before = &text[..offset];
    let line = before.bytes().filter(|&b| b == b'\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() + 1;
    (line, column)
}

/// The largest char boundary of `text` at or below `i`.
#[must_use]
pub(crate) fn floor_char_boundary(text: &str, i: usize) -> usize {
    let mut i = i.min(text.len());
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The smallest char boundary of `text` at or above `i` (`text.len()` past the end).
#[must_use]
pub(crate) fn ceil_char_boundary(text: &str, i: usize) -> usize {
    let mut i = i.min(text.len());
    while !text.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// `text` cut to at most `max` bytes on a char boundary, with `…` added when cut.
#[must_use]
pub(crate) fn shorten(text: &str, max: usize) -> std::borrow::Cow<'_, str> {
    if text.len() <= max {
        return std::borrow::Cow::Borrowed(text);
    }
    let cut = floor_char_boundary(text, max.saturating_sub(3));
    std::borrow::Cow::Owned(format!("{}…", &text[..cut]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_column_counts_chars() {
        assert_eq!(line_column("ab\ncé d", 7), (2, 4));
        assert_eq!(line_column("", 5), (1, 1));
    }

    #[test]
    fn shorten_keeps_char_boundaries() {
        assert_eq!(shorten("ééééé", 6), "é…");
        assert_eq!(shorten("abc", 6), "abc");
    }
}
