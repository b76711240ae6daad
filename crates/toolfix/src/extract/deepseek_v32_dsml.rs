//! DeepSeek V3.2 DSML: `<｜DSML｜function_calls>` blocks of
//! `<｜DSML｜invoke name="N">` ... `</｜DSML｜invoke>`, each holding
//! `<｜DSML｜parameter name="K" string="true">raw</｜DSML｜parameter>` (`string="false"`: a
//! JSON value), or (SGLang) a JSON object body.
//!
//! Separators may be the full-width `｜` or ASCII `|`, and tokenizer-corrupted closers
//! such as `</｜｜DSML｜｜parameter>` still close. The schema, when known, types every
//! value (it wins over the `string` attribute); without one, `string="true"` keeps the
//! text and anything else is read as JSON when it parses. DeepSeek V4 (`deepseek_v4_dsml`)
//! is the same inside `<｜DSML｜tool_calls>`. Missing closers and cut-off blocks keep what
//! was given.

use super::Format;
use super::params::{Args, Untyped};
use super::parsed::{Cx, Parsed, RawCall};
use super::tags::{self, Ns, Tag};
use crate::Span;
use std::borrow::Cow;

/// Start markers: the block tag in both separator spellings, or a bare invoke.
pub(crate) const MARKERS: &[&str] =
    &["<｜DSML｜function_calls", "<|DSML|function_calls", "<｜DSML｜invoke", "<|DSML|invoke"];

/// Parses a DeepSeek V3.2 DSML block (or a bare invoke) at `at`.
pub(crate) fn parse<'a>(text: &'a str, at: usize, cx: &Cx<'_>) -> Option<Parsed<'a>> {
    parse_dsml(text, at, cx, Format::DeepseekV32Dsml)
}

