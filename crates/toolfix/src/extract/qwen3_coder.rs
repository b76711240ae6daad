//! Qwen3-Coder: `<tool_call>\n<function=N>\n<parameter=K>\nraw\n</parameter>\n</function>\n</tool_call>`.
//!
//! The opening `<tool_call>` is sometimes missing (a bare `<function=N>` block still is a
//! call); `</parameter>`, `</function>` and `</tool_call>` may be missing too, and a call
//! cut off at the end keeps what was given. One newline after `<parameter=K>` and one
//! before `</parameter>` are framing. A `</tool_call>` or `</function>` inside a value is
//! kept when a `</parameter>` follows before the next parameter. Seed-OSS shares this
//! grammar with `<seed:tool_call>` blocks.

use super::Format;
use super::params::{Args, Untyped};
use super::parsed::{Cx, Parsed, RawCall};
use super::tags::{self, Ns, Tag};
use crate::Span;
use std::borrow::Cow;

/// Start markers: the block tag, or a bare function tag.
pub(crate) const MARKERS: &[&str] = &["<tool_call>", "<function="];

/// Parses Qwen3-Coder call blocks starting at `at`.
pub(crate) fn parse<'a>(text: &'a str, at: usize, cx: &Cx<'_>) -> Option<Parsed<'a>> {
    parse_dialect(text, at, cx, &QWEN)
}

/// The block tag and format of a dialect of this grammar.
#[derive(Debug)]
pub(crate) struct Dialect {
    /// Block tag name (`tool_call`, `seed:tool_call`).
    pub(crate) block: &'static str,
    /// The format reported.
    pub(crate) format: Format,
}

const QWEN: Dialect = Dialect { block: "tool_call", format: Format::Qwen3Coder };

/// Parses consecutive blocks of the dialect starting at `at`.
pub(crate) fn parse_dialect<'a>(text: &'a str, at: usize, cx: &Cx<'_>, dialect: &Dialect) -> Option<Parsed<'a>> {
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
    Some(Parsed { end, calls })
}

/// Where a call starts at `pos` (after whitespace when `pos` is past the first block):
/// the block tag followed by a function tag, or a bare function tag. `None` when no call
/// starts there (a Hermes JSON body, prose, ...).
fn block_start(text: &str, pos: usize, dialect: &Dialect) -> Option<Start> {
    let p = tags::skip_ws(text, pos);
    let tag = tags::tag_at(text, p, Ns::Plain)?;
    if tag.is_open(dialect.block) {
        let f = tags::skip_ws(text, tag.end);
        if tags::at(text, f, "<function=") && !is_json_body(text, f) {
            return Some(Start { call: p, function: f });
        }
        return None;
    }
    if tags::at(text, p, "<function=") && !is_json_body(text, p) {
        return Some(Start { call: p, function: p });
    }
    None
}

/// Functionary v3.1 writes `<function=N>{json}`: not ours.
fn is_json_body(text: &str, function: usize) -> bool {
    match tags::tag_at(text, function, Ns::Plain) {
        Some(tag) => {
            let b = tags::skip_ws(text, tag.end);
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
        .and_then(|tag| Some((tags::clean_name(tag.rest.strip_prefix('=')?)?, tag.end)))
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
    let mut end = text.len();
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
                end = next;
                break;
            }
        } else if tag.is_close("function") {
            end = tag.end;
            let p = tags::skip_ws(text, end);
            if let Some(close) = tags::tag_at(text, p, Ns::Plain) {
                if close.is_close(dialect.block) {
                    end = close.end;
                }
            }
            break;
        } else if tag.is_close(dialect.block) {
            end = tag.end;
            break;
        } else if starts_call(&tag, dialect) {
            // A new call before this one closed.
            end = tag.start;
            break;
        } else {
            pos = tag.end;
        }
    }
    let call = RawCall {
        name: Cow::Borrowed(name),
        arguments: Cow::Owned(args.finish()),
        id: None,
        format: dialect.format,
        span: Span::new(start.call, end),
    };
    (Some(call), end)
}

/// True when the next non-whitespace at `pos` is a tag (or the text ends there).
pub(crate) fn markup_or_end(text: &str, pos: usize) -> bool {
    let p = tags::skip_ws(text, pos);
    text.get(p..).is_none_or(|rest| rest.is_empty() || rest.starts_with('<'))
}

fn starts_call(tag: &Tag<'_>, dialect: &Dialect) -> bool {
    tag.is_open(dialect.block) || tag.is_open("function")
}

