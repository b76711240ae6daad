//! Python call lists, one grammar row per format: `[get_weather(city='Paris'), f(n=3)]`
//! (Llama 3.2/4 pythonic, bare or in Llama 4's `<|python_start|>` ... `<|python_end|>`),
//! LFM2's `<|tool_call_start|>[...]<|tool_call_end|>`, OLMo 3's
//! `<function_calls>f(a=1)\ng(b=2)</function_calls>`. After a token marker the calls come as
//! a bracketed list or one per line up to the row's closer (which may be missing).
//!
//! Only the full `[name(kw=...` shape fires, so bracketed prose (`[see above]`) is left
//! alone; when the tools are known, a bare list must also call at least one of them.
//! Values are Python literals (see `pycall`). A call that does not parse is dropped and its
//! siblings kept; a list with no good call is not a call at all.

use super::parsed::{Cx, Markers, Parsed, RawCall, matched};
use super::pycall::{self, Layout, PyCall};
use super::text::{is_at, skip_ws};
use crate::span::Span;
use std::borrow::Cow;

/// How one Python-call format closes its calls.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PyRow {
    /// The token that closes calls written after a token marker.
    pub(crate) close: &'static str,
    /// The `[` marker opens a bare list (needs a known tool when the tools are known).
    pub(crate) bare_list: bool,
}

/// Parses the Python calls of the row with `markers` at `at`.
pub(crate) fn parse<'a>(row: &PyRow, markers: &Markers, text: &'a str, at: usize, cx: &Cx<'_>) -> Option<Parsed<'a>> {
    let marker = matched(markers.start, text, at)?;
    let depth = cx.limits.max_depth;
    let (calls, end) = if marker == "[" {
        if !row.bare_list || !pycall::looks_like_call(text, at + 1) {
            return None;
        }
        let (calls, end) = pycall::parse_calls(text, at + 1, Layout::List, depth);
        // A bare list in prose is only a call list when it calls a tool the model was
        // offered (when the tools are known): `[print(end='')]` in a code answer is not.
        if let Some(tools) = cx.tools
            && !calls.iter().any(|c| tools.is_known(c.name))
        {
            return None;
        }
        (calls, end)
    } else {
        // Llama 3.1's built-in tools: `<|python_tag|>brave_search.call(query="x")<|eom_id|>`.
        let builtin = marker == PYTHON_TAG;
        let close = if builtin { EOM } else { row.close };
        let p = skip_ws(text, at + marker.len());
        let (mut calls, end) = if is_at(text, p, "[") && pycall::looks_like_call(text, p + 1) {
            pycall::parse_calls(text, p + 1, Layout::List, depth)
        } else if pycall::looks_like_call(text, p) {
            pycall::parse_calls(text, p, Layout::Lines(close), depth)
        } else {
            return None;
        };
        if builtin {
            // Code for the code interpreter (`print(end="")`) is not a call: a built-in
            // tool is called as `N.call(...)`, a declared one by its name.
            calls.retain_mut(|c| match c.name.strip_suffix(".call") {
                Some(name) => {
                    c.name = name;
                    true
                }
                None => cx.tools.is_some_and(|t| t.is_known(c.name)),
            });
        }
        let q = skip_ws(text, end);
        (calls, if is_at(text, q, close) { q + close.len() } else { end })
    };
    to_parsed(calls, end, markers)
}

/// Llama 3's tag before a built-in tool call (its JSON calls are `llama3_json`'s).
pub(crate) const PYTHON_TAG: &str = "<|python_tag|>";
/// The end of a Llama 3 message that waits for a tool's output.
const EOM: &str = "<|eom_id|>";

fn to_parsed<'a>(calls: Vec<PyCall<'a>>, end: usize, markers: &Markers) -> Option<Parsed<'a>> {
    if calls.is_empty() {
        return None;
    }
    let calls = calls
        .into_iter()
        .map(|c| {
            RawCall::new(Cow::Borrowed(c.name), Cow::Owned(c.arguments), markers.format, Span::new(c.start, c.end))
        })
        .collect();
    Some(Parsed::new(end, calls))
}
