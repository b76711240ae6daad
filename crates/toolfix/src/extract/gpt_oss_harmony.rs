//! gpt-oss Harmony: `<|start|>assistant<|channel|>commentary to=functions.N <|constrain|>json<|message|>{json}<|call|>`.
//!
//! A message is a call when its header (role part or channel part) names a recipient
//! `to=functions.N` (or another tool namespace, `to=browser.search`). The first message of
//! a reply usually lacks `<|start|>assistant`, so a bare `<|channel|>` header counts too.
//! `<|constrain|>json` is optional; the end token (`<|call|>`, `<|end|>`) is often cut:
//! the body then runs to the next `<|start|>` or the end. Messages without a recipient
//! (analysis, final) are not calls: the driver reads them as reasoning and prose.

use super::Format;
use super::parsed::{Cx, Parsed, RawCall};
use super::tags;
use crate::Span;
use std::borrow::Cow;

const START: &str = "<|start|>";
const CHANNEL: &str = "<|channel|>";
const MESSAGE: &str = "<|message|>";

/// Longest header read before `<|message|>`.
const MAX_HEADER: usize = 512;

/// Start markers: a message start, or a channel header.
pub(crate) const MARKERS: &[&str] = &[START, CHANNEL];

/// Parses one Harmony message at `at` when it is addressed to a tool.
pub(crate) fn parse<'a>(text: &'a str, at: usize, _cx: &Cx<'_>) -> Option<Parsed<'a>> {
    let header_start = if tags::at(text, at, START) {
        at + START.len()
    } else if tags::at(text, at, CHANNEL) {
        at + CHANNEL.len()
    } else {
        return None;
    };
    let window = text.get(header_start..)?;
    let window = window.get(..floor(window, MAX_HEADER))?;
    let message = window.find(MESSAGE)?;
    let header = window.get(..message)?;
    if header.contains("<|end|>") || header.contains("<|call|>") || header.contains(START) {
        return None;
    }
    let name = recipient(header)?;
    let body_start = header_start + message + MESSAGE.len();
    let rest = text.get(body_start..)?;
    let (body_len, end) = match ["<|call|>", "<|end|>", "<|return|>", START]
        .iter()
        .filter_map(|t| rest.find(t).map(|i| (i, *t)))
        .min_by_key(|(i, _)| *i)
    {
        Some((i, START)) => (i, body_start + i),
        Some((i, token)) => (i, body_start + i + token.len()),
        None => (rest.len(), text.len()),
    };
    let body = rest.get(..body_len)?.trim();
    if body.starts_with('<') {
        // Markup, not JSON: another format's block (Muse's `<atem:function_calls>`).
        return None;
    }
    let call = RawCall {
        name: Cow::Borrowed(name),
        arguments: Cow::Borrowed(if body.is_empty() { "{}" } else { body }),
        id: None,
        format: Format::GptOssHarmony,
        span: Span::new(at, end),
    };
    Some(Parsed { end, calls: vec![call] })
}

/// The largest char boundary of `text` at or below `max`.
fn floor(text: &str, max: usize) -> usize {
    let mut i = max.min(text.len());
    while i > 0 && !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The tool named by `to=` in a header, without the `functions.` namespace.
fn recipient(header: &str) -> Option<&str> {
    let mut search = header;
    let to = loop {
        let i = search.find("to=")?;
        let before = search.get(..i)?.chars().next_back();
        let after = search.get(i + 3..)?;
        if before.is_none_or(|c| c.is_whitespace() || c == '>') {
            break after;
        }
        search = after;
    };
    let len = to.find(|c: char| c.is_whitespace() || c == '<').unwrap_or(to.len());
    let target = to.get(..len)?;
    let name = target.strip_prefix("functions.").unwrap_or(target);
    tags::clean_name(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn calls(text: &str) -> Vec<(String, String)> {
        let cx = Cx { tools: None };
        let mut out = Vec::new();
        let mut pos = 0;
        while let Some(at) = MARKERS.iter().filter_map(|m| text[pos..].find(m)).min().map(|i| pos + i) {
            match parse(text, at, &cx) {
                Some(p) => {
                    out.extend(p.calls.into_iter().map(|c| (c.name.into_owned(), c.arguments.into_owned())));
                    pos = p.end;
                }
                None => pos = at + 1,
            }
        }
        out
    }

    #[test]
    fn corpus_example() {
        let text = "<|channel|>analysis<|message|>Reasoning...<|end|><|start|>assistant<|channel|>commentary to=functions.read_file <|constrain|>json<|message|>{\n  \"files\": []\n}<|call|><|start|>assistant<|channel|>final<|message|>Done.";
        assert_eq!(calls(text), vec![("read_file".into(), "{\n  \"files\": []\n}".into())]);
    }

    #[test]
    fn recipient_in_role_header_and_cut_end() {
        let text =
            "<|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>{\"city\": \"Paris\"}";
        assert_eq!(calls(text), vec![("get_weather".into(), "{\"city\": \"Paris\"}".into())]);
        let text = "<|channel|>commentary to=functions.a<|message|>{}<|end|><|start|>assistant<|channel|>commentary to=browser.search <|constrain|>json<|message|>{\"q\": \"x\"}<|call|>";
        assert_eq!(calls(text), vec![("a".into(), "{}".into()), ("browser.search".into(), "{\"q\": \"x\"}".into())]);
    }

    #[test]
    fn muse_body_is_left_to_muse() {
        let text = "<|channel|>commentary to=get_weather<|message|><atem:function_calls><atem:invoke name=\"get_weather\"></atem:invoke></atem:function_calls>";
        assert_eq!(calls(text), vec![]);
    }

    #[test]
    fn not_calls() {
        assert_eq!(calls("<|channel|>final<|message|>Hello to=functions.x"), vec![]);
        assert_eq!(calls("<|start|>assistant<|channel|>analysis<|message|>thinking<|end|>"), vec![]);
        assert_eq!(calls("<|channel|>commentary to=functions.f"), vec![]);
    }
}
