//! gpt-oss Harmony: `<|start|>assistant<|channel|>commentary to=functions.N <|constrain|>json<|message|>{json}<|call|>`.
//!
//! A message's header names its channel (`analysis`, `commentary`, `final`) and may name a
//! recipient, in the role part (`<|start|>assistant to=functions.N<|channel|>commentary
//! json<|message|>`, as the template writes it) or in the channel part (`<|channel|>commentary
//! to=functions.N <|constrain|>json<|message|>`). The first message of a reply lacks
//! `<|start|>assistant` (the prompt ends with it), so a bare `<|channel|>` header counts,
//! and so does a raw completion that starts with the recipient (` to=functions.N<|channel|>…`).
//!
//! - `to=functions.N`, in any channel (`analysis` too): a call to `N`.
//! - Another recipient (the built-in tools `python`, `container.exec`, `browser.search`, …):
//!   a call only when that tool was offered. Otherwise the message is not a call: its text
//!   is reasoning in the `analysis` channel and is dropped elsewhere (what vLLM's Harmony
//!   parser does with such messages).
//! - `to=assistant`, or a message from a tool (`<|start|>functions.N to=assistant…`): a tool's
//!   answer, not a call; its header leaves the prose, its text stays.
//! - No recipient: `analysis` is reasoning (the driver's reasoning block, or here for a
//!   header written with spaces, `<|channel|> analysis<|message|>`); `final` and
//!   `commentary` (a preamble the user sees) are prose: their header leaves it.
//!
//! `<|constrain|>json` is optional; the end token (`<|call|>`, `<|end|>`) is often cut: the
//! body then runs to the next `<|start|>` or the end. A body that is not JSON (a built-in
//! tool's code) becomes the value of the tool's one string parameter, or stays a JSON string
//! the schema stage refuses.

use super::Format;
use super::json::scan::{End, value_end};
use super::parsed::{Cx, Parsed, RawCall};
use super::text::{clean_name, floor, is_at};
use crate::span::Span;
use std::borrow::Cow;

const START: &str = "<|start|>";
const CHANNEL: &str = "<|channel|>";
const MESSAGE: &str = "<|message|>";
const CONSTRAIN: &str = "<|constrain|>";

/// Markers where a raw completion starts with its recipient (the prompt ended with
/// `<|start|>assistant`).
pub(crate) const RAW_RECIPIENTS: &[&str] = &["to=functions.", "to=python", "to=browser.", "to=container."];

/// Longest header read before `<|message|>`.
const MAX_HEADER: usize = 512;

