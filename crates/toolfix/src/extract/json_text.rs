//! JSON call shapes written in prose or in a Markdown fence, with no model markup:
//! `{"name", "arguments"}` (or `"parameters"`), `{"type": "function", "function": {..}}`,
//! `{"tool_name", "tool_args"}`, `{"tool", "arguments"}`, arrays of them, `;`-separated
//! runs of them (Llama 3 JSON without its tag), and the OpenAI wrappers
//! `{"tool_calls": [...]}` and `{"function_call": {...}}`. A `</tool_call>` left right after
//! (its opening tag missing) goes with the call.
//!
//! Conservative: the object must be complete, shaped like a call, and its name must look
//! like a tool name; the driver also drops it when tools are known and the name is not
//! one of them.

use super::Format;
use super::json::call::{ANY_SHAPE, call_at, calls_in_array};
use super::json::scan::walk_object;
use super::parsed::{Cx, Parsed, RawCall};
use super::text::{is_identifier_like, skip_closer, skip_fence_open, skip_ws};

/// Parse the JSON at `at`.
pub(crate) fn parse<'a>(text: &'a str, at: usize, _cx: &Cx<'_>) -> Option<Parsed<'a>> {
    let bytes = text.as_bytes();
    match *bytes.get(at)? {
        b'`' => {
            let i = skip_fence_open(text, at);
            if i == at || !matches!(bytes.get(i), Some(b'{' | b'[')) {
                return None;
            }
            let (end, calls) = value_calls(text, i)?;
            Some(Parsed::new(skip_closer(text, end, "```"), calls))
        }
        b'{' | b'[' => {
            let (end, calls) = value_calls(text, at)?;
            Some(Parsed::new(skip_closer(text, end, "</tool_call>"), calls))
        }
        _ => None,
    }
}

/// Prose JSON must name a tool-like name and carry an object of arguments.
fn plausible(call: &RawCall<'_>) -> bool {
    is_identifier_like(&call.name) && call.arguments.trim_start().starts_with('{')
}

/// The calls of `{"tool_calls": [...]}` or `{"function_call": {...}}` at `start`.
fn wrapped_calls(text: &str, start: usize) -> Option<(usize, Vec<RawCall<'_>>)> {
    let obj = walk_object(text, start)?;
    if !obj.closed {
        return None;
    }
    let calls = if let Some(f) = obj.get("tool_calls") {
        let a = calls_in_array(text, f.value.start, &ANY_SHAPE, Format::Json)?;
        (a.closed && a.all_calls).then_some(a.calls)?
    } else {
        let f = obj.get("function_call")?;
        let oc = call_at(text, f.value.start, &ANY_SHAPE, Format::Json)?;
        oc.closed.then(|| vec![oc.call])?
    };
    (!calls.is_empty() && calls.iter().all(plausible)).then_some((obj.end, calls))
}

/// Complete call objects (or one array of them) from `start`.
fn value_calls(text: &str, start: usize) -> Option<(usize, Vec<RawCall<'_>>)> {
    let bytes = text.as_bytes();
    if let Some(found) = wrapped_calls(text, start) {
        return Some(found);
    }
    // Cheap refusal first: prose braces are common.
    let first_inner = bytes.get(skip_ws(text, start + 1)).copied();
    if bytes.get(start) == Some(&b'[') {
        if first_inner != Some(b'{') {
            return None;
        }
        let a = calls_in_array(text, start, &ANY_SHAPE, Format::Json)?;
        let ok = a.closed && a.all_calls && !a.calls.is_empty() && a.calls.iter().all(plausible);
        return ok.then_some((a.end, a.calls));
    }
    if first_inner != Some(b'"') {
        return None;
    }
    let mut calls = Vec::new();
    let mut i = start;
    let mut end = start;
    while let Some(oc) = call_at(text, i, &ANY_SHAPE, Format::Json) {
        if !oc.closed || !plausible(&oc.call) {
            break;
        }
        calls.push(oc.call);
        end = oc.end;
        let mut j = skip_ws(text, end);
        if bytes.get(j) == Some(&b';') {
            j = skip_ws(text, j + 1);
        }
        if bytes.get(j) != Some(&b'{') {
            break;
        }
        i = j;
    }
    (!calls.is_empty()).then_some((end, calls))
}
