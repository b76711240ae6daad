//! DeepSeek V3: `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>N\n```json\n{...}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>`.
//!
//! DeepSeek V3.1 uses the same tokens with `N<｜tool▁sep｜>{...}`; both share this reader,
//! which labels each call by its shape; each format (`parse_v3`, `parse_v31`) claims a
//! section whose first call has its shape. Tokens are accepted with the full-width `｜` or
//! ASCII `|`. Missing per-call markers, a missing section end and calls cut off at the
//! end keep what was given (the JSON is returned as written; the driver salvages it).

use super::Format;
use super::json::scan::{End, value_end};
use super::parsed::{Cx, Parsed, RawCall};
use super::text::{clean_name, skip_ws};
use crate::span::Span;
use std::borrow::Cow;

/// Start markers: the section, or a call when the section marker is missing. R1 and its
/// distills also write the section token with `_`, spaces or `\_` for `▁`, or as
/// `<｜tool▁calls｜>` (llama.cpp accepts the same variants).
pub(crate) const MARKERS: &[&str] = &[
    "<｜tool▁calls▁begin｜>",
    "<|tool▁calls▁begin|>",
    "<｜tool▁call▁begin｜>",
    "<|tool▁call▁begin|>",
    "<｜tool_calls_begin｜>",
    "<｜tool calls begin｜>",
    "<｜tool\\_calls\\_begin｜>",
    "<｜tool▁calls｜>",
    "<|tool_calls_begin|>",
    "<|tool calls begin|>",
];

/// The end-of-sentence token R1 leaves after its calls: dropped from the prose.
pub(crate) const END_OF_SENTENCE: &[&str] = &["<｜end▁of▁sentence｜>", "<|end▁of▁sentence|>"];

/// DeepSeek's tool-output markers, dropped from the prose (their text is kept).
pub(crate) const TOOL_OUTPUTS: &[&str] =
    &["<｜tool▁outputs▁begin｜>", "<｜tool▁outputs▁end｜>", "<｜tool▁output▁begin｜>", "<｜tool▁output▁end｜>"];

/// Parses a DeepSeek V3 section (first call `function<｜tool▁sep｜>N` + fenced JSON) at `at`.
pub(crate) fn parse_v3<'a>(text: &'a str, at: usize, cx: &Cx<'_>) -> Option<Parsed<'a>> {
    parse_deepseek(text, at, cx, Format::DeepseekV3)
}

/// Parses a DeepSeek V3.1 section (first call `N<｜tool▁sep｜>{json}`) at `at`.
pub(crate) fn parse_v31<'a>(text: &'a str, at: usize, cx: &Cx<'_>) -> Option<Parsed<'a>> {
    parse_deepseek(text, at, cx, Format::DeepseekV31)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tok {
    CallsBegin,
    CallsEnd,
    CallBegin,
    CallEnd,
    Sep,
}

/// The DeepSeek token at `pos`, and the position after it. Words are separated by `▁`
/// (or `_`, a space, `\_`); `<｜tool▁calls｜>` opens a section too.
fn tok_at(text: &str, pos: usize) -> Option<(Tok, usize)> {
    let rest = text.get(pos..)?.strip_prefix('<')?;
    let inner = rest.strip_prefix('｜').or_else(|| rest.strip_prefix('|'))?;
    let inner = inner.strip_prefix("tool")?;
    let (tok, after) = if let Some(after) = word(inner, "sep") {
        (Tok::Sep, after)
    } else if let Some(after) = word(inner, "calls") {
        match word(after, "begin") {
            Some(after) => (Tok::CallsBegin, after),
            None => match word(after, "end") {
                Some(after) => (Tok::CallsEnd, after),
                None => (Tok::CallsBegin, after),
            },
        }
    } else if let Some(after) = word(inner, "call") {
        match word(after, "begin") {
            Some(after) => (Tok::CallBegin, after),
            None => (Tok::CallEnd, word(after, "end")?),
        }
    } else {
        return None;
    };
    let after = after.strip_prefix('｜').or_else(|| after.strip_prefix('|'))?;
    let after = after.strip_prefix('>')?;
    Some((tok, text.len() - after.len()))
}

/// `text` after a word separator and `w`.
fn word<'t>(text: &'t str, w: &str) -> Option<&'t str> {
    let after = ["▁", "_", " ", "\\_"].iter().find_map(|s| text.strip_prefix(s))?;
    after.strip_prefix(w)
}

