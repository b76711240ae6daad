//! MiniMax M2's plain-text call form, written when it leaves its native markup:
//!
//! ```text
//! [TOOL_CALL]
//! {tool => "search", args => {
//!   --query "rust async"
//!   --limit 5
//! }}
//! [/TOOL_CALL]
//! ```
//!
//! `args` holds command-line-style `--key value` lines (a value is a quoted string or the
//! rest of the line; typed through the schema) or a JSON object. Several `{tool => ...}`
//! may follow one another in a block. Only for a tool the request declared; a line that is
//! not `--key value`, or a block that does not close, is not a call (nothing guessed).

use super::Format;
use super::json::scan::{End, decode_string, value_end};
use super::params::{Args, Untyped};
use super::parsed::{Cx, Parsed, RawCall};
use super::text::{is_at, skip_ws};
use crate::span::Span;
use std::borrow::Cow;

const OPEN: &str = "[TOOL_CALL]";
const CLOSE: &str = "[/TOOL_CALL]";

/// Parses a `[TOOL_CALL]` block at `at`.
pub(crate) fn parse<'a>(text: &'a str, at: usize, cx: &Cx<'_>) -> Option<Parsed<'a>> {
    cx.tools?;
    if !is_at(text, at, OPEN) {
        return None;
    }
    let mut i = skip_ws(text, at + OPEN.len());
    let mut calls = Vec::new();
    while is_at(text, i, "{") && calls.len() < 64 {
        let (call, next) = one(text, i, cx)?;
        calls.push(call);
        i = skip_ws(text, next);
        if is_at(text, i, ",") {
            i = skip_ws(text, i + 1);
        }
    }
    if calls.is_empty() {
        return None;
    }
    let end = if is_at(text, i, CLOSE) { i + CLOSE.len() } else { i };
    Some(Parsed::new(end, calls))
}

/// `{tool => "N", args => {...}}` at `i`: the call and the position after its `}`.
fn one<'a>(text: &'a str, i: usize, cx: &Cx<'_>) -> Option<(RawCall<'a>, usize)> {
    let mut p = skip_ws(text, i + 1);
    p = arrow(text, p, "tool")?;
    let (name, after) = name_at(text, p)?;
    if !cx.tools.is_some_and(|t| t.is_known(name)) {
        return None;
    }
    p = skip_ws(text, after);
    if !is_at(text, p, ",") {
        return None;
    }
    p = arrow(text, skip_ws(text, p + 1), "args")?;
    if !is_at(text, p, "{") {
        return None;
    }
    let (arguments, after) = match value_end(text, p) {
        // A JSON object.
        Some(End::Closed(e))
            if text.get(p..e).is_some_and(|o| serde_json::from_str::<serde_json::Value>(o).is_ok()) =>
        {
            (Cow::Borrowed(text.get(p..e)?), e)
        }
        _ => flags(text, p + 1, cx, name)?,
    };
    let q = skip_ws(text, after);
    if !is_at(text, q, "}") {
        return None;
    }
    let end = q + 1;
    Some((RawCall::new(Cow::Borrowed(name), arguments, Format::MinimaxText, Span::new(i, end)), end))
}

/// `key =>` at `p` (whitespace around): the position after the arrow and its spaces.
fn arrow(text: &str, p: usize, key: &str) -> Option<usize> {
    let p = if is_at(text, p, "\"") && is_at(text, p + 1, key) && is_at(text, p + 1 + key.len(), "\"") {
        p + key.len() + 2
    } else if is_at(text, p, key) {
        p + key.len()
    } else {
        return None;
    };
    let p = skip_ws(text, p);
    is_at(text, p, "=>").then(|| skip_ws(text, p + 2))
}

/// A name, quoted or bare: the name and the position after it.
fn name_at(text: &str, p: usize) -> Option<(&str, usize)> {
    let rest = text.get(p..)?;
    if let Some(inner) = rest.strip_prefix('"') {
        let close = inner.find('"')?;
        return Some((inner.get(..close)?, p + close + 2));
    }
    let len = rest.bytes().take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.')).count();
    (len > 0).then(|| (rest.get(..len).unwrap_or(""), p + len))
}

/// `--key value` lines from `p` up to the `}` that closes them: the arguments and the
/// position after that `}`.
fn flags<'a>(text: &'a str, mut p: usize, cx: &Cx<'_>, name: &str) -> Option<(Cow<'a, str>, usize)> {
    let mut args = Args::new(cx, name);
    loop {
        p = skip_ws(text, p);
        if is_at(text, p, "}") {
            return Some((Cow::Owned(args.finish()), p + 1));
        }
        if !is_at(text, p, "--") {
            return None;
        }
        let rest = text.get(p + 2..)?;
        let key_len = rest.bytes().take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-')).count();
        let key = rest.get(..key_len).filter(|k| !k.is_empty())?;
        p += 2 + key_len;
        while let Some(b' ' | b'\t') = text.as_bytes().get(p) {
            p += 1;
        }
        let rest = text.get(p..)?;
        if rest.starts_with('"') {
            let End::Closed(e) = value_end(text, p)? else { return None };
            let lit = text.get(p..e)?;
            let value = decode_string(lit)?;
            args.push_raw(key, &value, Untyped::String);
            p = e;
        } else {
            let line = rest.find(['\n', '}']).unwrap_or(rest.len());
            let raw = rest.get(..line)?.trim_end();
            if raw.is_empty() {
                return None;
            }
            args.push_raw(key, raw, Untyped::Json);
            p += line;
        }
        // Nothing but the line's end (or the closing brace) after a value.
        let q = text.get(p..)?.bytes().take_while(|b| matches!(b, b' ' | b'\t' | b'\r')).count();
        p += q;
        if !(is_at(text, p, "\n") || is_at(text, p, "}")) {
            return None;
        }
    }
}
