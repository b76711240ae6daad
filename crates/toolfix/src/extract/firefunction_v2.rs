//! FireFunction v2: ` functools[{"name": .., "arguments": ..}, ...]` (a leading space).

use super::Format;
use super::parsed::{Cx, Parsed};

/// Start markers.
pub(crate) const MARKERS: &[&str] = &[" functools["];

/// Parse the list at `at`.
pub(crate) fn parse<'a>(text: &'a str, at: usize, _cx: &Cx<'_>) -> Option<Parsed<'a>> {
    super::phi4_mini::parse_list(text, at, " functools[", Format::FirefunctionV2)
}
