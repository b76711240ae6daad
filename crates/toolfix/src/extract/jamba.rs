//! Jamba: `<tool_calls>[{"name": .., "arguments": ..}, ...]</tool_calls>`. Hunyuan A13B and
//! Apriel write the same thing; text alone cannot tell them apart, so such blocks are
//! reported as `jamba`.

use super::Format;
use super::json::call::{NAME_ARGUMENTS, after, calls_in_array, skip_closer};
use super::json::scan::skip_ws;
use super::parsed::{Cx, Parsed};

/// Start markers.
pub(crate) const MARKERS: &[&str] = &["<tool_calls>"];

/// Parse the block at `at`.
pub(crate) fn parse<'a>(text: &'a str, at: usize, _cx: &Cx<'_>) -> Option<Parsed<'a>> {
    parse_as(text, at, Format::Jamba)
}

/// Parse the block at `at`, reporting `format`.
pub(crate) fn parse_as(text: &str, at: usize, format: Format) -> Option<Parsed<'_>> {
    let i = skip_ws(text, after(text, at, "<tool_calls>")?);
    let a = calls_in_array(text, i, &NAME_ARGUMENTS, format)?;
    if a.calls.is_empty() {
        return None;
    }
    Some(Parsed { end: skip_closer(text, a.end, "</tool_calls>"), calls: a.calls })
}
