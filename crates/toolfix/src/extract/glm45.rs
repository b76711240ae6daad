//! GLM-4.5/4.6: `<tool_call>N\n<arg_key>K</arg_key>\n<arg_value>raw</arg_value>\n</tool_call>`.
//!
//! The name runs to the first newline (GLM-4.6 sometimes writes a literal backslash-n
//! instead). GLM-4.7 (`glm47`) drops the newline: `<tool_call>N<arg_key>K</arg_key>...`;
//! both share this parser, each claiming its own shape. Values are raw text typed through
//! the schema, whitespace kept. A missing `</tool_call>` (cut off) still yields the call;
//! a `</tool_call>` inside a value is kept when `</arg_value>` follows before the next key.

use super::Format;
use super::params::{Args, Untyped};
use super::parsed::{Cx, Parsed, RawCall};
use super::tags::{self, Ns};
use crate::Span;
use std::borrow::Cow;

/// Start marker.
pub(crate) const MARKERS: &[&str] = &["<tool_call>"];

/// Parses a GLM-4.5 call (name then newline) at `at`.
pub(crate) fn parse<'a>(text: &'a str, at: usize, cx: &Cx<'_>) -> Option<Parsed<'a>> {
    parse_glm(text, at, cx, Format::Glm45)
}

/// Parses one GLM call at `at` if its shape is that of `format` (`Glm45`: the name ends
/// at a newline; `Glm47`: at `<arg_key>` or `</tool_call>`).
pub(crate) fn parse_glm<'a>(text: &'a str, at: usize, cx: &Cx<'_>, format: Format) -> Option<Parsed<'a>> {
    let open = tags::tag_at(text, at, Ns::Plain).filter(|t| t.is_open("tool_call"))?;
    let body = text.get(open.end..)?;
    let name_len = body.find(['\n', '\r', '<', '\\']).unwrap_or(body.len());
    let raw_name = body.get(..name_len)?;
    if raw_name.starts_with([' ', '\t']) || raw_name.trim_end_matches([' ', '\t']).contains([' ', '\t']) {
        // `<tool_call> and </tool_call>` in a sentence: GLM writes the name right after the tag.
        return None;
    }
    let name = tags::clean_name(raw_name)?;
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
    let end = end.unwrap_or(text.len());
    let call = RawCall {
        name: Cow::Borrowed(name),
        arguments: Cow::Owned(args.finish()),
        id: None,
        format,
        span: Span::new(at, end),
    };
    Some(Parsed { end, calls: vec![call] })
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    pub(super) fn calls(text: &str, format: Format) -> Vec<(String, Value)> {
        let cx = Cx { tools: None };
        let mut out = Vec::new();
        let mut pos = 0;
        while let Some(off) = text[pos..].find("<tool_call>") {
            let at = pos + off;
            match parse_glm(text, at, &cx, format) {
                Some(p) => {
                    for c in p.calls {
                        assert_eq!(c.format, format);
                        out.push((c.name.into_owned(), serde_json::from_str(&c.arguments).unwrap()));
                    }
                    pos = p.end;
                }
                None => pos = at + 1,
            }
        }
        out
    }

    #[test]
    fn corpus_examples() {
        let text = "<tool_call>get_current_weather\n    <arg_key>city</arg_key>\n    <arg_value>Dallas</arg_value>\n    <arg_key>state</arg_key>\n    <arg_value>TX</arg_value>\n    </tool_call>";
        assert_eq!(
            calls(text, Format::Glm45),
            vec![("get_current_weather".into(), json!({"city": "Dallas", "state": "TX"}))]
        );
        let text = "<tool_call>get_current_time\n</tool_call>";
        assert_eq!(calls(text, Format::Glm45), vec![("get_current_time".into(), json!({}))]);
        let text = "<tool_call>calculate\n<arg_key>a</arg_key>\n<arg_value>42</arg_value>\n<arg_key>on</arg_key>\n<arg_value>true</arg_value>\n</tool_call>";
        assert_eq!(calls(text, Format::Glm45), vec![("calculate".into(), json!({"a": 42, "on": true}))]);
    }

    #[test]
    fn whitespace_and_quotes_kept() {
        let text =
            "<tool_call>send\n<arg_key>m</arg_key><arg_value>  Hello \"world\"\nNew line </arg_value></tool_call>";
        assert_eq!(calls(text, Format::Glm45), vec![("send".into(), json!({"m": "  Hello \"world\"\nNew line "}))]);
    }

    #[test]
    fn literal_backslash_n_and_escaped_json() {
        let text = "<tool_call>todo\\n<arg_key>todos</arg_key>\\n<arg_value>[{\\\"id\\\": \\\"1\\\"}]</arg_value>\n</tool_call>";
        assert_eq!(calls(text, Format::Glm45), vec![("todo".into(), json!({"todos": [{"id": "1"}]}))]);
    }

    #[test]
    fn malformed() {
        // Cut off: the call is kept.
        let text = "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Beijing</arg_value>";
        assert_eq!(calls(text, Format::Glm45), vec![("get_weather".into(), json!({"city": "Beijing"}))]);
        // Start tag only, or prose after it.
        assert_eq!(calls("<tool_call>   ", Format::Glm45), vec![]);
        assert_eq!(calls("<tool_call>get_weather", Format::Glm47), vec![]);
        assert_eq!(calls("<tool_call>{\"name\": \"f\"}</tool_call>", Format::Glm45), vec![]);
        assert_eq!(calls("<tool_call>\n<function=f>\n</function></tool_call>", Format::Glm45), vec![]);
        // A closer inside a value.
        let text = "<tool_call>w\n<arg_key>s</arg_key><arg_value>a</tool_call>b</arg_value></tool_call>";
        assert_eq!(calls(text, Format::Glm45), vec![("w".into(), json!({"s": "a</tool_call>b"}))]);
    }

    #[test]
    fn prose_is_not_swallowed() {
        assert_eq!(calls("<tool_call>Hello\nthere, this is prose.", Format::Glm45), vec![]);
        let text = "<tool_call>f\n<arg_key>a</arg_key><arg_value>1</arg_value>\nNow the answer.";
        let cx = Cx { tools: None };
        let parsed = parse(text, 0, &cx).unwrap();
        assert_eq!(&text[parsed.end..], "\nNow the answer.");
    }

    #[test]
    fn shapes_are_disjoint() {
        let text = "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Beijing</arg_value></tool_call>";
        assert_eq!(calls(text, Format::Glm45), vec![]);
        assert_eq!(calls(text, Format::Glm47).len(), 1);
    }
}
