//! Lenient JSON: recover the value a model meant from almost-JSON, and report every fix.
//!
//! [`salvage`] takes text and returns the repaired JSON **text** — numbers, key order,
//! escapes and non-ASCII text exactly as written — with one [`TextFix`] per repair, each
//! with a [`Span`](crate::span::Span) into the original. Text that is already strict JSON comes
//! back borrowed and untouched, with no fixes (the one exception: a lone UTF-16 surrogate
//! escape such as `"\ud800"`, which no Rust string can hold, becomes U+FFFD with a
//! [`FixKind::LoneSurrogate`] fix).
//!
//! ```
//! use toolfix::salvage::{salvage, FixKind};
//!
//! let out = salvage("```json\n{'city': 'Paris', 'days': 3,}\n```").unwrap();
//! assert_eq!(out.text(), r#"{"city": "Paris", "days": 3}"#);
//! let kinds: Vec<_> = out.fixes().iter().map(|f| f.kind).collect();
//! assert!(kinds.contains(&FixKind::CodeFence));
//! assert!(kinds.contains(&FixKind::SingleQuotes));
//! assert!(kinds.contains(&FixKind::TrailingComma));
//!
//! // Valid input is returned as it is.
//! let valid = salvage(r#"{"n": 1.0, "big": 12345678901234567890}"#).unwrap();
//! assert!(valid.is_untouched());
//! assert_eq!(valid.text(), r#"{"n": 1.0, "big": 12345678901234567890}"#);
//! ```
//!
//! # Truncation
//!
//! Output cut off by a token limit is closed: open strings, arrays and objects are closed,
//! an incomplete number or literal is cut back rather than guessed, and a member whose value
//! the cut left missing or cut to nothing (`{"a":`, `{"a": tr`) is left out, key and all,
//! as a cut key is: nothing the model did not write, such as `null`, stands in for it. [`Salvaged::truncation`] then says how the text ended:
//!
//! - **evidently cut** ([`Truncation::is_evident`]) when it ends inside a token (string,
//!   number, literal, key), right after `,` or `:`, or right after an opening bracket
//!   (`{"ids": [` is not an empty list); or
//! - **only closers missing** when it ends right after a complete value (models often drop
//!   the last brace).
//!
//! Every value that touches the cut is **uncertain** ([`Truncation::uncertain`], with kind,
//! span and JSON pointer): a string cut off, a number (`7` may be `70`; `7.`, `-`, `1e`), a
//! literal (`tr`, `fal`, `nu`), a key cut off or a member left without its value (both
//! left out), and each array or object left open below the top level. When the text is evidently cut they are also reported in the
//! fixes ([`FixKind::UncertainNumber`] and the like). The call pipeline refuses a cut call
//! to a tool that may change things, and treats "only closers missing" as cut too when
//! the caller says the output hit the token limit
//! ([`CallOptions::hit_token_limit`](crate::CallOptions)).
//!
//! # Duplicate keys
//!
//! `{"a": 1, "a": 2}` is legal JSON, but parsers disagree on which value wins.
//! [`duplicate_keys`] lists every key given twice in strict JSON text; the call pipeline
//! refuses tool arguments that give one key different values.
//!
//! # Untrusted input
//!
//! Input longer than [`Limits::max_input_bytes`](crate::limits::Limits) is refused before parsing;
//! nesting deeper than [`Limits::max_depth`](crate::limits::Limits) is an error. The parser keeps
//! an explicit stack, runs in time linear in the input, and does not panic.

mod document;
mod dupes;
mod edits;
mod lex;
mod parser;
mod small;
mod strict;

pub(crate) use dupes::parse_value;
pub use dupes::{DuplicateKey, duplicate_keys};
pub(crate) use strict::unclosed;
// The fix and truncation types live in `report` (every stage reports through it); they
// are re-exported here because `salvage`'s own results are written in them.
pub use crate::report::{FixKind, TextFix, Truncation, Uncertain, UncertainKind};

use crate::error::{Error, ErrorKind, Result};
use crate::limits::Limits;
use crate::pointer::scan::{lanes_equal, next_lane};
use std::borrow::Cow;

/// The result of [`salvage`]: repaired strict-JSON text and the fixes that made it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Salvaged<'a> {
    text: Cow<'a, str>,
    fixes: Vec<TextFix>,
    truncation: Option<Truncation>,
    /// Salvage saw every key and none repeats in its object: no duplicate-key report can
    /// find one.
    keys_unique: bool,
}

