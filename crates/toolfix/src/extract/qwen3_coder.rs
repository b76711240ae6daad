//! Qwen3-Coder: `<tool_call>\n<function=N>\n<parameter=K>\nraw\n</parameter>\n</function>\n</tool_call>`.
//!
//! The opening `<tool_call>` is sometimes missing (a bare `<function=N>` block still is a
//! call); `</parameter>`, `</function>` and `</tool_call>` may be missing too, and a call
//! cut off at the end keeps what was given. One newline after `<parameter=K>` and one
//! before `</parameter>` are framing. A `</tool_call>` or `</function>` inside a value is
//! kept when a `</parameter>` follows before the next parameter. Seed-OSS shares this
//! grammar with `<seed:tool_call>` blocks (`parse_seed`).

use super::Format;
use super::params::{Args, Untyped};
use super::parsed::{Cx, Parsed, RawCall};
use super::tags::{self, Ns, Tag};
use super::text::{clean_name, is_at, markup_or_end, skip_ws};
use crate::span::Span;
use std::borrow::Cow;

/// Parses Qwen3-Coder call blocks starting at `at` (the block tag, or a bare function tag).
pub(crate) fn parse<'a>(text: &'a str, at: usize, cx: &Cx<'_>) -> Option<Parsed<'a>> {
    parse_dialect(text, at, cx, &QWEN)
}

/// Parses Seed-OSS call blocks (`<seed:tool_call>`) starting at `at`.
pub(crate) fn parse_seed<'a>(text: &'a str, at: usize, cx: &Cx<'_>) -> Option<Parsed<'a>> {
    parse_dialect(text, at, cx, &SEED)
}

/// The block tag and format of a dialect of this grammar.
#[derive(Debug)]
struct Dialect {
    /// Block tag name (`tool_call`, `seed:tool_call`).
    block: &'static str,
    /// The format reported.
    format: Format,
}

const QWEN: Dialect = Dialect { block: "tool_call", format: Format::Qwen3Coder };
const SEED: Dialect = Dialect { block: "seed:tool_call", format: Format::SeedOss };

/// Parses consecutive blocks of the dialect starting at `at`.
fn parse_dialect<'a>(text: &'a str, at: usize, cx: &Cx<'_>, dialect: &Dialect) -> Option<Parsed<'a>> {
    let mut calls = Vec::new();
    let mut pos = at;
    let mut end = at;
    while let Some(start) = block_start(text, pos, dialect) {
        let (call, next) = parse_call(text, start, cx, dialect);
        end = next;
        pos = next;
        calls.extend(call);
        if pos >= text.len() {
            break;
        }
    }
    if calls.is_empty() {
        return None;
    }
    Some(Parsed::new(end, calls))
}

/// Where a call starts at `pos` (after whitespace when `pos` is past the first block):
/// the block tag followed by a function tag, or a bare function tag. `None` when no call
/// starts there (a Hermes JSON body, prose, ...).
fn block_start(text: &str, pos: usize, dialect: &Dialect) -> Option<Start> {
    let p = skip_ws(text, pos);
    let tag = tags::tag_at(text, p, Ns::Plain)?;
    if tag.is_open(dialect.block) {
        let f = skip_ws(text, tag.end);
        if is_at(text, f, "<function=") && !is_json_body(text, f) {
            return Some(Start { call: p, function: f });
        }
        return None;
    }
    if is_at(text, p, "<function=") && !is_json_body(text, p) {
        return Some(Start { call: p, function: p });
    }
    None
}

/// Functionary v3.1 writes `<function=N>{json}`: not ours.
fn is_json_body(text: &str, function: usize) -> bool {
    match tags::tag_at(text, function, Ns::Plain) {
        Some(tag) => {
            let b = skip_ws(text, tag.end);
            text.get(b..).is_some_and(|rest| rest.starts_with('{'))
        }
        None => false,
    }
}

#[derive(Clone, Copy, Debug)]
struct Start {
    call: usize,
    function: usize,
}

