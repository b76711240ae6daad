//! Command R7B: `<|START_ACTION|>[{"tool_name": .., "parameters": ..}, ...]<|END_ACTION|>`
//! (a single object also seen; `"tool_call_id"` is the id; OpenAI-style keys accepted).
//! The response and text wrappers (`<|START_RESPONSE|>` ...) are dropped from the prose.

use super::Format;
use super::json::call::{Keys, after, call_at, calls_in_array, skip_closer};
use super::json::scan::skip_ws;
use super::parsed::{Cx, Parsed};

/// Start markers of an action.
pub(crate) const MARKERS: &[&str] = &["<|START_ACTION|>"];

/// Wrappers around prose, dropped from it.
pub(crate) const WRAPPERS: &[&str] = &["<|START_RESPONSE|>", "<|END_RESPONSE|>", "<|START_TEXT|>", "<|END_TEXT|>"];

const KEYS: Keys = Keys { name: &["tool_name", "name"], args: &["parameters", "arguments"], args_optional: true };

/// Parse the action at `at`.
pub(crate) fn parse<'a>(text: &'a str, at: usize, _cx: &Cx<'_>) -> Option<Parsed<'a>> {
    let i = skip_ws(text, after(text, at, "<|START_ACTION|>")?);
    let (end, calls) = match text.as_bytes().get(i)? {
        b'[' => {
            let a = calls_in_array(text, i, &KEYS, Format::CommandR7b)?;
            (a.end, a.calls)
        }
        b'{' => {
            let oc = call_at(text, i, &KEYS, Format::CommandR7b)?;
            (oc.end, vec![oc.call])
        }
        _ => return None,
    };
    if calls.is_empty() {
        return None;
    }
    Some(Parsed { end: skip_closer(text, end, "<|END_ACTION|>"), calls })
}

/// Drop a prose wrapper at `at`.
pub(crate) fn parse_wrapper<'a>(text: &'a str, at: usize, _cx: &Cx<'_>) -> Option<Parsed<'a>> {
    let w = WRAPPERS.iter().find(|w| text.get(at..).is_some_and(|r| r.starts_with(**w)))?;
    Some(Parsed { end: at + w.len(), calls: Vec::new() })
}
