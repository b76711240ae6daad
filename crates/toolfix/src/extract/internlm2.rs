//! InternLM2: `<|action_start|><|plugin|>{"name": .., "parameters": ..}<|action_end|>`.

use super::Format;
use super::json::call::{NAME_ARGUMENTS, after, call_at, skip_closer};
use super::json::scan::skip_ws;
use super::parsed::{Cx, Parsed};

/// Start markers.
pub(crate) const MARKERS: &[&str] = &["<|action_start|>"];

/// Parse the action at `at`.
pub(crate) fn parse<'a>(text: &'a str, at: usize, _cx: &Cx<'_>) -> Option<Parsed<'a>> {
    let mut i = skip_ws(text, after(text, at, "<|action_start|>")?);
    if let Some(j) = after(text, i, "<|plugin|>") {
        i = skip_ws(text, j);
    }
    let oc = call_at(text, i, &NAME_ARGUMENTS, Format::Internlm2)?;
    Some(Parsed { end: skip_closer(text, oc.end, "<|action_end|>"), calls: vec![oc.call] })
}
