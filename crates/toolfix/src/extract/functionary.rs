//! Functionary v3.2: `>>>NAME\n{json}` per call, `>>>all\ntext` for prose (llama.cpp
//! `meetkai-functionary-medium-v3.2.jinja`).
//!
//! The generation prompt ends with `>>>`, so a reply starts with its first recipient and
//! no marker: `all\nHello` (prose) or `get_weather\n{json}` (a call). At the very start of
//! `content` (the scan's lead, [`leading`]) a first line that is exactly `all` is markup,
//! and a first line that names a declared tool, followed by a JSON object, is a call; any
//! other first line is prose. After `>>>` the declarative row reads the same forms.

use super::Format;
use super::json::call::{NAME_ARGUMENTS, body_call};
use super::json_family::{self, Body, Empty, Fence, JsonRow, Name};
use super::parsed::{Cx, Markers, Parsed};
use super::text::{MAX_NAME, is_at, skip_ws};

/// The recipient marker.
pub(crate) const MARKER: &str = ">>>";
/// The recipient of prose.
const ALL: &str = "all";

const ROW: JsonRow = JsonRow {
    lead: &[],
    fence: Fence::No,
    body: Body::Named(Name::Line { text: ALL }),
    keys: NAME_ARGUMENTS,
    empty: Empty::Markup,
};
const MARKERS: Markers = Markers { format: Format::FunctionaryV32, start: &[MARKER], end: &[] };

/// Parses a recipient at `at`: after `>>>`, or (at the start of the text) the first line.
pub(crate) fn parse<'a>(text: &'a str, at: usize, cx: &Cx<'_>) -> Option<Parsed<'a>> {
    if is_at(text, at, MARKER) {
        return json_family::parse(&ROW, &MARKERS, text, at, cx);
    }
    if at != 0 {
        return None;
    }
    let nl = text.find('\n')?;
    let name = text.get(..nl)?.trim_end_matches('\r');
    if name == ALL {
        return Some(Parsed::new(nl + 1, Vec::new()));
    }
    if !cx.tools.is_some_and(|t| t.is_known(name)) {
        return None;
    }
    let body = skip_ws(text, nl + 1);
    if !is_at(text, body, "{") {
        return None;
    }
    let call = body_call(text, 0, body, name, None, Format::FunctionaryV32)?;
    Some(Parsed::new(call.span.end, vec![call]))
}

/// What the first line of a text says, as far as it is known: `Some(true)` when it may
/// be a recipient (`all`, or a declared tool's name, and the line is complete),
/// `Some(false)` when it cannot be one, `None` when more text could tell (what came so far
/// begins `all` or a declared name: nothing else waits).
pub(crate) fn leading(text: &str, is_final: bool, cx: &Cx<'_>) -> Option<bool> {
    let head = text.as_bytes().iter().take(MAX_NAME + 2);
    for (i, &b) in head.enumerate() {
        if b == b'\n' || (b == b'\r' && text.as_bytes().get(i + 1) == Some(&b'\n')) {
            return Some(i > 0);
        }
        if !(b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.')) {
            return Some(false);
        }
    }
    let begun = |name: &str| name.starts_with(text);
    let may_be = begun(ALL) || cx.tools.is_some_and(|t| t.names().iter().any(|n| begun(n)));
    if text.len() > MAX_NAME + 1 || is_final || !may_be { Some(false) } else { None }
}
