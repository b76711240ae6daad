//! A declared tool's name glued to its JSON arguments, in prose: `get_weather{"city": "x"}`,
//! `get_weather={...}`, `get_weather({...})`, `get_weather(properties={...})`,
//! `<function=get_weather={...}>`, `<tool_call>get_weather{...}</tool_call>`, with closers
//! written without their openers after it (`</tool_call>`, `</function>`).
//!
//! Only for a name the request declared (without tools such text stays prose), and only
//! when the arguments are a JSON object. The scan finds these at the object's `{` and
//! looks back for the name ([`name_before`]); `<function=` and `<tool_call>` are markers.

use super::Format;
use super::json::call::body_call;
use super::parsed::{Cx, Parsed};
use super::text::{MAX_NAME, is_at};
use crate::span::Span;

const FUNCTION_TAG: &str = "<function=";

/// Keywords written between `(` and the arguments object.
pub(crate) const KEYWORDS: &[&str] = &["properties", "arguments", "parameters", "args"];

/// Block openers a model writes before such a call (their closers are optional).
const OPENERS: &[&str] = &["<tool_call>", "<function_call>"];

/// Closers a model writes after such a call without having written their openers.
const STRAY_CLOSERS: &[&str] = &["</tool_call>", "</function>", "</function_call>", "</tool>"];

/// Parses `NAME{json}` (and the forms in the module doc) at `at`.
pub(crate) fn parse<'a>(text: &'a str, at: usize, cx: &Cx<'_>) -> Option<Parsed<'a>> {
    let tools = cx.tools?;
    let tagged = is_at(text, at, FUNCTION_TAG);
    let mut i = if tagged {
        at + FUNCTION_TAG.len()
    } else {
        OPENERS.iter().find(|o| is_at(text, at, o)).map_or(at, |o| super::text::skip_ws(text, at + o.len()))
    };
    let len = ident_len(text.get(i..)?.bytes());
    let name = text.get(i..i + len)?;
    if name.is_empty() || !tools.is_known(name) {
        return None;
    }
    i = spaces(text, i + len);
    let mut paren = false;
    if is_at(text, i, "=") {
        i = spaces(text, i + 1);
    } else if is_at(text, i, "(") {
        paren = true;
        i = spaces(text, i + 1);
        if let Some(kw) = KEYWORDS.iter().find(|k| is_at(text, i, k)) {
            let j = spaces(text, i + kw.len());
            if !is_at(text, j, "=") {
                return None;
            }
            i = spaces(text, j + 1);
        }
    }
    if !is_at(text, i, "{") {
        return None;
    }
    let call = body_call(text, at, i, name, None, Format::Glued)?;
    let mut end = call.span.end;
    if !call.cut {
        if paren {
            let j = spaces(text, end);
            // `NAME({...}` never closed: not the shape it claims to be.
            if !is_at(text, j, ")") {
                return None;
            }
            end = j + 1;
        }
        if tagged {
            let j = spaces(text, end);
            if !is_at(text, j, ">") {
                return None;
            }
            end = j + 1;
        }
        end = stray_closers(text, end);
    }
    let call = super::parsed::RawCall { span: Span::new(at, end), ..call };
    Some(Parsed::new(end, vec![call]))
}

/// Where a declared tool's name starts right before the `{` at `brace` (after `from`):
/// `NAME{`, `NAME={`, `NAME({`, `NAME(properties={`. `None` when no declared name is
/// there. The name is the whole run of name bytes before the separator, so `xget{` is
/// not `get{`.
pub(crate) fn name_before(text: &str, from: usize, brace: usize, cx: &Cx<'_>) -> Option<usize> {
    let tools = cx.tools?;
    let low = from.max(brace.saturating_sub(cx.lookback));
    let before = text.get(low..brace)?;
    let mut t = before.trim_end_matches([' ', '\t']);
    if let Some(x) = t.strip_suffix('=') {
        let x = x.trim_end_matches([' ', '\t']);
        t = KEYWORDS
            .iter()
            .find_map(|k| x.strip_suffix(k).and_then(|y| y.trim_end_matches([' ', '\t']).strip_suffix('(')))
            .unwrap_or(x);
    } else if let Some(x) = t.strip_suffix('(') {
        t = x;
    }
    let t = t.trim_end_matches([' ', '\t']);
    let len = ident_len(t.bytes().rev());
    let start = t.len() - len;
    // The run reaches the start of the window: it may go on before it (before `from`
    // too, where a stream stopped reading in the middle of a word).
    let goes_on = |at: usize| at > 0 && text.as_bytes().get(at - 1).is_some_and(|&b| ident_len([b].into_iter()) == 1);
    if len == 0 || (start == 0 && (low > from || goes_on(low))) {
        return None;
    }
    let name = t.get(start..)?;
    tools.is_known(name).then_some(low + start)
}

fn ident_len(bytes: impl Iterator<Item = u8>) -> usize {
    bytes.take(MAX_NAME + 1).take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.')).count()
}

/// Past spaces and tabs (at most a few: a separator, not a layout).
fn spaces(text: &str, mut i: usize) -> usize {
    let mut n = 0;
    while n < 4 && matches!(text.as_bytes().get(i), Some(b' ' | b'\t')) {
        i += 1;
        n += 1;
    }
    i
}

/// Past closers whose openers were never written.
fn stray_closers(text: &str, mut end: usize) -> usize {
    loop {
        let j = super::text::skip_ws(text, end);
        match STRAY_CLOSERS.iter().find(|c| is_at(text, j, c)) {
            Some(c) => end = j + c.len(),
            None => return end,
        }
    }
}