/// Parses one Harmony message at `at`: a call, or a message whose markup is not prose.
pub(crate) fn parse<'a>(text: &'a str, at: usize, cx: &Cx<'_>) -> Option<Parsed<'a>> {
    let (header_start, from) = if is_at(text, at, START) {
        (at + START.len(), From::Start)
    } else if is_at(text, at, CHANNEL) {
        (at + CHANNEL.len(), From::Channel)
    } else if RAW_RECIPIENTS.iter().any(|m| is_at(text, at, m)) && after_space(text, at) {
        (at, From::Recipient)
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
    let h = Header::read(header, from)?;
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
    let raw_body = rest.get(..body_len)?;
    let body = raw_body.trim();
    if matches!(h.recipient, Recipient::Function(_) | Recipient::Tool(_)) && body.starts_with('<') {
        // Markup, not JSON: another format's block (Muse's `<atem:function_calls>`).
        return None;
    }
    let name = match h.recipient {
        Recipient::Function(name) => name,
        Recipient::Tool(name) if cx.tools.is_some_and(|t| t.is_known(name)) => name,
        // A built-in tool that was not offered: not a call.
        Recipient::Tool(_) if h.channel == "analysis" => {
            return Some(Parsed::new(end, Vec::new()).with_reasoning(Span::new(body_start, body_start + body_len)));
        }
        Recipient::Tool(_) => return Some(Parsed::new(end, Vec::new())),
        // A tool's answer, a preamble or the final answer: the header is markup, the text
        // stays prose.
        Recipient::Assistant => return Some(Parsed::new(body_start, Vec::new())),
        Recipient::None if h.channel == "analysis" => {
            // Only once its end is known (the driver's block reads the usual spelling).
            if at_end {
                return None;
            }
            return Some(Parsed::new(end, Vec::new()).with_reasoning(Span::new(body_start, body_start + body_len)));
        }
        Recipient::None if matches!(h.channel, "final" | "commentary") => {
            return Some(Parsed::new(body_start, Vec::new()));
        }
        Recipient::None => return None,
    };
    // The text ended in the body (`<|call|>` is a stop token, often not in the text):
    // cut unless it is a complete JSON value.
    let json = value_end(body, 0) == Some(End::Closed(body.len()));
    let cut = at_end && (body.is_empty() || !json);
    let args = if body.is_empty() {
        Cow::Borrowed("{}")
    } else if json || h.json || body.starts_with(['{', '[']) {
        Cow::Borrowed(body)
    } else {
        // Raw text (a built-in tool's code): the value of the tool's one string parameter.
        Cow::Owned(raw_arguments(name, body, cx))
    };
    let call = RawCall::new(Cow::Borrowed(name), args, Format::GptOssHarmony, Span::new(at, end));
    Some(Parsed::new(end, vec![call.cut_if(cut)]))
}

/// Where the header was found.
#[derive(Clone, Copy, PartialEq, Eq)]
enum From {
    /// After `<|start|>`: the role comes first.
    Start,
    /// After `<|channel|>`.
    Channel,
    /// At `to=`: a raw completion after `<|start|>assistant`.
    Recipient,
}

/// Who a message is addressed to.
#[derive(Clone, Copy)]
enum Recipient<'a> {
    /// No one: the user sees it (or it is reasoning).
    None,
    /// `to=functions.N`.
    Function(&'a str),
    /// Another tool namespace (`python`, `browser.search`).
    Tool(&'a str),
    /// `to=assistant`, or the message is a tool's answer.
    Assistant,
}

/// What a header says.
struct Header<'a> {
    channel: &'a str,
    recipient: Recipient<'a>,
    /// `<|constrain|>json`, or `json` after the channel name.
    json: bool,
}

impl<'a> Header<'a> {
    fn read(header: &'a str, from: From) -> Option<Self> {
        let (role_part, channel_part) = match header.find(CHANNEL) {
            Some(i) => (header.get(..i)?, header.get(i + CHANNEL.len()..)?),
            None if from == From::Channel => ("", header),
            None => (header, ""),
        };
        // A raw completion starts with its recipient and has a channel.
        if from == From::Recipient && !header.contains(CHANNEL) {
            return None;
        }
        let mut role_words = role_part.split_whitespace();
        let role = if from == From::Start { role_words.next() } else { None };
        let mut recipient = None;
        for w in role_words.chain(channel_part.split_whitespace()) {
            if let Some(to) = w.strip_prefix("to=") {
                recipient = recipient.or(Some(to));
            }
        }
        let channel_part = channel_part.replace(CONSTRAIN, " ");
        let mut words = channel_part.split_whitespace().filter(|w| !w.starts_with("to="));
        let channel = match words.next() {
            Some("analysis") => "analysis",
            Some("commentary") => "commentary",
            Some("final") => "final",
            Some(_) => return None,
            None if from == From::Start && !header.contains(CHANNEL) => "",
            None => return None,
        };
        let json = words.any(|w| w.eq_ignore_ascii_case("json"));
        let from_tool = role.is_some_and(|r| r != "assistant");
        let recipient = match recipient.map(|to| to.split('<').next().unwrap_or(to)) {
            _ if from_tool => Recipient::Assistant,
            None => Recipient::None,
            Some("assistant") => Recipient::Assistant,
            Some(to) => match to.strip_prefix("functions.") {
                Some(name) => Recipient::Function(clean_name(name)?),
                None => Recipient::Tool(clean_name(to)?),
            },
        };
        Some(Header { channel, recipient, json })
    }
}

/// A raw recipient starts the text or follows a space (` to=functions.N` after the
/// prompt's `<|start|>assistant`).
fn after_space(text: &str, at: usize) -> bool {
    text.get(..at).and_then(|t| t.chars().next_back()).is_none_or(char::is_whitespace)
}

/// Raw text addressed to `name`: `{"<p>": "<text>"}` when its schema has exactly one
/// property and it takes a string; the text as a JSON string otherwise (not arguments:
/// the schema stage says so).
fn raw_arguments(name: &str, body: &str, cx: &Cx<'_>) -> String {
    let key = cx.tools.and_then(|t| t.parameters(name)).and_then(|schema| {
        let props = schema.get("properties")?.as_object()?;
        let mut it = props.iter();
        let (key, prop) = it.next()?;
        let takes_string = prop
            .get("type")
            .is_none_or(|t| t == "string" || t.as_array().is_some_and(|a| a.iter().any(|x| x == "string")));
        (it.next().is_none() && takes_string).then_some(key)
    });
    let value = serde_json::Value::String(body.to_owned());
    match key {
        Some(k) => serde_json::json!({ k: value }).to_string(),
        None => value.to_string(),
    }
}
