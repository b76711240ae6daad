//! Apriel: `<tool_calls>[{json}, ...]</tool_calls>`, the same text as Jamba (which is tried
//! first and wins); kept so a profile can pin the format. Apriel's reasoning marker
//! `[BEGIN FINAL RESPONSE]` is handled with the other reasoning markers.

use super::Format;
use super::parsed::{Cx, Parsed};

/// Start markers.
pub(crate) const MARKERS: &[&str] = super::jamba::MARKERS;

/// Parse the block at `at`.
pub(crate) fn parse<'a>(text: &'a str, at: usize, _cx: &Cx<'_>) -> Option<Parsed<'a>> {
    super::jamba::parse_as(text, at, Format::Apriel)
}

/// The end of Apriel's final response, dropped from the prose (its start,
/// `[BEGIN FINAL RESPONSE]`, ends forced-open reasoning).
pub(crate) const WRAPPERS: &[&str] = &["[END FINAL RESPONSE]"];

/// Drop the wrapper at `at`.
pub(crate) fn parse_wrapper<'a>(text: &'a str, at: usize, _cx: &Cx<'_>) -> Option<Parsed<'a>> {
    let w = WRAPPERS.iter().find(|w| text.get(at..).is_some_and(|r| r.starts_with(**w)))?;
    Some(Parsed { end: at + w.len(), calls: Vec::new() })
}
