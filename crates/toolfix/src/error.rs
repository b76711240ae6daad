//! The library's one error type.

use crate::span::{floor_char_boundary, line_column};
use std::fmt;

/// A `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What went wrong, for callers that dispatch on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The input was empty or only whitespace.
    EmptyInput,
    /// The input is longer than [`Limits::max_input_bytes`](crate::limits::Limits).
    InputTooLarge,
    /// Arrays and objects nest deeper than [`Limits::max_depth`](crate::limits::Limits).
    TooDeep,
    /// No JSON value could be found or recovered in the input.
    NoJson,
    /// The text holds JSON that cannot be recovered without guessing.
    Syntax,
    /// A tool definition is malformed or its schema does not compile.
    ToolDefinition,
    /// A value does not fit the Rust type it is bound to.
    Bind,
}

impl ErrorKind {
    /// A stable `snake_case` name.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            ErrorKind::EmptyInput => "empty_input",
            ErrorKind::InputTooLarge => "input_too_large",
            ErrorKind::TooDeep => "too_deep",
            ErrorKind::NoJson => "no_json",
            ErrorKind::Syntax => "syntax",
            ErrorKind::ToolDefinition => "tool_definition",
            ErrorKind::Bind => "bind",
        }
    }
}

/// The error of every fallible `toolfix` function: a kind, a message and, for errors
/// in text, where (byte offset, line, column, and an excerpt with a caret).
///
/// One pointer wide; the details live behind a `Box`.
///
/// ```
/// let err = toolfix::salvage::salvage("]").unwrap_err();
/// assert_eq!(err.kind(), toolfix::ErrorKind::NoJson);
/// assert_eq!(err.offset(), Some(0));
/// assert_eq!((err.line(), err.column()), (Some(1), Some(1)));
/// ```
pub struct Error {
    inner: Box<Inner>,
}

#[derive(Debug)]
struct Inner {
    kind: ErrorKind,
    message: String,
    hint: Option<String>,
    at: Option<Location>,
}

#[derive(Debug)]
struct Location {
    offset: usize,
    line: usize,
    column: usize,
    excerpt: String,
}

impl Error {
    /// An error at no particular place.
    #[cold]
    pub(crate) fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error { inner: Box::new(Inner { kind, message: message.into(), hint: None, at: None }) }
    }

    /// An error at byte `offset` of `text`.
    #[cold]
    pub(crate) fn at(kind: ErrorKind, message: impl Into<String>, text: &str, offset: usize) -> Self {
        let offset = floor_char_boundary(text, offset);
        let (line, column) = line_column(text, offset);
        let excerpt = caret_excerpt(text, offset, line);
        let mut e = Error::new(kind, message);
        e.inner.at = Some(Location { offset, line, column, excerpt });
        e
    }

    /// This error with a hint on how to fix the input.
    #[cold]
    #[must_use]
    pub(crate) fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.inner.hint = Some(hint.into());
        self
    }

    /// What went wrong.
    #[must_use]
    pub fn kind(&self) -> ErrorKind {
        self.inner.kind
    }

    /// The message, without location or hint.
    #[must_use]
    pub fn message(&self) -> &str {
        &self.inner.message
    }

    /// A concrete suggestion for fixing the input, when there is one.
    #[must_use]
    pub fn hint(&self) -> Option<&str> {
        self.inner.hint.as_deref()
    }

    /// Byte offset into the input, for errors in text.
    #[must_use]
    pub fn offset(&self) -> Option<usize> {
        self.inner.at.as_ref().map(|l| l.offset)
    }

    /// 1-based line, for errors in text.
    #[must_use]
    pub fn line(&self) -> Option<usize> {
        self.inner.at.as_ref().map(|l| l.line)
    }

    /// 1-based column in characters, for errors in text.
    #[must_use]
    pub fn column(&self) -> Option<usize> {
        self.inner.at.as_ref().map(|l| l.column)
    }

    /// The input line with a caret under the error, for errors in text.
    #[must_use]
    pub fn excerpt(&self) -> Option<&str> {
        self.inner.at.as_ref().map(|l| l.excerpt.as_str())
    }

    /// The whole report: message with position, the caret excerpt and the hint, on
    /// several lines.
    #[must_use]
    pub fn report(&self) -> String {
        let mut out = self.to_string();
        if let Some(ex) = self.excerpt() {
            out.push('\n');
            out.push_str(ex);
        }
        if let Some(h) = self.hint() {
            out.push_str("\nhint: ");
            out.push_str(h);
        }
        out
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.inner.message)?;
        if let Some(l) = &self.inner.at {
            write!(f, " at line {}, column {} (byte {})", l.line, l.column, l.offset)?;
        }
        Ok(())
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.inner, f)
    }
}

impl std::error::Error for Error {}

/// The line holding `offset`, cut to about 80 columns around it, with a caret below.
fn caret_excerpt(text: &str, offset: usize, line: usize) -> String {
    const WIDTH: usize = 60;
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[offset..].find('\n').map_or(text.len(), |i| offset + i);
    let mut start = line_start;
    let col_chars = text[line_start..offset].chars().count();
    if col_chars > WIDTH {
        // Keep the caret in view: start WIDTH/2 characters before it.
        let skip = col_chars - WIDTH / 2;
        start = text[line_start..offset].char_indices().nth(skip).map_or(offset, |(i, _)| line_start + i);
    }
    let mut end = line_end;
    let after = text[offset..line_end].chars().count();
    if after > WIDTH {
        end = text[offset..line_end].char_indices().nth(WIDTH).map_or(line_end, |(i, _)| offset + i);
    }
    let shown: String = text[start..end].chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    let gutter = line.to_string();
    let pad = " ".repeat(gutter.len());
    let lead = if start > line_start { "…" } else { "" };
    let tail = if end < line_end { "…" } else { "" };
    let caret_col = text[start..offset].chars().count() + lead.chars().count();
    format!("{pad} |\n{gutter} | {lead}{shown}{tail}\n{pad} | {}^", " ".repeat(caret_col))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_points_at_the_offset() {
        let e = Error::at(ErrorKind::Syntax, "unexpected `]`", "{\"a\": 1,\n  ]", 11).with_hint("remove the `]`");
        assert_eq!(
            e.report(),
            "unexpected `]` at line 2, column 3 (byte 11)\n  |\n2 |   ]\n  |   ^\nhint: remove the `]`"
        );
    }

    #[test]
    fn long_lines_are_cut_around_the_caret() {
        let text = format!("{}X{}", "a".repeat(200), "b".repeat(200));
        let e = Error::at(ErrorKind::Syntax, "bad", &text, 200);
        let ex = e.excerpt().unwrap_or_default().to_owned();
        assert!(ex.contains("…aaa"));
        assert!(ex.lines().all(|l| l.chars().count() < 140));
    }
}
