//! Granite 3.x / 4.x: calls as `<|tool_call|>[{json}, …]` (a lone object too), and Granite
//! 3.3's answer wrapper: `<think>…</think><response>answer</response>` (llama.cpp
//! `ibm-granite-granite-3.3-2B-Instruct.jinja`).
//!
//! The `<response>…</response>` pair is markup only when it closes the reply (nothing but
//! whitespace after `</response>`) and holds no call marker: then both tags leave the
//! prose and the answer stays. Anywhere else (an XML snippet in an answer) it is prose.

use super::Format;
use super::json::call::NAME_ARGUMENTS;
use super::json_family::{self, Body, Empty, Fence, JsonRow};
use super::parsed::{Cx, Markers, Parsed};
use super::text::is_at;
use crate::span::Span;

/// The call marker.
pub(crate) const TOOL_CALL: &str = "<|tool_call|>";
/// The answer wrapper's opening tag.
pub(crate) const RESPONSE: &str = "<response>";
const RESPONSE_END: &str = "</response>";

const ROW: JsonRow = JsonRow {
    lead: &[],
    fence: Fence::No,
    body: Body::ArrayOrObject { junk: 0 },
    keys: NAME_ARGUMENTS,
    empty: Empty::NotACall,
};
const MARKERS: Markers = Markers { format: Format::Granite, start: &[TOOL_CALL], end: &[] };

/// Parses Granite's calls, or its answer wrapper, at `at`.
pub(crate) fn parse<'a>(text: &'a str, at: usize, cx: &Cx<'_>) -> Option<Parsed<'a>> {
    if is_at(text, at, TOOL_CALL) {
        return json_family::parse(&ROW, &MARKERS, text, at, cx);
    }
    if !is_at(text, at, RESPONSE) {
        return None;
    }
    let inner = at + RESPONSE.len();
    let close = inner + text.get(inner..)?.find(RESPONSE_END)?;
    let end = close + RESPONSE_END.len();
    let answer = text.get(inner..close)?;
    if !text.get(end..)?.trim().is_empty() || answer.contains(TOOL_CALL) || answer.contains(RESPONSE) {
        return None;
    }
    Some(Parsed::new(end, Vec::new()).with_prose(Span::new(inner, close)))
}
