//! xLAM: a JSON array of calls, bare, in a ```` ```json ```` fence, after `[TOOL_CALLS]` or
//! inside `<tool_call>...</tool_call>`. This file reads the `<tool_call>[...]</tool_call>`
//! wrapping (also Granite 3.1's `<tool_call> [...]`); bare arrays and fences are read by
//! `json`, `[TOOL_CALLS][...]` by `mistral`.

use super::Format;
use super::json::call::{NAME_ARGUMENTS, after, calls_in_array, skip_closer};
use super::json::scan::skip_ws;
use super::parsed::{Cx, Parsed};

/// Start markers.
pub(crate) const MARKERS: &[&str] = &["<tool_call>"];

/// Parse the list at `at`.
pub(crate) fn parse<'a>(text: &'a str, at: usize, _cx: &Cx<'_>) -> Option<Parsed<'a>> {
    let i = skip_ws(text, after(text, at, "<tool_call>")?);
    let a = calls_in_array(text, i, &NAME_ARGUMENTS, Format::Xlam)?;
    if a.calls.is_empty() {
        return None;
    }
    Some(Parsed { end: skip_closer(text, a.end, "</tool_call>"), calls: a.calls })
}
