//! Kimi K2: `<|tool_calls_section_begin|>` then per call
//! `<|tool_call_begin|>functions.N:IDX<|tool_call_argument_begin|>{json}<|tool_call_end|>`,
//! then `<|tool_calls_section_end|>`.
//!
//! The id (`functions.N:IDX`, also written `N:IDX`) is the call id and carries the name.
//! A bare counter id (`0`) names no tool: such a call is skipped, as is an id without
//! `:IDX` (`functions.bad.0`). The section markers may be missing, and a call cut off at
//! the end keeps its (partial) JSON; the driver salvages it.

use super::Format;
use super::parsed::{Cx, Parsed, RawCall};
use super::tags;
use crate::Span;
use std::borrow::Cow;

const SECTION_BEGIN: &str = "<|tool_calls_section_begin|>";
const SECTION_END: &str = "<|tool_calls_section_end|>";
const CALL_BEGIN: &str = "<|tool_call_begin|>";
const CALL_END: &str = "<|tool_call_end|>";
const ARG_BEGIN: &str = "<|tool_call_argument_begin|>";

/// Start markers: the section, or a call when the section marker is missing.
pub(crate) const MARKERS: &[&str] = &[SECTION_BEGIN, CALL_BEGIN];

/// Parses a Kimi K2 tool-call section (or bare calls) at `at`.
pub(crate) fn parse<'a>(text: &'a str, at: usize, cx: &Cx<'_>) -> Option<Parsed<'a>> {
    let mut pos = if tags::at(text, at, SECTION_BEGIN) {
        at + SECTION_BEGIN.len()
    } else if tags::at(text, at, CALL_BEGIN) {
        at
    } else {
        return None;
    };
    let mut calls = Vec::new();
    let mut end = pos;
    loop {
        let p = tags::skip_ws(text, pos);
        if tags::at(text, p, SECTION_END) {
            end = p + SECTION_END.len();
            break;
        }
        if !tags::at(text, p, CALL_BEGIN) {
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
        let (args_end, after) = match next_token(text, args_start) {
            Some((i, CALL_END)) => (i, i + CALL_END.len()),
            Some((i, _)) => (i, i),
            None => (text.len(), text.len()),
        };
        let id = text.get(id_start..id_end).unwrap_or("").trim();
        let arguments = text.get(args_start..args_end).unwrap_or("").trim();
        let arguments = if arguments.is_empty() { "{}" } else { arguments };
        let name = match name_from_id(id) {
            Some(name) => Some(Cow::Borrowed(name)),
            None if is_counter(id) => infer_name(cx, arguments).map(Cow::Owned),
            None => None,
        };
        if let Some(name) = name {
            calls.push(RawCall {
                name,
                arguments: Cow::Borrowed(arguments),
                id: Some(Cow::Borrowed(id)),
                format: Format::KimiK2,
                span: Span::new(p, after),
            });
        }
        end = after;
        pos = after;
    }
    if calls.is_empty() {
        return None;
    }
    Some(Parsed { end, calls })
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

/// The tool a bare counter id (`0`) must mean: the only tool offered, or the only one
/// whose schema has every argument key. `None` when that is not unique (no guess).
fn infer_name(cx: &Cx<'_>, arguments: &str) -> Option<String> {
    let tools = cx.tools?;
    let names = tools.names();
    if let [only] = names.as_slice() {
        return Some((*only).to_owned());
    }
    let value = crate::salvage::salvage(arguments).ok()?.to_value().ok()?;
    let keys: Vec<&String> = value.as_object()?.keys().collect();
    let mut fits = names.iter().filter(|name| {
        let props = tools.parameters(name).and_then(|s| s.get("properties")).and_then(|p| p.as_object());
        props.is_some_and(|props| keys.iter().all(|k| props.contains_key(k.as_str())))
    });
    let first = fits.next()?;
    fits.next().is_none().then(|| (*first).to_owned())
}

/// The tool name in a call id: `functions.N:IDX` or `N:IDX`. `None` for a bare counter
/// or an id without `:IDX`.
fn name_from_id(id: &str) -> Option<&str> {
    let (name, index) = id.rsplit_once(':')?;
    if index.is_empty() || !index.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let name = name.strip_prefix("functions.").unwrap_or(name);
    tags::clean_name(name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn calls(text: &str) -> Vec<(String, Value, String)> {
        let at = MARKERS.iter().filter_map(|m| text.find(m)).min().unwrap();
        let cx = Cx { tools: None };
        parse(text, at, &cx)
            .map(|p| {
                p.calls
                    .into_iter()
                    .map(|c| {
                        let args = serde_json::from_str(&c.arguments).unwrap_or(Value::Null);
                        (c.name.into_owned(), args, c.id.unwrap().into_owned())
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    #[test]
    fn corpus_examples() {
        let text = "Compare. <|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0 <|tool_call_argument_begin|>{\"city\": \"Beijing\"}<|tool_call_end|><|tool_call_begin|>get_news:1<|tool_call_argument_begin|> {\"topic\": \"tech\"} <|tool_call_end|><|tool_calls_section_end|> after";
        assert_eq!(
            calls(text),
            vec![
                ("get_weather".into(), json!({"city": "Beijing"}), "functions.get_weather:0".into()),
                ("get_news".into(), json!({"topic": "tech"}), "get_news:1".into()),
            ]
        );
        let cx = Cx { tools: None };
        let at = text.find(SECTION_BEGIN).unwrap();
        assert_eq!(&text[parse(text, at, &cx).unwrap().end..], " after");
    }

    #[test]
    fn bad_ids_skipped() {
        let text = "<|tool_calls_section_begin|><|tool_call_begin|>functions.invalid.0 <|tool_call_argument_begin|>{\"a\": 1}<|tool_call_end|><|tool_call_begin|>functions.valid:1 <|tool_call_argument_begin|>{\"b\": 2}<|tool_call_end|><|tool_calls_section_end|>";
        assert_eq!(calls(text), vec![("valid".into(), json!({"b": 2}), "functions.valid:1".into())]);
        let text = "<|tool_calls_section_begin|><|tool_call_begin|>0 <|tool_call_argument_begin|>{\"a\": 1}<|tool_call_end|><|tool_calls_section_end|>";
        assert_eq!(calls(text), vec![]);
    }

    #[test]
    fn broken_json_and_cut_off_kept() {
        let text = "<|tool_calls_section_begin|><|tool_call_begin|>functions.bad:0 <|tool_call_argument_begin|>{\"city\": \"Beijing\"<|tool_call_end|><|tool_call_begin|>functions.cut:1 <|tool_call_argument_begin|>{\"x\": ";
        let cx = Cx { tools: None };
        let parsed = parse(text, 0, &cx).unwrap();
        let got: Vec<_> = parsed.calls.iter().map(|c| (c.name.as_ref(), c.arguments.as_ref())).collect();
        assert_eq!(got, vec![("bad", "{\"city\": \"Beijing\""), ("cut", "{\"x\":")]);
        assert_eq!(parsed.end, text.len());
    }

    #[test]
    fn bare_counter_inferred_from_tools() {
        use serde_json::Value;
        use std::collections::HashMap;
        let weather = json!({"properties": {"city": {"type": "string"}, "unit": {"type": "string"}}});
        let one: HashMap<String, Value> = HashMap::from([("get_weather".to_owned(), weather.clone())]);
        let two: HashMap<String, Value> = HashMap::from([
            ("get_weather".to_owned(), weather),
            ("book_flight".to_owned(), json!({"properties": {"city": {"type": "string"}}})),
        ]);
        let run = |text: &str, tools: &HashMap<String, Value>| -> Vec<String> {
            let cx = Cx { tools: Some(tools) };
            parse(text, 0, &cx).map(|p| p.calls.into_iter().map(|c| c.name.into_owned()).collect()).unwrap_or_default()
        };
        let both = "<|tool_calls_section_begin|><|tool_call_begin|>0 <|tool_call_argument_begin|>{\"city\": \"Tokyo\", \"unit\": \"c\"}<|tool_call_end|><|tool_calls_section_end|>";
        let city = "<|tool_calls_section_begin|><|tool_call_begin|>0 <|tool_call_argument_begin|>{\"city\": \"Tokyo\"}<|tool_call_end|><|tool_calls_section_end|>";
        assert_eq!(run(city, &one), vec!["get_weather"]);
        assert_eq!(run(both, &two), vec!["get_weather"]);
        assert_eq!(run(city, &two), Vec::<String>::new());
        let cx = Cx { tools: None };
        assert!(parse(both, 0, &cx).is_none());
    }

    #[test]
    fn missing_section_marker() {
        let text = "<|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{}<|tool_call_end|>";
        assert_eq!(calls(text), vec![("f".into(), json!({}), "functions.f:0".into())]);
        let cx = Cx { tools: None };
        assert!(parse("invalid:0<|tool_call_argument_begin|>{}", 0, &cx).is_none());
    }
}
