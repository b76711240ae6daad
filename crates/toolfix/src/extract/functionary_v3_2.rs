//! Functionary v3.2: `>>>NAME\n{json}`, up to the next `>>>` or the end; the recipient
//! `all` marks plain text (the marker is dropped, the text kept).

use super::Format;
use super::json::call::{after, body_call, is_identifier_like};
use super::json::scan::skip_ws;
use super::parsed::{Cx, Parsed};

/// Start markers.
pub(crate) const MARKERS: &[&str] = &[">>>"];

/// Parse the message at `at`.
pub(crate) fn parse<'a>(text: &'a str, at: usize, _cx: &Cx<'_>) -> Option<Parsed<'a>> {
    let open = after(text, at, ">>>")?;
    let nl = open + text.get(open..)?.bytes().take(257).position(|b| b == b'\n')?;
    let name = text.get(open..nl)?.trim();
    if !is_identifier_like(name) {
        return None;
    }
    if name == "all" {
        return Some(Parsed { end: nl + 1, calls: Vec::new() });
    }
    let i = skip_ws(text, nl + 1);
    if text.as_bytes().get(i) != Some(&b'{') {
        return None;
    }
    let call = body_call(text, at, i, name, None, Format::FunctionaryV32)?;
    let end = call.span.end;
    Some(Parsed { end, calls: vec![call] })
}
