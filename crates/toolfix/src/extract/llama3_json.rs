//! Llama 3.x JSON: `<|python_tag|>{"name": .., "parameters": ..}` (`"arguments"` accepted),
//! several calls separated by `;`, newlines or a repeated `<|python_tag|>`. The same objects
//! without the tag are read by `json`.

use super::Format;
use super::json::call::{NAME_ARGUMENTS, after, call_at, skip_closer};
use super::json::scan::skip_ws;
use super::parsed::{Cx, Parsed};

/// Start markers.
pub(crate) const MARKERS: &[&str] = &["<|python_tag|>"];

const TAG: &str = "<|python_tag|>";

/// Parse the calls at `at`.
pub(crate) fn parse<'a>(text: &'a str, at: usize, _cx: &Cx<'_>) -> Option<Parsed<'a>> {
    let mut i = skip_ws(text, after(text, at, TAG)?);
    let mut calls = Vec::new();
    let mut end = at;
    loop {
        if text.as_bytes().get(i) != Some(&b'{') {
            break;
        }
        let Some(oc) = call_at(text, i, &NAME_ARGUMENTS, Format::Llama3Json) else {
            break;
        };
        calls.push(oc.call);
        end = oc.end;
        if !oc.closed {
            break;
        }
        // Separator: `;`, whitespace, or another tag.
        let mut j = skip_ws(text, end);
        if text.as_bytes().get(j) == Some(&b';') {
            j = skip_ws(text, j + 1);
        }
        if let Some(k) = after(text, j, TAG) {
            j = skip_ws(text, k);
        }
        i = j;
    }
    if calls.is_empty() {
        return None;
    }
    let end = skip_closer(text, end, "<|eom_id|>");
    Some(Parsed { end: skip_closer(text, end, "<|eot_id|>"), calls })
}
