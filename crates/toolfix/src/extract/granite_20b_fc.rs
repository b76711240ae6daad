//! Granite 20B FC: `<function_call> {"name": .., "arguments": ..}`, one call per marker,
//! no end marker.

use super::Format;
use super::json::call::{NAME_ARGUMENTS, after, call_at, calls_in_array};
use super::json::scan::skip_ws;
use super::parsed::{Cx, Parsed};

/// Start markers.
pub(crate) const MARKERS: &[&str] = &["<function_call>"];

/// Parse the call at `at`.
pub(crate) fn parse<'a>(text: &'a str, at: usize, _cx: &Cx<'_>) -> Option<Parsed<'a>> {
    let i = skip_ws(text, after(text, at, "<function_call>")?);
    if text.as_bytes().get(i) == Some(&b'[') {
        // A list where the format wants one object per marker: still the calls.
        let a = calls_in_array(text, i, &NAME_ARGUMENTS, Format::Granite20bFc)?;
        return (!a.calls.is_empty()).then_some(Parsed { end: a.end, calls: a.calls });
    }
    let oc = call_at(text, i, &NAME_ARGUMENTS, Format::Granite20bFc)?;
    Some(Parsed { end: oc.end, calls: vec![oc.call] })
}
