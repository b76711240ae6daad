//! GLM: `<tool_call>N\n<arg_key>K</arg_key>\n<arg_value>raw</arg_value>\n</tool_call>`
//! (GLM-4.5/4.6, `parse45`: the name runs to the first newline, or a literal backslash-n
//! GLM-4.6 sometimes writes) and `<tool_call>N<arg_key>K</arg_key><arg_value>raw</arg_value></tool_call>`
//! (GLM-4.7, `parse47`: no newline after the name). One reader; each format claims its
//! own shape. Values are raw text typed through
//! the schema, whitespace kept. A missing `</tool_call>` (cut off) still yields the call;
//! a `</tool_call>` inside a value is kept when `</arg_value>` follows before the next key.

use super::Format;
use super::params::{Args, Untyped};
use super::parsed::{Cx, Parsed, RawCall};
use super::tags::{self, Ns};
use super::text::clean_name;
use crate::span::Span;
use std::borrow::Cow;

/// Parses a GLM-4.5 call (name then newline) at `at`.
pub(crate) fn parse45<'a>(text: &'a str, at: usize, cx: &Cx<'_>) -> Option<Parsed<'a>> {
    parse_glm(text, at, cx, Format::Glm45)
}

/// Parses a GLM-4.7 call (name then `<arg_key>` or `</tool_call>`) at `at`.
pub(crate) fn parse47<'a>(text: &'a str, at: usize, cx: &Cx<'_>) -> Option<Parsed<'a>> {
    parse_glm(text, at, cx, Format::Glm47)
}

/// Parses one GLM call at `at` if its shape is that of `format` (`Glm45`: the name ends
/// at a newline; `Glm47`: at `<arg_key>` or `</tool_call>`).
fn parse_glm<'a>(text: &'a str, at: usize, cx: &Cx<'_>, format: Format) -> Option<Parsed<'a>> {
    let open = tags::tag_at(text, at, Ns::Plain).filter(|t| t.is_open("tool_call"))?;
    let body = text.get(open.end..)?;
    let name_len = body.find(['\n', '\r', '<', '\\']).unwrap_or(body.len());
    let raw_name = body.get(..name_len)?;
    if raw_name.starts_with([' ', '\t']) || raw_name.trim_end_matches([' ', '\t']).contains([' ', '\t']) {
        // `<tool_call> and </tool_call>` in a sentence: GLM writes the name right after the tag.
        return None;
    }
    let name = clean_name(raw_name)?;
    if !name.chars().all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | ':' | '/')) {
        return None;
    }
    let after_name = open.end + name_len;
    let newline = matches!(text.as_bytes().get(after_name), Some(b'\n' | b'\r' | b'\\'));
    if newline && text.get(after_name..).is_some_and(|r| r.starts_with('\\') && !r.starts_with("\\n")) {
        return None;
    }
    let flavor = if newline { Format::Glm45 } else { Format::Glm47 };
    if flavor != format {
        return None;
    }
    if !markup_next(text, after_name) {
        // `<tool_call>word` then prose: not a GLM call.
        return None;
    }
    let mut args = Args::new(cx, name);
    let mut pos = after_name;
    let mut end = None;
    let mut saw_arg = false;
    while let Some(tag) = tags::next_tag(text, pos, Ns::Plain) {
        if tag.is_open("arg_key") {
            let (key, value, next) = key_value(text, tag.end);
            if let Some(key) = key {
                args.push_raw(key, value, Untyped::Json);
            }
            saw_arg = true;
            pos = next;
            if text.get(..next).is_some_and(|t| t.ends_with("</arg_value>")) && !markup_next(text, next) {
                // Prose after a closed value: the call's closer is missing.
                end = Some(next);
                break;
            }
        } else if tag.is_close("tool_call") {
            end = Some(tag.end);
            break;
        } else if tag.is_open("tool_call") {
            end = Some(tag.start);
            break;
        } else if !saw_arg && !tag.is_close("arg_value") {
            // Some other markup before any argument: not a GLM call.
            return None;
        } else {
            pos = tag.end;
        }
    }
    if end.is_none() && !saw_arg {
        // `<tool_call>name` and nothing else: too little to call it a call.
        return None;
    }
    // The text ended before `</tool_call>`: more arguments may have been coming.
    let (end, cut) = match end {
        Some(end) => (end, false),
        None => (text.len(), true),
    };
    let call = RawCall::new(Cow::Borrowed(name), Cow::Owned(args.finish()), format, Span::new(at, end));
    Some(Parsed::new(end, vec![call.cut_if(cut)]))
}

/// True when the next thing at `pos`, past whitespace and literal `\n`, is a tag (or the
/// text ends there).
fn markup_next(text: &str, pos: usize) -> bool {
    let mut rest = text.get(pos..).unwrap_or("");
    loop {
        let trimmed = rest.trim_start();
        match trimmed.strip_prefix("\\n") {
            Some(r) => rest = r,
            None => return trimmed.is_empty() || trimmed.starts_with('<'),
        }
    }
}

/// Reads `K</arg_key> <arg_value>V</arg_value>` from `from` (just after `<arg_key>`).
/// Returns the key (when usable), the raw value and where parsing goes on.
fn key_value(text: &str, from: usize) -> (Option<&str>, &str, usize) {
    let Some(tag) = tags::next_tag(text, from, Ns::Plain) else {
        return (None, "", text.len());
    };
    let key = text.get(from..tag.start).map(str::trim).filter(|k| !k.is_empty() && k.len() <= 256);
    let mut pos = if tag.is_close("arg_key") { tag.end } else { tag.start };
    // Up to `<arg_value>`, skipping whitespace and literal `\n`.
    let Some(value_tag) = tags::next_tag(text, pos, Ns::Plain) else {
        return (key, "", text.len());
    };
    if !value_tag.is_open("arg_value") {
        return (key, "", value_tag.start);
    }
    pos = value_tag.end;
    let value_start = pos;
    let mut fallback = None;
    loop {
        let Some(tag) = tags::next_tag(text, pos, Ns::Plain) else {
            let stop = fallback.unwrap_or(text.len());
            return (key, text.get(value_start..stop).unwrap_or(""), stop);
        };
        if tag.is_close("arg_value") {
            return (key, text.get(value_start..tag.start).unwrap_or(""), tag.end);
        }
        if tag.is_open("arg_key") || tag.is_open("tool_call") {
            let stop = fallback.unwrap_or(tag.start);
            return (key, text.get(value_start..stop).unwrap_or(""), stop);
        }
        if fallback.is_none() && tag.is_close("tool_call") {
            fallback = Some(tag.start);
        }
        pos = tag.end;
    }
}
