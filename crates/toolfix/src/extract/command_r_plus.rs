//! Command R+: `Action:` then a ```` ```json ```` fence holding
//! `[{"tool_name": .., "parameters": ..}, ...]`.

use super::Format;
use super::json::call::{Keys, after, calls_in_array, skip_closer, skip_fence_open};
use super::json::scan::skip_ws;
use super::parsed::{Cx, Parsed};

/// Start markers.
pub(crate) const MARKERS: &[&str] = &["Action:"];

const KEYS: Keys = Keys { name: &["tool_name", "name"], args: &["parameters", "arguments"], args_optional: true };

/// Parse the action at `at`.
pub(crate) fn parse<'a>(text: &'a str, at: usize, _cx: &Cx<'_>) -> Option<Parsed<'a>> {
    let i = skip_ws(text, after(text, at, "Action:")?);
    let j = skip_fence_open(text, i);
    if j == i {
        return None;
    }
    let a = calls_in_array(text, j, &KEYS, Format::CommandRPlus)?;
    if a.calls.is_empty() {
        return None;
    }
    Some(Parsed { end: skip_closer(text, a.end, "```"), calls: a.calls })
}
