//! gpt-oss Harmony: `<|start|>assistant<|channel|>commentary to=functions.N <|constrain|>json<|message|>{json}<|call|>`.
//!
//! A message is a call when its header (role part or channel part) names a recipient
//! `to=functions.N` (or another tool namespace, `to=browser.search`). The first message of
//! a reply usually lacks `<|start|>assistant`, so a bare `<|channel|>` header counts too.
//! `<|constrain|>json` is optional; the end token (`<|call|>`, `<|end|>`) is often cut:
//! the body then runs to the next `<|start|>` or the end. Messages without a recipient
//! (analysis, final) are not calls: the driver reads them as reasoning and prose.

use super::Format;
use super::json::scan::{End, value_end};
use super::parsed::{Cx, Parsed, RawCall};
use super::text::{clean_name, floor, is_at};
use crate::Span;
use std::borrow::Cow;

const START: &str = "<|start|>";
const CHANNEL: &str = "<|channel|>";
const MESSAGE: &str = "<|message|>";

/// Longest header read before `<|message|>`.
const MAX_HEADER: usize = 512;

/// Parses one Harmony message at `at` when it is addressed to a tool.
pub(crate) fn parse<'a>(text: &'a str, at: usize, _cx: &Cx<'_>) -> Option<Parsed<'a>> {
    let header_start = if is_at(text, at, START) {
        at + START.len()
    } else if is_at(text, at, CHANNEL) {
        at + CHANNEL.len()
    } else {
        return None;
    };
    let window = text.get(header_start..)?;
    let window = window.get(..floor(window, MAX_HEADER.min(window.len())))?;
    let message = window.find(MESSAGE)?;
    let header = window.get(..message)?;
    if header.contains("<|end|>") || header.contains("<|call|>") || header.contains(START) {
        return None;
    }
    let name = recipient(header)?;
    let body_start = header_start + message + MESSAGE.len();
    let rest = text.get(body_start..)?;
    let (body_len, end, at_end) = match ["<|call|>", "<|end|>", "<|return|>", START]
        .iter()
        .filter_map(|t| rest.find(t).map(|i| (i, *t)))
        .min_by_key(|(i, _)| *i)
    {
        Some((i, START)) => (i, body_start + i, false),
        Some((i, token)) => (i, body_start + i + token.len(), false),
        None => (rest.len(), text.len(), true),
    };
    let body = rest.get(..body_len)?.trim();
    if body.starts_with('<') {
        // Markup, not JSON: another format's block (Muse's `<atem:function_calls>`).
        return None;
    }
    // The text ended in the body (`<|call|>` is a stop token, often not in the text):
    // cut unless it is a complete JSON value.
    let cut = at_end && (body.is_empty() || value_end(body, 0) != Some(End::Closed(body.len())));
    let args = if body.is_empty() { "{}" } else { body };
    let call = RawCall::new(Cow::Borrowed(name), Cow::Borrowed(args), Format::GptOssHarmony, Span::new(at, end));
    Some(Parsed { end, calls: vec![call.cut_if(cut)] })
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
    clean_name(name)
}
