//! Mistral (tokenizer before v11): `[TOOL_CALLS][{"name": .., "arguments": ..}, ...]`.
//!
//! Junk between the marker and the list is skipped (within a short window); a marker with
//! no JSON after it is removed from the prose and yields no call.

use super::Format;
use super::json::call::{NAME_ARGUMENTS, after, call_at, calls_in_array};
use super::json::scan::skip_ws;
use super::parsed::{Cx, Parsed};

/// Start markers.
pub(crate) const MARKERS: &[&str] = &["[TOOL_CALLS]"];

/// How far past the marker a list is looked for when junk precedes it.
const JUNK_WINDOW: usize = 256;

/// Parse the calls at `at`.
pub(crate) fn parse<'a>(text: &'a str, at: usize, _cx: &Cx<'_>) -> Option<Parsed<'a>> {
    let open = after(text, at, "[TOOL_CALLS]")?;
    let first = *text.as_bytes().get(open)?;
    // `[TOOL_CALLS]name{...}` is the v11 form.
    if first.is_ascii_alphanumeric() || first == b'_' {
        return None;
    }
    let i = skip_ws(text, open);
    match text.as_bytes().get(i) {
        Some(b'[') => {
            if let Some(a) = calls_in_array(text, i, &NAME_ARGUMENTS, Format::Mistral) {
                return Some(Parsed { end: a.end, calls: a.calls });
            }
        }
        Some(b'{') => {
            if let Some(oc) = call_at(text, i, &NAME_ARGUMENTS, Format::Mistral) {
                return Some(Parsed { end: oc.end, calls: vec![oc.call] });
            }
        }
        _ => {}
    }
    // Junk before the list: look for `[{` a little further on.
    let window_end = crate::span::floor_char_boundary(text, i.saturating_add(JUNK_WINDOW));
    if let Some(rel) = text.get(i..window_end).and_then(|w| w.find("[{")) {
        if let Some(a) = calls_in_array(text, i + rel, &NAME_ARGUMENTS, Format::Mistral) {
            if !a.calls.is_empty() {
                return Some(Parsed { end: a.end, calls: a.calls });
            }
        }
    }
    Some(Parsed { end: i, calls: Vec::new() })
}
