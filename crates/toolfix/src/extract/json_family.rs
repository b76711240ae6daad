//! The JSON-family formats as data: a start marker, maybe a lead token or a code fence,
//! then calls written in JSON — call objects, an array of them, one per line, objects
//! keyed by the tool name, or a name written as text followed by a JSON arguments object —
//! then its end markers. Each format is one [`JsonRow`] in its registry row
//! (`registry.rs`); this file is the one reader of all of them. Adding a variant is a row
//! and test cases.

use super::Format;
use super::json::call::{Keys, call_at, calls_in_array};
use super::json::scan::{End, decode_string, value_end, walk_object};
use super::parsed::{Cx, Markers, Parsed, RawCall, matched};
use super::text::{after, clean_name, is_identifier_like, skip_closer, skip_fence_open, skip_ws};
use crate::span::Span;
use std::borrow::Cow;

/// How one JSON-family format writes its calls after its start marker.
#[derive(Clone, Copy, Debug)]
pub(crate) struct JsonRow {
    /// Tokens that may come right after the marker, skipped when present (`<|plugin|>`).
    pub(crate) lead: &'static [&'static str],
    /// Whether a ```` ```json ```` fence opens the body.
    pub(crate) fence: Fence,
    /// What the body holds.
    pub(crate) body: Body,
    /// Which keys name the tool and hold its arguments.
    pub(crate) keys: Keys,
    /// What a marker with no call after it is.
    pub(crate) empty: Empty,
}

/// A code fence around the body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fence {
    /// Never.
    No,
    /// Sometimes.
    Optional,
    /// Always (Command R+'s `Action:` is prose without it).
    Required,
}

/// The body after the marker. A marker that ends in `[` opens the body itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Body {
    /// One or more call objects, apart by whitespace or by `sep` when given.
    Objects {
        /// A separator between objects (Llama 3's `;`).
        sep: Option<u8>,
        /// The start marker may be written again between objects (Llama 3's
        /// `<|python_tag|>`).
        repeat: bool,
    },
    /// A JSON array of call objects.
    Array,
    /// An array, or a lone call object; markup junk before the array is skipped within
    /// `junk` bytes (Mistral).
    ArrayOrObject {
        /// How far past the marker an array is looked for.
        junk: usize,
    },
    /// One call object per line; lines that are not calls are skipped (MiniMax M1).
    Lines,
    /// An array of `{"NAME": {arguments}}` objects (Apertus).
    Keyed,
    /// The name written as text, then a JSON arguments object.
    Named(Name),
}

/// How a name written as text ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Name {
    /// At `>`, within the marker's tag: `<function=NAME>` (Functionary v3.1, Llama 3.1).
    Tag,
    /// At the end of the line: `>>>NAME\n` (Functionary v3.2); a line naming `text`
    /// (`all`) marks plain text: the marker goes, the text stays.
    Line {
        /// The recipient that means "plain text".
        text: &'static str,
    },
    /// At the first byte that cannot be in a name, then optional `[CALL_ID]id` and
    /// `[ARGS]` tokens (Mistral v11); a name with no arguments after it is markup.
    Token,
}

/// What a start marker with no usable call after it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Empty {
    /// Not this format (the marker stays prose).
    NotACall,
    /// Markup: the marker, and any body read, leave the prose (`[TOOL_CALLS]` alone).
    Markup,
    /// Markup when the body is an empty list (`functools[]`).
    List,
}

/// Read the calls of `row` (the grammar of the row with `markers`) at `at`, where a start marker matched.
pub(crate) fn parse<'a>(
    row: &JsonRow,
    markers: &Markers,
    text: &'a str,
    at: usize,
    _cx: &Cx<'_>,
) -> Option<Parsed<'a>> {
    let format = markers.format;
    let marker = matched(markers.start, text, at)?;
    let open = at + marker.len();
    // A marker ending in `[` opens the body.
    let mut i = if marker.ends_with('[') { open - 1 } else { open };
    if i == open {
        i = skip_ws(text, i);
        for lead in row.lead {
            if let Some(j) = after(text, i, lead) {
                i = skip_ws(text, j);
            }
        }
        let fenced = skip_fence_open(text, i);
        if row.fence == Fence::Required && fenced == i {
            return None;
        }
        if row.fence != Fence::No {
            i = fenced;
        }
    }
    let read = match row.body {
        Body::Objects { sep, repeat } => objects(text, i, repeat.then_some(marker), sep, row, format),
        Body::Array => array(text, i, row, format),
        Body::ArrayOrObject { junk } => Some(array_or_object(text, i, junk, row, format)),
        Body::Lines => lines(text, i, row, format),
        Body::Keyed => keyed(text, i, format),
        Body::Named(name) => named(text, at, open, name, format),
    };
    let Read { end, calls, empty_list } = read?;
    if calls.is_empty() {
        let keep = match row.empty {
            Empty::NotACall => false,
            Empty::Markup => true,
            Empty::List => empty_list,
        };
        if !keep {
            return None;
        }
    }
    let mut end = end;
    if row.fence != Fence::No {
        end = skip_closer(text, end, "```");
    }
    for closer in markers.end {
        end = skip_closer(text, end, closer);
    }
    Some(Parsed::new(end, calls))
}

