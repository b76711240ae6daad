//! Functionary v3.1: `<function=NAME>{json}</function>`, prose allowed between calls. A
//! `<function=NAME>` followed by `<parameter=...>` is Qwen3-Coder, not this.

use super::Format;
use super::json::call::{after, clean_name, is_identifier_like, skip_closer};
use super::json::scan::{End, skip_ws, value_end};
use super::parsed::{Cx, Parsed, RawCall};
use crate::Span;
use std::borrow::Cow;

/// Start markers.
pub(crate) const MARKERS: &[&str] = &["<function="];

/// Parse the call at `at`.
pub(crate) fn parse<'a>(text: &'a str, at: usize, _cx: &Cx<'_>) -> Option<Parsed<'a>> {
    let open = after(text, at, "<function=")?;
    let close = open + text.get(open..)?.bytes().take(257).position(|b| b == b'>')?;
    let name = clean_name(text.get(open..close)?).filter(|n| is_identifier_like(n))?;
    let i = skip_ws(text, close + 1);
    if text.as_bytes().get(i) != Some(&b'{') {
        return None;
    }
    let end = match value_end(text, i)? {
        End::Closed(e) => e,
        End::Open => text.len(),
    };
    let call = RawCall {
        name: Cow::Borrowed(name),
        arguments: Cow::Borrowed(text.get(i..end)?),
        id: None,
        format: Format::FunctionaryV31,
        span: Span::new(at, end),
    };
    Some(Parsed { end: skip_closer(text, end, "</function>"), calls: vec![call] })
}
