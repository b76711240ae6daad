//! Granite: `<|tool_call|>[{"name": .., "arguments": ..}, ...]` (no end marker).

use super::Format;
use super::json::call::{NAME_ARGUMENTS, after, call_at, calls_in_array};
use super::json::scan::skip_ws;
use super::parsed::{Cx, Parsed};

/// Start markers.
pub(crate) const MARKERS: &[&str] = &["<|tool_call|>"];

/// Parse the list at `at`.
pub(crate) fn parse<'a>(text: &'a str, at: usize, _cx: &Cx<'_>) -> Option<Parsed<'a>> {
    let i = skip_ws(text, after(text, at, "<|tool_call|>")?);
    match text.as_bytes().get(i)? {
        b'[' => {
            let a = calls_in_array(text, i, &NAME_ARGUMENTS, Format::Granite)?;
            (!a.calls.is_empty()).then_some(Parsed { end: a.end, calls: a.calls })
        }
        // A bare object where the format wants a list: still one call.
        b'{' => {
            let oc = call_at(text, i, &NAME_ARGUMENTS, Format::Granite)?;
            Some(Parsed { end: oc.end, calls: vec![oc.call] })
        }
        _ => None,
    }
}