/// What a body reader found.
struct Read<'a> {
    end: usize,
    calls: Vec<RawCall<'a>>,
    /// The body was an empty, closed list.
    empty_list: bool,
}

impl<'a> Read<'a> {
    fn of(end: usize, calls: Vec<RawCall<'a>>) -> Self {
        Read { end, calls, empty_list: false }
    }
}

fn objects<'a>(
    text: &'a str,
    mut i: usize,
    marker: Option<&str>,
    sep: Option<u8>,
    row: &JsonRow,
    f: Format,
) -> Option<Read<'a>> {
    let bytes = text.as_bytes();
    let mut calls = Vec::new();
    let mut end = i;
    while bytes.get(i) == Some(&b'{') {
        let Some(oc) = call_at(text, i, &row.keys, f) else { break };
        calls.push(oc.call);
        end = oc.end;
        if !oc.closed {
            break;
        }
        let mut j = skip_ws(text, end);
        if sep.is_some() && bytes.get(j).copied() == sep {
            j = skip_ws(text, j + 1);
        }
        if let Some(k) = marker.and_then(|m| after(text, j, m)) {
            j = skip_ws(text, k);
        }
        i = j;
    }
    if calls.is_empty() {
        return None;
    }
    Some(Read::of(end, calls))
}

fn array<'a>(text: &'a str, i: usize, row: &JsonRow, f: Format) -> Option<Read<'a>> {
    let a = calls_in_array(text, i, &row.keys, f)?;
    let empty_list = a.closed && a.all_calls && a.calls.is_empty();
    Some(Read { end: a.end, calls: a.calls, empty_list })
}

fn array_or_object<'a>(text: &'a str, i: usize, junk: usize, row: &JsonRow, f: Format) -> Read<'a> {
    match text.as_bytes().get(i) {
        Some(b'[') => {
            if let Some(a) = calls_in_array(text, i, &row.keys, f) {
                return Read::of(a.end, a.calls);
            }
        }
        Some(b'{') => {
            if let Some(oc) = call_at(text, i, &row.keys, f) {
                let (mut end, mut calls) = (oc.end, vec![oc.call]);
                // Mistral: `{call}, {call}` without the list's brackets.
                while junk > 0 && calls.len() < MAX_BODY_CALLS {
                    let k = skip_ws(text, end);
                    let Some(next) = (text.as_bytes().get(k) == Some(&b','))
                        .then(|| skip_ws(text, k + 1))
                        .and_then(|k| call_at(text, k, &row.keys, f))
                    else {
                        break;
                    };
                    end = next.end;
                    calls.push(next.call);
                }
                return Read::of(end, calls);
            }
        }
        _ => {}
    }
    // Junk before the list: look for `[{` a little further on.
    if junk > 0 {
        let window_end = super::text::floor(text, i.saturating_add(junk));
        if let Some(rel) = text.get(i..window_end).and_then(|w| w.find("[{"))
            && let Some(a) = calls_in_array(text, i + rel, &row.keys, f)
            && !a.calls.is_empty()
        {
            return Read::of(a.end, a.calls);
        }
    }
    Read::of(i, Vec::new())
}

fn lines<'a>(text: &'a str, mut i: usize, row: &JsonRow, f: Format) -> Option<Read<'a>> {
    if text.as_bytes().get(i) != Some(&b'{') {
        return None;
    }
    let mut calls = Vec::new();
    let mut end = i;
    while text.as_bytes().get(i) == Some(&b'{') {
        if let Some(oc) = call_at(text, i, &row.keys, f) {
            calls.push(oc.call);
            end = oc.end;
        } else {
            // Not a call: skip the object (or the rest of its line when it is not JSON).
            end = match value_end(text, i) {
                Some(End::Closed(e)) => e,
                _ => text.get(i..).and_then(|r| r.find('\n')).map_or(text.len(), |n| i + n),
            };
        }
        i = skip_ws(text, end);
    }
    Some(Read::of(end, calls))
}

fn keyed(text: &str, mut i: usize, format: Format) -> Option<Read<'_>> {
    let bytes = text.as_bytes();
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
        calls.push(RawCall::new(name, arguments, format, Span::new(i, obj.end)).cut_if(!obj.closed));
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
    Some(Read::of(end, calls))
}