/// Parses one call; returns it (when usable) and the position after its markup.
fn parse_call<'a>(text: &'a str, start: Start, cx: &Cx<'_>, dialect: &Dialect) -> (Option<RawCall<'a>>, usize) {
    let Some(name) = tags::tag_at(text, start.function, Ns::Plain)
        .and_then(|tag| Some((clean_name(tag.rest.strip_prefix('=')?)?, tag.end)))
    else {
        // `<function=N` with no `>`: skip this block up to its closer.
        return (None, skip_broken(text, start.function, dialect));
    };
    let (name, mut pos) = name;
    if !markup_or_end(text, pos) {
        // `<function=N>` followed by prose (the tag quoted in text): not a call.
        return (None, pos);
    }
    let mut args = Args::new(cx, name);
    let mut end = None;
    while let Some(tag) = tags::next_tag(text, pos, Ns::Plain) {
        if tag.is_open("parameter") {
            let key = tag.rest.strip_prefix('=').map_or("", str::trim);
            let key = key.trim_matches(['"', '\'']);
            let (value, next) = param_value(text, tag.end, dialect);
            if !key.is_empty() {
                args.push_raw(key, tags::strip_framing(value), Untyped::Json);
            }
            pos = next;
            if text.get(..next).is_some_and(|t| t.ends_with("</parameter>")) && !markup_or_end(text, next) {
                // Prose after a closed parameter: the call's closers are missing.
                end = Some(next);
                break;
            }
        } else if tag.is_close("function") {
            let p = skip_ws(text, tag.end);
            end = match tags::tag_at(text, p, Ns::Plain) {
                Some(close) if close.is_close(dialect.block) => Some(close.end),
                _ => Some(tag.end),
            };
            break;
        } else if tag.is_close(dialect.block) {
            end = Some(tag.end);
            break;
        } else if starts_call(&tag, dialect) {
            // A new call before this one closed.
            end = Some(tag.start);
            break;
        } else {
            pos = tag.end;
        }
    }
    // The text ended before the call closed: more parameters may have been coming.
    let (end, cut) = match end {
        Some(end) => (end, false),
        None => (text.len(), true),
    };
    let call = RawCall::new(Cow::Borrowed(name), Cow::Owned(args.finish()), dialect.format, Span::new(start.call, end));
    (Some(call.cut_if(cut)), end)
}

fn starts_call(tag: &Tag<'_>, dialect: &Dialect) -> bool {
    tag.is_open(dialect.block) || tag.is_open("function")
}

/// The raw value of a parameter whose text starts at `from`, and where parsing goes on.
fn param_value<'a>(text: &'a str, from: usize, dialect: &Dialect) -> (&'a str, usize) {
    // A closer of the call inside the value ends it only if no `</parameter>` follows
    // before the next parameter or call; a `</parameter>` followed by text (not markup)
    // is part of the value when another `</parameter>` follows before them.
    let mut fallback: Option<usize> = None;
    let mut pos = from;
    loop {
        let Some(tag) = tags::next_tag(text, pos, Ns::Plain) else {
            let stop = fallback.unwrap_or(text.len());
            return (unclosed(text.get(from..stop).unwrap_or("")), stop);
        };
        if tag.is_close("parameter") && (markup_or_end(text, tag.end) || !closer_follows(text, tag.end, dialect)) {
            return (text.get(from..tag.start).unwrap_or(""), tag.end);
        }
        if tag.is_open("parameter") || starts_call(&tag, dialect) {
            let stop = fallback.unwrap_or(tag.start);
            return (unclosed(text.get(from..stop).unwrap_or("")), stop);
        }
        if fallback.is_none() && (tag.is_close("function") || tag.is_close(dialect.block)) {
            fallback = Some(tag.start);
        }
        pos = tag.end;
    }
}

/// True when another `</parameter>` comes after `from` before the next parameter or call.
fn closer_follows(text: &str, from: usize, dialect: &Dialect) -> bool {
    let mut pos = from;
    while let Some(tag) = tags::next_tag(text, pos, Ns::Plain) {
        if tag.is_close("parameter") {
            return true;
        }
        if tag.is_open("parameter") || starts_call(&tag, dialect) || tag.is_close(dialect.block) {
            return false;
        }
        pos = tag.end;
    }
    false
}

/// A value that its `</parameter>` did not close, without a mismatched closing tag at its
/// end (`</param>`, `</arg_value>`): that tag was the model's closer, not the value's text.
/// Other tags (`</div>`), and one whose element opens in the value, stay.
fn unclosed(value: &str) -> &str {
    let trimmed = value.trim_end();
    let Some(lt) = trimmed.rfind("</") else {
        return value;
    };
    match tags::tag_at(trimmed, lt, Ns::Plain) {
        Some(tag) if tag.close && tag.end == trimmed.len() && tag.rest.trim().is_empty() && closer_like(tag.name) => {
            let head = trimmed.get(..lt).unwrap_or("");
            let opened = head
                .match_indices('<')
                .any(|(i, _)| tags::tag_at(head, i, Ns::Plain).is_some_and(|t| !t.close && t.name == tag.name));
            if opened { value } else { head }
        }
        _ => value,
    }
}

/// A tag name a model writes for `</parameter>`.
fn closer_like(name: &str) -> bool {
    name.starts_with("param") || name.starts_with("arg") || name == "value"
}

/// Past a broken call: after its `</tool_call>` (or `</function>`), or at the next call.
fn skip_broken(text: &str, from: usize, dialect: &Dialect) -> usize {
    let mut pos = from + 1;
    let mut end = text.len();
    while let Some(tag) = tags::next_tag(text, pos, Ns::Plain) {
        if tag.is_close(dialect.block) {
            return tag.end;
        }
        if tag.is_close("function") {
            end = tag.end;
        } else if starts_call(&tag, dialect) && tag.start > from {
            return end.min(tag.start);
        }
        pos = tag.end;
    }
    end
}
