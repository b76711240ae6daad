//! ReAct prompts: `Action: NAME` on its own line, then `Action Input: {json}` (the object
//! may sit in a ```` ```json ```` fence). Only for a tool the request declared: without
//! tools, or for any other name, the text stays prose. The `Thought:` before it and an
//! `Observation:` after it are the model's words and stay.

use super::Format;
use super::json::call::body_call;
use super::parsed::{Cx, Parsed, RawCall};
use super::text::{MAX_NAME, is_at, skip_closer, skip_fence_open};
use crate::span::Span;

const ACTION: &str = "Action:";
const INPUT: &str = "Action Input:";

/// Parses `Action: NAME\nAction Input: {json}` at `at`.
pub(crate) fn parse<'a>(text: &'a str, at: usize, cx: &Cx<'_>) -> Option<Parsed<'a>> {
    let tools = cx.tools?;
    if !is_at(text, at, ACTION) {
        return None;
    }
    let line_start = at + ACTION.len();
    let rest = text.get(line_start..)?;
    let nl = rest.bytes().take(MAX_NAME + 8).position(|b| b == b'\n')?;
    let raw = rest.get(..nl)?.trim();
    let name = raw.trim_matches(['`', '"', '\'', '*']).trim();
    if name.is_empty() || !tools.is_known(name) {
        return None;
    }
    let name_at = line_start + rest.find(name)?;
    let name = text.get(name_at..name_at + name.len())?;
    // The next line: `Action Input:` (blank lines allowed).
    let mut i = line_start + nl + 1;
    while let Some(b' ' | b'\t' | b'\r' | b'\n') = text.as_bytes().get(i) {
        i += 1;
    }
    if !is_at(text, i, INPUT) {
        return None;
    }
    i += INPUT.len();
    while let Some(b' ' | b'\t') = text.as_bytes().get(i) {
        i += 1;
    }
    let fenced = skip_fence_open(text, i);
    let body = super::text::skip_ws(text, fenced);
    if !is_at(text, body, "{") {
        return None;
    }
    let call: RawCall<'a> = body_call(text, at, body, name, None, Format::React)?;
    let mut end = call.span.end;
    if fenced != i && !call.cut {
        end = skip_closer(text, end, "```");
    }
    let call = RawCall { span: Span::new(at, end), ..call };
    Some(Parsed::new(end, vec![call]))
}
