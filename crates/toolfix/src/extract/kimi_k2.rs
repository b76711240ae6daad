//! Kimi K2: `<|tool_calls_section_begin|>` then per call
//! `<|tool_call_begin|>functions.N:IDX<|tool_call_argument_begin|>{json}<|tool_call_end|>`,
//! then `<|tool_calls_section_end|>`.
//!
//! The id (`functions.N:IDX`, also written `N:IDX`) is the call id and carries the name.
//! A bare counter id (`0`) names no tool: such a call is skipped (unless one declared tool
//! fits), as is an id without `:IDX` (`functions.bad.0`) unless it names a declared tool.
//! The section markers may be missing, and a call cut off at the end keeps its (partial)
//! JSON; the driver salvages it.

use super::Format;
use super::json::scan::{End, value_end};
use super::parsed::{Cx, Parsed, RawCall};
use super::text::{clean_name, is_at, section_start, skip_ws};
use crate::Span;
use std::borrow::Cow;

const SECTION_BEGIN: &str = "<|tool_calls_section_begin|>";
const SECTION_END: &str = "<|tool_calls_section_end|>";
const CALL_BEGIN: &str = "<|tool_call_begin|>";
const CALL_END: &str = "<|tool_call_end|>";
const ARG_BEGIN: &str = "<|tool_call_argument_begin|>";

/// Parses a Kimi K2 tool-call section (or bare calls) at `at`.
pub(crate) fn parse<'a>(text: &'a str, at: usize, cx: &Cx<'_>) -> Option<Parsed<'a>> {
    let mut pos = section_start(text, at, SECTION_BEGIN, CALL_BEGIN)?;
    let mut calls = Vec::new();
    let mut end = pos;
    loop {
        let p = skip_ws(text, pos);
        if is_at(text, p, SECTION_END) {
            end = p + SECTION_END.len();
            break;
        }
        if !is_at(text, p, CALL_BEGIN) {
            break;
        }
        let id_start = p + CALL_BEGIN.len();
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

fn is_counter(id: &str) -> bool {
    !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit())
}

/// The tool a bare counter id (`0`) must mean (see `native::infer_name`).
fn infer_name(cx: &Cx<'_>, arguments: &str) -> Option<String> {
    super::native::infer_name(cx.tools?, arguments)
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