impl<'a> Salvaged<'a> {
    /// The repaired text: strict JSON (RFC 8259) that `serde_json` parses.
    #[must_use]
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The repaired text, borrowed from the input when nothing was fixed.
    #[must_use]
    pub fn into_text(self) -> Cow<'a, str> {
        self.text
    }

    /// [`Salvaged::into_text`] and the fixes, taken (not copied).
    pub(crate) fn into_text_and_fixes(self) -> (Cow<'a, str>, Vec<TextFix>) {
        (self.text, self.fixes)
    }

    /// Every fix made, in the order of their spans.
    #[must_use]
    pub fn fixes(&self) -> &[TextFix] {
        &self.fixes
    }

    /// True when the input was strict JSON and is returned byte for byte.
    #[must_use]
    pub fn is_untouched(&self) -> bool {
        self.fixes.is_empty()
    }

    /// True when the input was cut off before its end (any truncation fix).
    #[must_use]
    pub fn is_truncated(&self) -> bool {
        self.fixes.iter().any(|f| f.kind.is_truncation())
    }

    /// How the text ended, when it ended with something open (an array, an object or a
    /// string) that salvage closed: the cut position, whether the text shows that more was
    /// coming, and the values that touch the cut. `None` for text that was complete.
    #[must_use]
    pub fn truncation(&self) -> Option<&Truncation> {
        self.truncation.as_ref()
    }

    /// Every key given twice in one object of the repaired text, as
    /// [`duplicate_keys`]`(self.text())` finds them; free when salvage already saw that
    /// every key is given once (the strict pass of valid input compares the keys as it
    /// goes).
    ///
    /// ```
    /// let out = toolfix::salvage::salvage(r#"{'a': 1, 'a': 2}"#).unwrap();
    /// assert_eq!(out.duplicate_keys()[0].pointer, "/a");
    /// assert!(toolfix::salvage::salvage(r#"{"a": 1, "b": {"a": 2}}"#).unwrap().duplicate_keys().is_empty());
    /// ```
    #[must_use]
    pub fn duplicate_keys(&self) -> Vec<DuplicateKey> {
        if self.keys_unique { Vec::new() } else { duplicate_keys(&self.text) }
    }

    /// True when a string value was cut off mid-way ([`FixKind::TruncatedString`]).
    #[must_use]
    pub fn has_truncated_string(&self) -> bool {
        self.fixes.iter().any(|f| f.kind == FixKind::TruncatedString)
    }

    /// The repaired value.
    ///
    /// # Errors
    ///
    /// Only when a number is outside the range of `f64` (such as `1e400`), which JSON text
    /// allows but `serde_json::Value` cannot hold.
    pub fn to_value(&self) -> Result<serde_json::Value> {
        serde_json::from_str(&self.text)
            .map_err(|e| Error::new(ErrorKind::Syntax, format!("repaired JSON does not fit a value: {e}")))
    }
}

/// Salvage `input` with the default [`Limits`].
///
/// # Errors
///
/// When the input is empty, too large, too deep, or holds no JSON that can be recovered
/// without guessing. The error carries the byte offset, line, column and a caret excerpt.
pub fn salvage(input: &str) -> Result<Salvaged<'_>> {
    salvage_with(input, &Limits::default())
}

/// Salvage `input` under `limits`.
///
/// # Errors
///
/// As [`salvage`].
pub fn salvage_with<'a>(input: &'a str, limits: &Limits) -> Result<Salvaged<'a>> {
    if let Some(done) = checked(input, limits, &mut strict::Stacks::default()) {
        return done;
    }
    lenient(input, limits, &mut parser::Buffers::default())
}

/// [`salvage_with`] for many texts in turn: the vectors of the lenient parse are kept
/// between calls, so a batch allocates them once rather than for every text. Each call
/// gives what [`salvage_with`] gives.
///
/// ```
/// use toolfix::{Limits, salvage::Salvager};
///
/// let mut salvager = Salvager::new();
/// for text in ["{'a': 1}", "[1, 2,]", "{\"b\": true"] {
///     let out = salvager.salvage(text, &Limits::default()).unwrap();
///     assert_eq!(out.text(), toolfix::salvage::salvage(text).unwrap().text());
/// }
/// ```
#[derive(Debug, Default)]
pub struct Salvager {
    strict: strict::Stacks,
    buffers: parser::Buffers,
}

