//! MiniMax M1: `<tool_calls>` then one JSON call object per line, `</tool_calls>` (often cut
//! off). Lines that are not calls are skipped; objects spread over several lines are read
//! too.

use super::Format;
use super::json::call::{NAME_ARGUMENTS, after, call_at, skip_closer};
use super::json::scan::{End, skip_ws, value_end};
use super::parsed::{Cx, Parsed};

/// Start markers.
pub(crate) const MARKERS: &[&str] = &["<tool_calls>"];

/// Parse the block at `at`.
pub(crate) fn parse<'a>(text: &'a str, at: usize, _cx: &Cx<'_>) -> Option<Parsed<'a>> {
    let mut i = skip_ws(text, after(text, at, "<tool_calls>")?);
    if text.as_bytes().get(i) != Some(&b'{') {
        return None;
    }
    let mut calls = Vec::new();
    let mut end = i;
    while text.as_bytes().get(i) == Some(&b'{') {
        if let Some(oc) = call_at(text, i, &NAME_ARGUMENTS, Format::MinimaxM1) {
            calls.push(oc.call);
            end = oc.end;
        } else {
            // Not a call: skip the object (or the rest of its line when it is not JSON).
            end = match value_end(text, i) {
                Some(End::Closed(e)) => e,
                _ => text.get(i..).and_then(|r| r.find('\n')).map_or(text.len(), |n| i + n),
            };
        }
        i = skip_ws(text, end);
    }
    Some(Parsed { end: skip_closer(text, end, "</tool_calls>"), calls })
}