/// Parses a DSML block whose tag belongs to `format` (V3.2: `function_calls` or a bare
/// `invoke`; V4: `tool_calls`).
pub(crate) fn parse_dsml<'a>(text: &'a str, at: usize, cx: &Cx<'_>, format: Format) -> Option<Parsed<'a>> {
    let open = tags::tag_at(text, at, Ns::Dsml).filter(|t| !t.close)?;
    let block = match (open.name, format) {
        ("function_calls", Format::DeepseekV32Dsml) | ("tool_calls", Format::DeepseekV4Dsml) => Some(open.name),
        ("invoke", Format::DeepseekV32Dsml) => None,
        _ => return None,
    };
    let mut pos = if block.is_some() { open.end } else { at };
    let mut calls = Vec::new();
    let mut current: Option<Invoke<'a, '_>> = None;
    let mut end = text.len();
    while let Some(tag) = tags::next_tag(text, pos, Ns::Dsml) {
        match (tag.close, tag.name) {
            (false, "invoke") => {
                calls.extend(current.take().map(|c| c.finish(tag.start)));
                let Some(name) = tags::attr(tag.rest, "name").and_then(tags::clean_name) else {
                    pos = tag.end;
                    continue;
                };
                let mut invoke = Invoke::new(cx, name, tag.start, format);
                pos = tag.end;
                let body = tags::skip_ws(text, pos);
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
                calls.extend(current.take().map(|c| c.finish(tag.end)));
                pos = tag.end;
                let p = tags::skip_ws(text, pos);
                if tags::tag_at(text, p, Ns::Dsml).is_none() {
                    // Prose after the last invoke: the block closer is missing.
                    end = tag.end;
                    break;
                }
            }
            (true, name) if Some(name) == block => {
                end = tag.end;
                break;
            }
            (false, name) if name == "function_calls" || name == "tool_calls" => {
                // A new block before this one closed.
                end = tag.start;
                break;
            }
            _ => pos = tag.end,
        }
    }
    calls.extend(current.take().map(|c| c.finish(end)));
    if calls.is_empty() {
        return None;
    }
    Some(Parsed { end, calls })
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

    fn finish(self, end: usize) -> RawCall<'a> {
        let arguments = match self.json {
            Some(json) if self.args.is_empty() => Cow::Borrowed(json),
            _ => Cow::Owned(self.args.finish()),
        };
        RawCall {
            name: Cow::Borrowed(self.name),
            arguments,
            id: None,
            format: self.format,
            span: Span::new(self.start, end),
        }
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

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use serde_json::{Value, json};
    use std::collections::HashMap;

    pub(in super::super) fn calls(
        text: &str,
        format: Format,
        tools: Option<&HashMap<String, Value>>,
    ) -> Vec<(String, Value)> {
        let cx = Cx { tools: tools.map(|t| t as &dyn super::super::ToolLookup) };
        let at = ["<｜", "<|"].iter().filter_map(|m| text.find(m)).min().unwrap();
        parse_dsml(text, at, &cx, format)
            .map(|p| {
                p.calls
                    .into_iter()
                    .map(|c| {
                        assert_eq!(c.format, format);
                        (c.name.into_owned(), serde_json::from_str(&c.arguments).unwrap())
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    const V32: Format = Format::DeepseekV32Dsml;

    #[test]
    fn corpus_examples() {
        let text = "Sure <｜DSML｜function_calls>\n<｜DSML｜invoke name=\"get_weather\">\n<｜DSML｜parameter name=\"location\" string=\"true\">SF</｜DSML｜parameter><｜DSML｜parameter name=\"n\" string=\"false\">10</｜DSML｜parameter>\n</｜DSML｜invoke>\n<｜DSML｜invoke name=\"get_time\">\n</｜DSML｜invoke>\n</｜DSML｜function_calls>";
        assert_eq!(
            calls(text, V32, None),
            vec![("get_weather".into(), json!({"location": "SF", "n": 10})), ("get_time".into(), json!({}))]
        );
    }

    #[test]
    fn schema_wins_over_string_attr() {
        let mut tools = HashMap::new();
        tools.insert(
            "score".to_owned(),
            json!({"properties": {"value": {"type": "integer"}, "text": {"type": "string"}}}),
        );
        let text = "<｜DSML｜function_calls><｜DSML｜invoke name=\"score\"><｜DSML｜parameter name=\"value\" string=\"true\">42</｜DSML｜parameter><｜DSML｜parameter name=\"text\" string=\"false\">null</｜DSML｜parameter></｜DSML｜invoke></｜DSML｜function_calls>";
        assert_eq!(calls(text, V32, Some(&tools)), vec![("score".into(), json!({"value": 42, "text": "null"}))]);
    }

    #[test]
    fn json_body() {
        let text = "<｜DSML｜function_calls>\n  <｜DSML｜invoke name=\"search\">\n  {\n \"query\": \"x\", \"topn\": 10\n }\n </｜DSML｜invoke>\n</｜DSML｜function_calls>";
        assert_eq!(calls(text, V32, None), vec![("search".into(), json!({"query": "x", "topn": 10}))]);
    }

    #[test]
    fn ascii_bars_and_corrupted_closers() {
        let text = "<|DSML|function_calls>\n<|DSML|invoke name=\"f\">\n<|DSML|parameter name=\"a\" string=\"true\">x</｜｜DSML｜｜parameter>\n<｜DSML｜parameter name=\"b\" string=\"true\">y</|DSML|parameter>\n</｜｜DSML｜｜invoke>\n</|DSML|function_calls>";
        assert_eq!(calls(text, V32, None), vec![("f".into(), json!({"a": "x", "b": "y"}))]);
    }

    #[test]
    fn missing_closers_and_cut_off() {
        let text = "<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"f\">\n<｜DSML｜parameter name=\"a\" string=\"true\">x\n<｜DSML｜parameter name=\"b\" string=\"false\">[1, 2]";
        assert_eq!(calls(text, V32, None), vec![("f".into(), json!({"a": "x", "b": [1, 2]}))]);
        let text = "<｜DSML｜invoke name=\"f\">\n<｜DSML｜parameter name=\"a\" string=\"true\">x</｜DSML｜parameter>\n</｜DSML｜invoke>\nDone.";
        let cx = Cx { tools: None };
        let parsed = parse(text, 0, &cx).unwrap();
        assert_eq!(&text[parsed.end..], "\nDone.");
        assert_eq!(calls("<｜DSML｜function_calls>\n", V32, None), vec![]);
    }

    #[test]
    fn v4_block_is_not_v32() {
        let text = "<｜DSML｜tool_calls><｜DSML｜invoke name=\"f\"></｜DSML｜invoke></｜DSML｜tool_calls>";
        assert_eq!(calls(text, V32, None), vec![]);
    }
}
