//! Functionary v3.1: `<function=NAME>{json}</function>`, prose allowed between calls. A
//! `<function=NAME>` followed by `<parameter=...>` is Qwen3-Coder, not this.

use super::Format;
use super::json::call::{after, body_call, clean_name, is_identifier_like, skip_closer};
use super::json::scan::skip_ws;
use super::parsed::{Cx, Parsed};

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
    let call = body_call(text, at, i, name, None, Format::FunctionaryV31)?;
    let end = call.span.end;
    Some(Parsed { end: skip_closer(text, end, "</function>"), calls: vec![call] })
}