/// Longest name written as text.
const MAX_TEXT_NAME: usize = 256;

fn named(text: &str, at: usize, open: usize, rule: Name, format: Format) -> Option<Read<'_>> {
    let rest = text.get(open..)?;
    let (name, mut i, id) = match rule {
        Name::Tag => {
            let close = open + rest.bytes().take(MAX_TEXT_NAME + 1).position(|b| b == b'>')?;
            let name = clean_name(text.get(open..close)?).filter(|n| is_identifier_like(n))?;
            (name, close + 1, None)
        }
        Name::Line { text: plain } => {
            let nl = open + rest.bytes().take(MAX_TEXT_NAME + 1).position(|b| b == b'\n')?;
            let name = text.get(open..nl)?.trim();
            if !is_identifier_like(name) {
                return None;
            }
            if name == plain {
                return Some(Read::of(nl + 1, Vec::new()));
            }
            (name, nl + 1, None)
        }
        Name::Token => return mistral_v11(text, at, open, format),
    };
    i = skip_ws(text, i);
    if text.as_bytes().get(i) != Some(&b'{') {
        return None;
    }
    let call = super::json::call::body_call(text, at, i, name, id, format)?;
    Some(Read::of(call.span.end, vec![call]))
}

/// A Mistral v11 name and its `[CALL_ID]id` and `[ARGS]` tokens at `i`: the name, the id
/// and where the arguments start (`None` for no name).
fn v11_head(text: &str, i: usize) -> Option<(&str, Option<Cow<'_, str>>, usize, bool)> {
    // A space after the marker (`[TOOL_CALLS] get_time{…}`), when arguments follow the
    // name (`[TOOL_CALLS] not json` is prose after a bare marker).
    let spaces = text.get(i..)?.bytes().take(4).take_while(|b| *b == b' ').count();
    let i = i + spaces;
    let rest = text.get(i..)?;
    let len = rest.bytes().take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.')).count();
    let name = clean_name(rest.get(..len)?).filter(|n| is_identifier_like(n))?;
    let mut i = i + len;
    let mut id = None;
    if let Some(j) = after(text, i, "[CALL_ID]") {
        let id_len = text.get(j..)?.bytes().take_while(|b| b.is_ascii_alphanumeric() || *b == b'_').count();
        id = text.get(j..j + id_len).map(Cow::Borrowed);
        i = j + id_len;
    }
    let args = after(text, i, "[ARGS]");
    if spaces > 0 && args.is_none() && id.is_none() && !super::text::is_at(text, skip_ws(text, i), "{") {
        return None;
    }
    Some((name, id, args.unwrap_or(i), args.is_some()))
}

/// Mistral v11: `NAME[CALL_ID]id[ARGS]{json}` (tokens optional), then more calls in the
/// same body: `NAME2[ARGS]{json}` (the `[ARGS]` token required after the first), or
/// another complete `{json}` for the same tool (two calls' arguments written back to
/// back). A name with no arguments after it is markup.
fn mistral_v11(text: &str, at: usize, open: usize, format: Format) -> Option<Read<'_>> {
    let (name, id, i, _) = v11_head(text, open)?;
    let j = skip_ws(text, i);
    if text.as_bytes().get(j) != Some(&b'{') {
        // A name with no arguments: the markup is dropped, no call is made.
        return Some(Read::of(i, Vec::new()));
    }
    let first = super::json::call::body_call(text, at, j, name, id, format)?;
    let mut end = first.span.end;
    let mut last = (name, first.cut);
    let mut calls = vec![first];
    while !last.1 && calls.len() < MAX_BODY_CALLS {
        let k = skip_ws(text, end);
        let k = if text.as_bytes().get(k) == Some(&b',') { skip_ws(text, k + 1) } else { k };
        let next = if text.as_bytes().get(k) == Some(&b'{') {
            // The same tool again: only a complete object.
            super::json::call::body_call(text, k, k, last.0, None, format).filter(|c| !c.cut)
        } else {
            match v11_head(text, k) {
                Some((n, id, a, true)) => {
                    let b = skip_ws(text, a);
                    (text.as_bytes().get(b) == Some(&b'{'))
                        .then(|| super::json::call::body_call(text, k, b, n, id, format))
                        .flatten()
                }
                _ => None,
            }
        };
        let Some(call) = next else { break };
        end = call.span.end;
        last = (if let Cow::Borrowed(n) = call.name { n } else { last.0 }, call.cut);
        calls.push(call);
    }
    Some(Read::of(end, calls))
}

/// Most calls read from one Mistral v11 body.
const MAX_BODY_CALLS: usize = 256;
