//! DeepSeek V3.2 DSML: `<｜DSML｜function_calls>` blocks of
//! `<｜DSML｜invoke name="N">` ... `</｜DSML｜invoke>`, each holding
//! `<｜DSML｜parameter name="K" string="true">raw</｜DSML｜parameter>` (`string="false"`: a
//! JSON value), or (SGLang) a JSON object body.
//!
//! Separators may be the full-width `｜` or ASCII `|`, and tokenizer-corrupted closers
//! such as `</｜｜DSML｜｜parameter>` still close. The schema, when known, types every
//! value (it wins over the `string` attribute); without one, `string="true"` keeps the
//! text and anything else is read as JSON when it parses. DeepSeek V4 (`parse_v4`) is the
//! same inside `<｜DSML｜tool_calls>`. Missing closers keep what was given; an invoke the
//! text ends in is cut off.

use super::Format;
use super::params::{Args, Untyped};
use super::parsed::{Cx, Parsed, RawCall};
use super::tags::{self, Ns, Tag};
use super::text::{clean_name, skip_ws};
use crate::span::Span;
use std::borrow::Cow;

/// Parses a DeepSeek V3.2 DSML block (or a bare invoke) at `at`.
pub(crate) fn parse_v32<'a>(text: &'a str, at: usize, cx: &Cx<'_>) -> Option<Parsed<'a>> {
    parse_dsml(text, at, cx, Format::DeepseekV32Dsml)
}

/// Parses a DeepSeek V4 DSML block at `at`.
pub(crate) fn parse_v4<'a>(text: &'a str, at: usize, cx: &Cx<'_>) -> Option<Parsed<'a>> {
    parse_dsml(text, at, cx, Format::DeepseekV4Dsml)
}

/// Parses a DSML block whose tag belongs to `format` (V3.2: `function_calls` or a bare
/// `invoke`; V4: `tool_calls`).
fn parse_dsml<'a>(text: &'a str, at: usize, cx: &Cx<'_>, format: Format) -> Option<Parsed<'a>> {
    let open = tags::tag_at(text, at, Ns::Dsml).filter(|t| !t.close)?;
    let block = match (open.name, format) {
        ("function_calls", Format::DeepseekV32Dsml) | ("tool_calls", Format::DeepseekV4Dsml) => Some(open.name),
        ("invoke", Format::DeepseekV32Dsml) => None,
        _ => return None,
    };
    let mut pos = if block.is_some() { open.end } else { at };
    let mut calls = Vec::new();
    let mut current: Option<Invoke<'a, '_>> = None;
    // `None` while the text may end inside the current invoke.
    let mut end = None;
    while let Some(tag) = tags::next_tag(text, pos, Ns::Dsml) {
        match (tag.close, tag.name) {
            (false, "invoke") => {
                calls.extend(current.take().map(|c| c.finish(tag.start, false)));
                let Some(name) = tags::attr(tag.rest, "name").and_then(clean_name) else {
                    pos = tag.end;
                    continue;
                };
                let mut invoke = Invoke::new(cx, name, tag.start, format);
                pos = tag.end;
                let body = skip_ws(text, pos);
                if text.get(body..).is_some_and(|r| r.starts_with('{')) {
                    let close = next_structural(text, body);
                    let json = text.get(body..close.map_or(text.len(), |t| t.start)).unwrap_or("");
                    invoke.json = Some(json.trim_end());
                    pos = close.map_or(text.len(), |t| t.start);
                }
                current = Some(invoke);
            }
            (false, "parameter") => {
                let (value, next) = param_value(text, tag.end);
                if let Some(invoke) = current.as_mut() {
                    invoke.param(&tag, value);
                }
                pos = next;
            }
            (true, "invoke") => {
                calls.extend(current.take().map(|c| c.finish(tag.end, false)));
                pos = tag.end;
                let p = skip_ws(text, pos);
                if tags::tag_at(text, p, Ns::Dsml).is_none() {
                    // Prose after the last invoke: the block closer is missing.
                    end = Some(tag.end);
                    break;
                }
            }
            (true, name) if Some(name) == block => {
                end = Some(tag.end);
                break;
            }
            (false, name) if name == "function_calls" || name == "tool_calls" => {
                // A new block before this one closed.
                end = Some(tag.start);
                break;
            }
            _ => pos = tag.end,
        }
    }
    let cut = end.is_none();
    let end = end.unwrap_or(text.len());
    calls.extend(current.take().map(|c| c.finish(end, cut)));
    if calls.is_empty() {
        return None;
    }
    Some(Parsed::new(end, calls))
}

/// One invoke being read.
struct Invoke<'a, 't> {
    name: &'a str,
    start: usize,
    format: Format,
    args: Args<'t>,
    json: Option<&'a str>,
}

impl<'a, 't> Invoke<'a, 't> {
    fn new(cx: &Cx<'t>, name: &'a str, start: usize, format: Format) -> Self {
        Invoke { name, start, format, args: Args::new(cx, name), json: None }
    }

    fn param(&mut self, tag: &Tag<'_>, value: &str) {
        let Some(key) = tags::attr(tag.rest, "name").filter(|k| !k.is_empty()) else {
            return;
        };
        let untyped = match tags::attr(tag.rest, "string") {
            Some("true") => Untyped::String,
            _ => Untyped::Json,
        };
        self.args.push_raw(key, value, untyped);
    }

    fn finish(self, end: usize, cut: bool) -> RawCall<'a> {
        let arguments = match self.json {
            Some(json) if self.args.is_empty() => Cow::Borrowed(json),
            _ => Cow::Owned(self.args.finish()),
        };
        RawCall::new(Cow::Borrowed(self.name), arguments, self.format, Span::new(self.start, end)).cut_if(cut)
    }
}

/// The next DSML tag that ends a value or body: a parameter or invoke tag, or a block tag.
fn next_structural(text: &str, from: usize) -> Option<Tag<'_>> {
    let mut pos = from;
    loop {
        let tag = tags::next_tag(text, pos, Ns::Dsml)?;
        if matches!(tag.name, "parameter" | "invoke" | "function_calls" | "tool_calls") {
            return Some(tag);
        }
        pos = tag.end;
    }
}

/// The raw value of a parameter starting at `from`, and where parsing goes on.
fn param_value(text: &str, from: usize) -> (&str, usize) {
    match next_structural(text, from) {
        Some(tag) if tag.is_close("parameter") => (text.get(from..tag.start).unwrap_or(""), tag.end),
        // Unclosed: the newline before the next tag is layout, not value.
        Some(tag) => (text.get(from..tag.start).map_or("", unclosed), tag.start),
        None => (text.get(from..).unwrap_or(""), text.len()),
    }
}

fn unclosed(value: &str) -> &str {
    value.strip_suffix('\n').unwrap_or(value)
}