impl Salvager {
    /// A salvager with no buffers yet.
    #[must_use]
    pub fn new() -> Self {
        Salvager::default()
    }

    /// [`salvage_with`] `input` under `limits`, in this salvager's buffers.
    ///
    /// # Errors
    ///
    /// As [`salvage`].
    pub fn salvage<'a>(&mut self, input: &'a str, limits: &Limits) -> Result<Salvaged<'a>> {
        if let Some(done) = checked(input, limits, &mut self.strict) {
            return done;
        }
        lenient(input, limits, &mut self.buffers)
    }

    /// Take back an answer of this salvager once it has been used: its repaired text and
    /// fixes become the room for the next answer's, so a batch that hands each answer back
    /// allocates them once rather than for every text. (The salvager then holds the largest
    /// answer's room, as it holds the parser's vectors.) Answers are the same either way.
    ///
    /// ```
    /// use toolfix::{Limits, salvage::Salvager};
    ///
    /// let mut salvager = Salvager::new();
    /// for text in ["{'a': 1}", "[1, 2,]", "{\"b\": true"] {
    ///     let out = salvager.salvage(text, &Limits::default()).unwrap();
    ///     assert_eq!(out.text(), toolfix::salvage::salvage(text).unwrap().text());
    ///     salvager.recycle(out);
    /// }
    /// ```
    pub fn recycle(&mut self, salvaged: Salvaged<'_>) {
        if let Cow::Owned(text) = salvaged.text
            && text.capacity() > self.buffers.text.capacity()
        {
            self.buffers.text = text;
        }
        if salvaged.fixes.capacity() > self.buffers.fixes.capacity() {
            self.buffers.fixes = salvaged.fixes;
        }
    }
}

impl Salvager {
    /// [`Salvager::salvage`] for text a strict parse has just refused (the call pipeline's
    /// first read of the arguments): the strict fast path, which would refuse it again, is
    /// skipped. The result is the one [`salvage_with`] gives.
    pub(crate) fn salvage_refused<'a>(&mut self, input: &'a str, limits: &Limits) -> Result<Salvaged<'a>> {
        if input.len() > limits.max_input_bytes || input.trim().is_empty() {
            return self.salvage(input, limits);
        }
        lenient(input, limits, &mut self.buffers)
    }

    /// Let go of the buffers when together they hold more than `bytes` (a salvager kept for
    /// many texts holds the room of the largest one otherwise).
    pub(crate) fn keep_at_most(&mut self, bytes: usize) {
        if self.strict.footprint() + self.buffers.footprint() > bytes {
            *self = Salvager::default();
        }
    }
}

/// The answer of [`salvage_with`] before the lenient parse: an error for input too large
/// or empty, the input itself when it is strict JSON; `None` when the lenient parse is
/// needed.
fn checked<'a>(input: &'a str, limits: &Limits, stacks: &mut strict::Stacks) -> Option<Result<Salvaged<'a>>> {
    if input.len() > limits.max_input_bytes {
        return Some(Err(Error::new(
            ErrorKind::InputTooLarge,
            format!(
                "input is too large ({} bytes, limit {}, raise `--max-input-bytes`)",
                input.len(),
                limits.max_input_bytes
            ),
        )));
    }
    if input.trim().is_empty() {
        return Some(Err(Error::new(ErrorKind::EmptyInput, "input is empty")));
    }
    // Strict fast path: valid text comes back borrowed (a lone surrogate escape, which no
    // Rust string can hold, goes to the lenient parser, which replaces it).
    if let Some(strict) = strict::check_in(input, limits.max_depth, stacks) {
        let keys_unique = !strict.keys_may_repeat;
        return Some(Ok(Salvaged { text: Cow::Borrowed(input), fixes: Vec::new(), truncation: None, keys_unique }));
    }
    None
}

