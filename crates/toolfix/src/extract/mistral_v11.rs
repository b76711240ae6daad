//! Mistral tokenizer v11+: `[TOOL_CALLS]name[ARGS]{json}` (also `[CALL_ID]id` before
//! `[ARGS]`, and decoded text where the `[ARGS]` control token is missing), one call per
//! marker.

use super::Format;
use super::json::call::{after, body_call, clean_name, is_identifier_like};
use super::json::scan::skip_ws;
use super::parsed::{Cx, Parsed};
use std::borrow::Cow;

/// Start markers.
pub(crate) const MARKERS: &[&str] = &["[TOOL_CALLS]"];

/// Parse the call at `at`.
pub(crate) fn parse<'a>(text: &'a str, at: usize, _cx: &Cx<'_>) -> Option<Parsed<'a>> {
    let open = after(text, at, "[TOOL_CALLS]")?;
    let rest = text.get(open..)?;
    let name_len = rest.bytes().take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.')).count();
    let name = clean_name(rest.get(..name_len)?).filter(|n| is_identifier_like(n))?;
    let mut i = open + name_len;
    let mut id = None;
    if let Some(j) = after(text, i, "[CALL_ID]") {
        let id_len = text.get(j..)?.bytes().take_while(|b| b.is_ascii_alphanumeric() || *b == b'_').count();
        id = text.get(j..j + id_len).map(Cow::Borrowed);
        i = j + id_len;
    }
    i = after(text, i, "[ARGS]").unwrap_or(i);
    let j = skip_ws(text, i);
    if text.as_bytes().get(j) != Some(&b'{') {
        // A name with no arguments: the markup is dropped, no call is made.
        return Some(Parsed { end: i, calls: Vec::new() });
    }
    let call = body_call(text, at, j, name, id, Format::MistralV11)?;
    let end = call.span.end;
    Some(Parsed { end, calls: vec![call] })
}