/// The next token at or after `from`: its start, kind and end.
fn next_tok(text: &str, from: usize) -> Option<(usize, Tok, usize)> {
    let mut pos = from;
    loop {
        let lt = pos + text.get(pos..)?.find('<')?;
        if let Some((tok, end)) = tok_at(text, lt) {
            return Some((lt, tok, end));
        }
        pos = lt + 1;
    }
}

/// Parses a section at `at` if its first call has the shape of `format`.
fn parse_deepseek<'a>(text: &'a str, at: usize, _cx: &Cx<'_>, format: Format) -> Option<Parsed<'a>> {
    let mut pos = match tok_at(text, at)? {
        (Tok::CallsBegin, end) => end,
        (Tok::CallBegin, _) => at,
        _ => return None,
    };
    let mut calls = Vec::new();
    let mut end = pos;
    loop {
        let p = skip_ws(text, pos);
        let (body_start, call_start) = match tok_at(text, p) {
            Some((Tok::CallsEnd, after)) => {
                end = after;
                break;
            }
            Some((Tok::CallBegin, after)) => (after, p),
            Some(_) => break,
            // Per-call markers missing: `N<｜tool▁sep｜>...` right in the section.
            None if !calls.is_empty() || p >= text.len() => break,
            None => (p, p),
        };
        let Some((sep, Tok::Sep, after_sep)) = next_tok(text, body_start) else {
            // Cut off before the separator, or no separator: nothing usable.
            if body_start == p {
                return None;
            }
            end = text.len();
            break;
        };
        let (body_end, after, at_end) = match next_tok(text, after_sep) {
            Some((i, Tok::CallEnd, e)) => (i, e, false),
            Some((i, _, _)) => (i, i, false),
            None => (text.len(), text.len(), true),
        };
        let header = text.get(body_start..sep).unwrap_or("");
        let body = text.get(after_sep..body_end).unwrap_or("");
        if body.contains("<steptml:") {
            // Step-3 writes the same tokens (with `_`) around its `<steptml:invoke>`.
            return None;
        }
        calls.extend(call(header, body, Span::new(call_start, after), at_end));
        end = after;
        pos = after;
    }
    if calls.first().map(|c: &RawCall<'_>| c.format) != Some(format) {
        return None;
    }
    Some(Parsed::new(end, calls))
}

/// One call from the text before and after `<｜tool▁sep｜>`; `at_end` when the text ended
/// in its body (its arguments are then cut unless they are a complete JSON value).
fn call<'a>(header: &'a str, body: &'a str, span: Span, at_end: bool) -> Option<RawCall<'a>> {
    let (format, name, args) = if header.trim() == "function" {
        let body = body.trim_start();
        let line_end = body.find('\n').unwrap_or(body.len());
        let name = body.get(..line_end)?;
        (Format::DeepseekV3, name, body.get(line_end..)?)
    } else {
        (Format::DeepseekV31, header, body)
    };
    let name = clean_name(name)?;
    let args = strip_fence(args.trim());
    let cut = at_end && (args.is_empty() || value_end(args, 0) != Some(End::Closed(args.len())));
    let args = if args.is_empty() { "{}" } else { args };
    Some(RawCall::new(Cow::Borrowed(name), Cow::Borrowed(args), format, span).cut_if(cut))
}

/// The text inside a ```json fence (the closing fence may be missing).
fn strip_fence(text: &str) -> &str {
    let Some(inner) = text.strip_prefix("```") else {
        return text;
    };
    let inner = inner.strip_prefix("json").unwrap_or(inner);
    let inner = inner.trim_end();
    inner.strip_suffix("```").unwrap_or(inner).trim()
}