/// The lenient parse of [`salvage_with`], past its size and strict checks, in the vectors
/// of `buffers`.
fn lenient<'a>(input: &'a str, limits: &Limits, buffers: &mut parser::Buffers) -> Result<Salvaged<'a>> {
    let mut edits = document::parse(input, limits.max_depth, true, buffers)?;
    if edits.is_empty() {
        buffers.edits = edits.into_buffer();
        return Ok(Salvaged { text: Cow::Borrowed(input), fixes: Vec::new(), truncation: None, keys_unique: false });
    }
    let truncation = edits.cut.take();
    let keys_unique = edits.keys_unique;
    let (mut text, mut fixes) = (std::mem::take(&mut buffers.text), std::mem::take(&mut buffers.fixes));
    edits.finish_into(input, &mut text, &mut fixes);
    buffers.edits = edits.into_buffer();
    if text.trim().is_empty() {
        (buffers.text, buffers.fixes) = (text, fixes);
        return Err(Error::new(ErrorKind::NoJson, "no JSON value found"));
    }
    Ok(Salvaged { text: Cow::Owned(text), fixes, truncation, keys_unique })
}

/// `json` without whitespace outside strings: one line, ready to embed in JSON Lines.
///
/// The input must be strict JSON (such as [`Salvaged::text`]); strings, numbers and key
/// order are copied as they are.
///
/// ```
/// assert_eq!(toolfix::salvage::compact("{ \"a\" : [1, 2.0],\n \"b c\": \"x y\" }"), r#"{"a":[1,2.0],"b c":"x y"}"#);
/// ```
#[must_use]
pub fn compact(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    compact_into(&mut out, json);
    out
}

/// [`compact`], appended to `out` (no string of its own: for writers that reuse a buffer).
///
/// ```
/// let mut line = String::from("{\"output\":");
/// toolfix::salvage::compact_into(&mut line, "[1, 2]");
/// assert_eq!(line, r#"{"output":[1,2]"#);
/// ```
pub fn compact_into(out: &mut String, json: &str) {
    let b = json.as_bytes();
    let mut copied = 0;
    let mut i = 0;
    // Outside strings the runs between stops are short (a key's colon, a number): a byte
    // at a time; strings are skipped a word at a time.
    while let Some(&c) = b.get(i) {
        if c > b'"' {
            i += 1;
        } else if c == b'"' {
            // A string: copied as it is, up to its closing quote (escapes skipped).
            i += 1;
            loop {
                i = next_lane(b, i, |x| lanes_equal(x, b'"') | lanes_equal(x, b'\\'));
                match b.get(i) {
                    Some(b'\\') => i += 2,
                    _ => break,
                }
            }
            i += 1;
        } else if lex::is_ws(c) {
            out.push_str(json.get(copied..i).unwrap_or(""));
            while b.get(i).is_some_and(|&c| lex::is_ws(c)) {
                i += 1;
            }
            copied = i;
        } else {
            i += 1;
        }
    }
    out.push_str(json.get(copied..).unwrap_or(""));
}

#[cfg(test)]
mod tests {
    use super::compact_into;
    use proptest::prelude::*;

    /// Compaction a byte at a time: what `compact_into` must write.
    fn compact_naive(json: &str) -> String {
        let b = json.as_bytes();
        let mut out = Vec::new();
        let mut in_string = false;
        let mut i = 0;
        while i < b.len() {
            let c = b[i];
            if in_string {
                out.push(c);
                if c == b'\\' {
                    out.extend(b.get(i + 1));
                    i += 1;
                } else if c == b'"' {
                    in_string = false;
                }
            } else if c == b'"' {
                in_string = true;
                out.push(c);
            } else if !matches!(c, b' ' | b'\t' | b'\n' | b'\r') {
                out.push(c);
            }
            i += 1;
        }
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn compaction_a_word_at_a_time_is_compaction_a_byte_at_a_time() {
        let texts = [
            "{ \"a\" : [1, 2.0],\n \"b c\": \"x y\" }",
            "[\"q\\\" \\\\\", 1 ]",
            " \"a long string with spaces, longer than a word\"\t,\r\n\"é 👩‍💻 \\\"\" ",
            "\"open \\",
            "\u{1}\u{1f} \u{7f}\u{80} é",
        ];
        for text in texts {
            for end in (0..=text.len()).filter(|&e| text.is_char_boundary(e)) {
                let mut out = String::from("x");
                compact_into(&mut out, &text[..end]);
                assert_eq!(out, format!("x{}", compact_naive(&text[..end])), "{:?}", &text[..end]);
            }
        }
    }

    proptest! {
        #[test]
        fn compaction_agrees_with_a_byte_loop(text in "[ \t\r\n\"\\\\a{}:,é\u{1}]{0,40}") {
            let mut out = String::new();
            compact_into(&mut out, &text);
            prop_assert_eq!(out, compact_naive(&text));
        }
    }
}
