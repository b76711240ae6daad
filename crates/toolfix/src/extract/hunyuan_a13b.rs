//! Hunyuan A13B: `<tool_calls>[{json}, ...]</tool_calls>`, the same text as Jamba (which is
//! tried first and wins); kept so a profile can pin the format.

use super::Format;
use super::parsed::{Cx, Parsed};

/// Start markers.
pub(crate) const MARKERS: &[&str] = super::jamba::MARKERS;

/// Parse the block at `at`.
pub(crate) fn parse<'a>(text: &'a str, at: usize, _cx: &Cx<'_>) -> Option<Parsed<'a>> {
    super::jamba::parse_as(text, at, Format::HunyuanA13b)
}
