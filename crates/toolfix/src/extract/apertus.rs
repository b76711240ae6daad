//! Apertus: `<|tools_prefix|>[{"NAME": {args}}, ...]<|tools_suffix|>`: each element's one
//! key is the tool name, its value the arguments.

use super::Format;
use super::json::call::{after, clean_name, skip_closer};
use super::json::scan::{decode_string, skip_ws, walk_object};
use super::parsed::{Cx, Parsed, RawCall};
use crate::Span;
use std::borrow::Cow;

/// Start markers.
pub(crate) const MARKERS: &[&str] = &["<|tools_prefix|>"];

/// Parse the list at `at`.
pub(crate) fn parse<'a>(text: &'a str, at: usize, _cx: &Cx<'_>) -> Option<Parsed<'a>> {
    let bytes = text.as_bytes();
    let mut i = skip_ws(text, after(text, at, "<|tools_prefix|>")?);
    if bytes.get(i) != Some(&b'[') {
        return None;
    }
    i = skip_ws(text, i + 1);
    let mut calls = Vec::new();
    let mut end = text.len();
    while bytes.get(i) == Some(&b'{') {
        let obj = walk_object(text, i)?;
        let [field] = obj.fields.as_slice() else {
            return None;
        };
        let name = match &field.key {
            Cow::Borrowed(b) => Cow::Borrowed(clean_name(b)?),
            Cow::Owned(o) => Cow::Owned(clean_name(o)?.to_owned()),
        };
        let raw = text.get(field.value.range())?;
        let arguments = match decode_string(raw) {
            Some(s) if s.trim_start().starts_with('{') => Cow::Owned(s.trim().to_owned()),
            _ => Cow::Borrowed(raw),
        };
        calls.push(RawCall { name, arguments, id: None, format: Format::Apertus, span: Span::new(i, obj.end) });
        if !obj.closed {
            break;
        }
        i = skip_ws(text, obj.end);
        match bytes.get(i) {
            Some(b',') => i = skip_ws(text, i + 1),
            Some(b']') => {
                end = i + 1;
                break;
            }
            _ => {
                end = i;
                break;
            }
        }
    }
    if calls.is_empty() {
        return None;
    }
    Some(Parsed { end: skip_closer(text, end, "<|tools_suffix|>"), calls })
}
