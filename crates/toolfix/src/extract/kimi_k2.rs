//! Kimi K2: `<|tool_calls_section_begin|>` then per call
//! `<|tool_call_begin|>functions.N:IDX<|tool_call_argument_begin|>{json}<|tool_call_end|>`,
//! then `<|tool_calls_section_end|>`.
//!
//! The id (`functions.N:IDX`, also written `N:IDX`) is the call id and carries the name.
//! A bare counter id (`0`) names no tool: such a call is skipped (unless one declared tool
//! fits), as is an id without `:IDX` (`functions.bad.0`) unless it names a declared tool.
//! The section markers may be missing, and so may the per-call marker, when the server
//! stripped the special tokens before the id or the prompt ended with them:
//! `functions.N:IDX<|tool_call_argument_begin|>{json}<|tool_call_end|>` (the scan finds the
//! argument marker and looks back for the id, [`id_before`]). A call cut off at the end
//! keeps its (partial) JSON; the driver salvages it.

use super::Format;
use super::json::scan::{End, value_end};
use super::parsed::{Cx, Parsed, RawCall};
use super::text::{clean_name, is_at, section_start, skip_ws};
use crate::span::Span;
use std::borrow::Cow;

const SECTION_BEGIN: &str = "<|tool_calls_section_begin|>";
const SECTION_END: &str = "<|tool_calls_section_end|>";
const CALL_BEGIN: &str = "<|tool_call_begin|>";
const CALL_END: &str = "<|tool_call_end|>";
/// The argument marker: where a call without its per-call marker is found.
pub(crate) const ARG_BEGIN: &str = "<|tool_call_argument_begin|>";

/// Longest call id read before an argument marker without a per-call marker.
pub(crate) const MAX_ID: usize = 128;

/// Parses a Kimi K2 tool-call section (or bare calls) at `at`.
pub(crate) fn parse<'a>(text: &'a str, at: usize, cx: &Cx<'_>) -> Option<Parsed<'a>> {
    let mut pos = match section_start(text, at, SECTION_BEGIN, CALL_BEGIN) {
        Some(pos) => pos,
        // An id written without its per-call marker.
        None => bare_id_end(text, at, cx).map(|_| at)?,
    };
    let mut calls = Vec::new();
    let mut end = pos;
    loop {
        let p = skip_ws(text, pos);
        if is_at(text, p, SECTION_END) {
            end = p + SECTION_END.len();
            break;
        }
        let id_start = if is_at(text, p, CALL_BEGIN) {
            p + CALL_BEGIN.len()
        } else if bare_id_end(text, p, cx).is_some() {
            p
        } else {
            break;
        };
        let Some((id_end, token)) = next_token(text, id_start) else {
            // Cut off inside the id: nothing usable.
            end = text.len();
            break;
        };
        if token != ARG_BEGIN {
            // No arguments marker: the section is broken here. Stop (the driver tries
            // again at the next marker), so a failing parse does bounded work.
            break;
        }
        let args_start = id_end + ARG_BEGIN.len();
        let (args_end, after, at_end) = match next_token(text, args_start) {
            Some((i, CALL_END)) => (i, i + CALL_END.len(), false),
            Some((i, _)) => (i, i, false),
            None => (text.len(), text.len(), true),
        };
        let id = text.get(id_start..id_end).unwrap_or("").trim();
        let arguments = text.get(args_start..args_end).unwrap_or("").trim();
        // The text ended in the arguments: cut unless they are a complete JSON value.
        let cut = at_end && (arguments.is_empty() || value_end(arguments, 0) != Some(End::Closed(arguments.len())));
        let arguments = if arguments.is_empty() { "{}" } else { arguments };
        let name = match name_from_id(id) {
            Some(name) => Some(Cow::Borrowed(name)),
            None if is_counter(id) => infer_name(cx, arguments).map(Cow::Owned),
            None => declared_without_index(cx, id).map(Cow::Borrowed),
        };
        if let Some(name) = name {
            let call = RawCall::new(name, Cow::Borrowed(arguments), Format::KimiK2, Span::new(p, after));
            calls.push(call.with_id(Some(Cow::Borrowed(id))).cut_if(cut));
        }
        end = after;
        pos = after;
    }
    if calls.is_empty() {
        return None;
    }
    Some(Parsed::new(end, calls))
}

/// The next Kimi token at or after `from`: its position and text.
fn next_token(text: &str, from: usize) -> Option<(usize, &'static str)> {
    let mut pos = from;
    loop {
        let i = pos + text.get(pos..)?.find("<|")?;
        let rest = text.get(i..)?;
        for token in [ARG_BEGIN, CALL_END, CALL_BEGIN, SECTION_END, SECTION_BEGIN] {
            if rest.starts_with(token) {
                return Some((i, token));
            }
        }
        pos = i + 2;
    }
}

/// A byte of a call id (`functions.get_weather:0`).
pub(crate) fn is_id_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b':')
}

/// Where an id written right before an argument marker at `marker` starts, looking back
/// no further than `from` (what was read already) and [`MAX_ID`] bytes. `None` when no
/// id is there, or when the run of id bytes may go on before the window (it is then
/// longer than an id, or began in text already read). Such a call, with neither marker
/// before it, is only taken when its id names a declared tool (`N:IDX`).
pub(crate) fn id_before(text: &str, from: usize, marker: usize, cx: &Cx<'_>) -> Option<usize> {
    let low = from.max(marker.saturating_sub(MAX_ID));
    let run = text.get(low..marker)?.bytes().rev().take_while(|b| is_id_byte(*b)).count();
    let start = marker - run;
    let goes_on = start == low && low > 0 && text.as_bytes().get(low - 1).is_some_and(|b| is_id_byte(*b));
    (run > 0 && !goes_on && declared_id(text.get(start..marker)?, cx)).then_some(start)
}

/// The end of an id written at `at` right before an argument marker, when one is (and
/// names a declared tool).
fn bare_id_end(text: &str, at: usize, cx: &Cx<'_>) -> Option<usize> {
    let rest = text.get(at..)?;
    let len = rest.bytes().take(MAX_ID + 1).take_while(|b| is_id_byte(*b)).count();
    (len > 0 && len <= MAX_ID && is_at(text, at + len, ARG_BEGIN) && declared_id(rest.get(..len)?, cx))
        .then_some(at + len)
}

/// An id `N:IDX` whose `N` is a declared tool.
fn declared_id(id: &str, cx: &Cx<'_>) -> bool {
    name_from_id(id).is_some_and(|n| cx.tools.is_some_and(|t| t.is_known(n)))
}

fn is_counter(id: &str) -> bool {
    !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit())
}

/// The tool a bare counter id (`0`) must mean (see `infer.rs`).
fn infer_name(cx: &Cx<'_>, arguments: &str) -> Option<String> {
    super::infer::infer_name(cx.tools?, arguments)
}

/// An id without `:IDX` (`functions.N`) that names a declared tool: that tool. Without
/// tools, or for any other name, `None` (the id may be something else cut short).
fn declared_without_index<'i>(cx: &Cx<'_>, id: &'i str) -> Option<&'i str> {
    let name = clean_name(id.strip_prefix("functions.").unwrap_or(id))?;
    cx.tools.is_some_and(|t| t.is_known(name)).then_some(name)
}

/// The tool name in a call id: `functions.N:IDX` or `N:IDX`. `None` for a bare counter
/// or an id without `:IDX`.
fn name_from_id(id: &str) -> Option<&str> {
    let (name, index) = id.rsplit_once(':')?;
    if index.is_empty() || !index.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let name = name.strip_prefix("functions.").unwrap_or(name);
    clean_name(name)
}