/// The raw value of a parameter whose text starts at `from`, and where parsing goes on.
fn param_value<'a>(text: &'a str, from: usize, dialect: &Dialect) -> (&'a str, usize) {
    // A closer of the call inside the value ends it only if no `</parameter>` follows
    // before the next parameter or call.
    let mut fallback: Option<usize> = None;
    let mut pos = from;
    loop {
        let Some(tag) = tags::next_tag(text, pos, Ns::Plain) else {
            let stop = fallback.unwrap_or(text.len());
            return (text.get(from..stop).unwrap_or(""), stop);
        };
        if tag.is_close("parameter") {
            return (text.get(from..tag.start).unwrap_or(""), tag.end);
        }
        if tag.is_open("parameter") || starts_call(&tag, dialect) {
            let stop = fallback.unwrap_or(tag.start);
            return (text.get(from..stop).unwrap_or(""), stop);
        }
        if fallback.is_none() && (tag.is_close("function") || tag.is_close(dialect.block)) {
            fallback = Some(tag.start);
        }
        pos = tag.end;
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};
    use std::collections::HashMap;

    fn calls(text: &str, tools: Option<&HashMap<String, Value>>) -> Vec<(String, Value)> {
        let cx = Cx { tools: tools.map(|t| t as &dyn super::super::ToolLookup) };
        let at = MARKERS.iter().filter_map(|m| text.find(m)).min().unwrap();
        parse(text, at, &cx)
            .map(|p| {
                p.calls
                    .into_iter()
                    .map(|c| {
                        let v = serde_json::from_str(&c.arguments).unwrap();
                        (c.name.into_owned(), v)
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    fn weather_tools() -> HashMap<String, Value> {
        let mut t = HashMap::new();
        t.insert(
            "calculate_area".to_owned(),
            json!({"type": "object", "properties": {"shape": {"type": "string"},
                "dimensions": {"type": "object"}, "precision": {"type": "integer"}}}),
        );
        t
    }

    #[test]
    fn single_with_framing_newlines() {
        let text = "Sure.<tool_call>\n<function=get_current_weather>\n<parameter=city>\nDallas\n</parameter>\n<parameter=state>\nTX\n</parameter>\n</function>\n</tool_call>";
        let got = calls(text, None);
        assert_eq!(got, vec![("get_current_weather".into(), json!({"city": "Dallas", "state": "TX"}))]);
        let cx = Cx { tools: None };
        assert_eq!(parse(text, 5, &cx).unwrap().end, text.len());
    }

    #[test]
    fn typed_through_schema() {
        let text = "<tool_call>\n<function=calculate_area>\n<parameter=shape>\nrectangle\n</parameter>\n<parameter=dimensions>\n{\"width\": 10, \n \"height\": 20}\n</parameter>\n<parameter=precision>\n2\n</parameter>\n</function>\n</tool_call>";
        let tools = weather_tools();
        assert_eq!(
            calls(text, Some(&tools)),
            vec![(
                "calculate_area".into(),
                json!({"shape": "rectangle", "dimensions": {"width": 10, "height": 20}, "precision": 2})
            )]
        );
    }

    #[test]
    fn parallel_blocks() {
        let one = "<tool_call>\n<function=f>\n<parameter=a>1</parameter>\n</function>\n</tool_call>";
        let text = format!("{one}\n{one}\nafter");
        let cx = Cx { tools: None };
        let parsed = parse(&text, 0, &cx).unwrap();
        assert_eq!(parsed.calls.len(), 2);
        assert_eq!(&text[parsed.end..], "\nafter");
    }

    #[test]
    fn missing_tags() {
        // Opening tag missing, closing present.
        let text =
            "I'll check.\n\n<function=get_weather>\n<parameter=city>\nDallas\n</parameter>\n</function>\n</tool_call>";
        assert_eq!(calls(text, None), vec![("get_weather".into(), json!({"city": "Dallas"}))]);
        // </parameter> missing.
        let text = "<tool_call>\n<function=w>\n<parameter=city>\nDallas\n<parameter=state>\nTX\n</parameter>\n</function>\n</tool_call>";
        assert_eq!(calls(text, None), vec![("w".into(), json!({"city": "Dallas", "state": "TX"}))]);
        // Cut off mid-value.
        let text = "<tool_call>\n<function=w>\n<parameter=location>London";
        assert_eq!(calls(text, None), vec![("w".into(), json!({"location": "London"}))]);
    }

    #[test]
    fn broken_function_tag_skipped() {
        let text = "<tool_call>\n<function=bad_no_gt\n</function>\n</tool_call>\n<tool_call>\n<function=good>\n<parameter=city>Dallas</parameter>\n</function>\n</tool_call>";
        assert_eq!(calls(text, None), vec![("good".into(), json!({"city": "Dallas"}))]);
        let text = "<tool_call>\n<function=w\n<parameter=city>Dallas</parameter>\n</function>\n</tool_call>";
        assert_eq!(calls(text, None), vec![]);
    }

    #[test]
    fn closer_inside_value_kept() {
        let text = "<tool_call>\n<function=write>\n<parameter=code>\nprint(\"</tool_call>\")\n</parameter>\n</function>\n</tool_call>";
        assert_eq!(calls(text, None), vec![("write".into(), json!({"code": "print(\"</tool_call>\")"}))]);
    }

    #[test]
    fn prose_is_not_swallowed() {
        let cx = Cx { tools: None };
        assert!(parse("Write <function=name> then stop.\nMore prose.", 6, &cx).is_none());
        let text = "<tool_call>\n<function=f>\n<parameter=a>1</parameter>\nThe answer follows.";
        let parsed = parse(text, 0, &cx).unwrap();
        assert_eq!(&text[parsed.end..], "\nThe answer follows.");
    }

    #[test]
    fn not_ours() {
        let cx = Cx { tools: None };
        assert!(parse("<tool_call>{\"name\": \"f\"}</tool_call>", 0, &cx).is_none());
        assert!(parse("<function=f>{\"a\": 1}</function>", 0, &cx).is_none());
        assert!(parse("<tool_call>get_weather\n<arg_key>", 0, &cx).is_none());
    }

    #[test]
    fn half_open_tags_are_linear() {
        let text = "<tool_call><function=f><parameter=a>".repeat(5000);
        let cx = Cx { tools: None };
        let mut pos = 0;
        let mut n = 0;
        while let Some(off) = text[pos..].find('<') {
            let at = pos + off;
            pos = match parse(&text, at, &cx) {
                Some(p) => {
                    n += p.calls.len();
                    p.end.max(at + 1)
                }
                None => at + 1,
            };
        }
        assert_eq!(n, 5000);
    }
}
