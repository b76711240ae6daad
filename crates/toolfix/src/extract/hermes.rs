//! Hermes: `<tool_call>{"name": .., "arguments": ..}</tool_call>` (Hermes 2 Pro, Qwen2.5,
//! Qwen3). The closing tag may be cut off at EOS; `</tool_call>` inside an argument string
//! does not end the call; arguments written as a JSON-encoded string are decoded once.

use super::Format;
use super::json::call::{Keys, after, call_at, skip_closer, skip_fence_open};
use super::json::scan::skip_ws;
use super::parsed::{Cx, Parsed};

/// A call to a tool without parameters is often written without `"arguments"`.
const KEYS: Keys = Keys { name: &["name"], args: &["arguments", "parameters"], args_optional: true };

/// Start markers.
pub(crate) const MARKERS: &[&str] = &["<tool_call>"];

/// Parse the block at `at`.
pub(crate) fn parse<'a>(text: &'a str, at: usize, _cx: &Cx<'_>) -> Option<Parsed<'a>> {
    let open = after(text, at, "<tool_call>")?;
    let mut i = skip_fence_open(text, skip_ws(text, open));
    let mut calls = Vec::new();
    while text.as_bytes().get(i) == Some(&b'{') {
        let Some(oc) = call_at(text, i, &KEYS, Format::Hermes) else {
            break;
        };
        calls.push(oc.call);
        i = oc.end;
        if !oc.closed {
            break;
        }
        let next = skip_ws(text, i);
        if text.as_bytes().get(next) != Some(&b'{') {
            break;
        }
        i = next;
    }
    if calls.is_empty() {
        return None;
    }
    let i = skip_closer(text, i, "```");
    Some(Parsed { end: skip_closer(text, i, "</tool_call>"), calls })
}
