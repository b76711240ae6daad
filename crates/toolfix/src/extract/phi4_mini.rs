//! Phi-4-mini: `functools[{"name": .., "arguments": ..}, ...]`.

use super::Format;
use super::json::call::{NAME_ARGUMENTS, after, calls_in_array};
use super::parsed::{Cx, Parsed};

/// Start markers.
pub(crate) const MARKERS: &[&str] = &["functools["];

/// Parse the list at `at`.
pub(crate) fn parse<'a>(text: &'a str, at: usize, _cx: &Cx<'_>) -> Option<Parsed<'a>> {
    parse_list(text, at, "functools[", Format::Phi4Mini)
}

/// The list that `marker` (ending in `[`) opens at `at`.
pub(crate) fn parse_list<'a>(text: &'a str, at: usize, marker: &str, format: Format) -> Option<Parsed<'a>> {
    let list = after(text, at, marker)?.checked_sub(1)?;
    let a = calls_in_array(text, list, &NAME_ARGUMENTS, format)?;
    // `functools[]` is markup with no call: dropped from the prose.
    (a.all_calls || !a.calls.is_empty()).then_some(Parsed { end: a.end, calls: a.calls })
}
