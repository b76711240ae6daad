//! Nemotron: `<TOOLCALL>[{"name": .., "arguments": ..}, ...]</TOOLCALL>`.

use super::Format;
use super::json::call::{NAME_ARGUMENTS, after, calls_in_array, skip_closer};
use super::json::scan::skip_ws;
use super::parsed::{Cx, Parsed};

/// Start markers.
pub(crate) const MARKERS: &[&str] = &["<TOOLCALL>"];

/// Parse the block at `at`.
pub(crate) fn parse<'a>(text: &'a str, at: usize, _cx: &Cx<'_>) -> Option<Parsed<'a>> {
    let i = skip_ws(text, after(text, at, "<TOOLCALL>")?);
    let a = calls_in_array(text, i, &NAME_ARGUMENTS, Format::Nemotron)?;
    if a.calls.is_empty() {
        return None;
    }
    Some(Parsed { end: skip_closer(text, a.end, "</TOOLCALL>"), calls: a.calls })
}
