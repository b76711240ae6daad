//! Find tool calls in every channel of an assistant message and in every known model
//! format, without being told the model.
//!
//! [`extract`] reads the server's own `tool_calls`, the `content` text and the
//! `reasoning_content` text. Each text is scanned once for the start markers of every format
//! (one Aho-Corasick automaton); at each marker the matching format parsers are tried, most
//! specific first. Consumed call markup is cut out of the prose. Calls are deduplicated
//! across channels by name and canonical arguments, first seen first.
//!
//! ```
//! use toolfix::extract::{extract, Message, Format};
//!
//! let msg = Message::new("Sure.<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}</tool_call>");
//! let out = extract(&msg, None);
//! assert_eq!(out.calls.len(), 1);
//! assert_eq!(out.calls[0].name, "get_weather");
//! assert_eq!(out.calls[0].arguments, r#"{"city": "Paris"}"#);
//! assert_eq!(out.calls[0].format, Format::Hermes);
//! assert_eq!(out.content, "Sure.");
//! ```
//!
//! # Reasoning
//!
//! Reasoning blocks in `content` (`<think>...</think>`, `<seed:think>`, `<mm:think>`,
//! `<|START_THINKING|>`, Gemma 4's `<|channel>thought`) are kept in `content` as written
//! by default ([`ThinkBlocks::Keep`]); [`ThinkBlocks::Move`] moves them to
//! `reasoning_content`. Reasoning that was forced open (only `</think>` appears, and no
//! call comes before it; also Apriel's `[BEGIN FINAL RESPONSE]`) always moves. Reasoning
//! text is never cut: calls found in it are reported, and by default
//! ([`ReasoningCalls::WhenNoOther`]) used only when no other channel has a call, since a
//! model often drafts a call in its reasoning and then makes it.
//!
//! # Untrusted input
//!
//! Linear time: one automaton pass per text; a parser that fails does so within a bounded
//! view of the text after its marker; a budget of failed parser runs per text (past it,
//! the rest of the text stays prose and a note says so); JSON in prose is checked against
//! one bracket-pairing pass shared by all candidates. No panics, no recursion.

mod brackets;
pub(crate) mod dedupe;
mod format;
mod json;
mod parsed;
mod registry;
mod scan;
pub mod stream;

mod apertus;
mod apriel;
mod command_r7b;
mod command_r_plus;
mod firefunction_v2;
mod function_calls_xml;
mod functionary_v3_1;
mod functionary_v3_2;
mod granite;
mod granite_20b_fc;
mod hermes;
mod hunyuan_a13b;
mod internlm2;
mod jamba;
mod json_text;
mod llama3_json;
mod minimax_m1;
mod mistral;
mod mistral_v11;
mod nemotron;
mod phi4_mini;
mod wrappers;
mod xlam;
// ---- markup formats (branch `extract-markup`) ----
mod deepseek_v3;
mod deepseek_v31;
mod deepseek_v32_dsml;
mod deepseek_v4_dsml;
mod gemma4;
mod glm45;
mod glm47;
mod gpt_oss_harmony;
mod invoke;
mod kimi_k2;
mod lfm2;
mod markup_registry;
mod minimax_m2;
mod minimax_m3;
mod muse_glimmer;
mod olmo3;
mod params;
mod pycall;
mod pythonic;
mod qwen3_coder;
mod seed_oss;
mod step3;
mod tags;

pub use format::Format;
#[doc(hidden)]
pub use markup_registry::parse_markup_for_tests;

use crate::Span;
use std::borrow::Cow;

/// Where in the assistant message a call was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Channel {
    /// The `content` text.
    Content,
    /// The `reasoning_content` text (or a `<think>` block inside `content`).
    Reasoning,
    /// The `tool_calls` the server already parsed.
    ToolCalls,
}

/// What the extractor may know about the tools offered to the model.
///
/// Implemented for the schema stage's `ToolSet`, and for a map of tool name to the
/// `parameters` JSON Schema (handy in tests).
pub trait ToolLookup {
    /// True when `name` is a tool the model was offered.
    fn is_known(&self, name: &str) -> bool;
    /// The `parameters` JSON Schema of tool `name`, when known.
    fn parameters(&self, name: &str) -> Option<&serde_json::Value>;
    /// The names of all tools offered, when the implementation can list them (formats
    /// that sometimes omit the name, such as Kimi K2's bare counter ids, use this to infer
    /// it). The default lists none.
    fn names(&self) -> Vec<&str> {
        Vec::new()
    }
}

impl<S: std::hash::BuildHasher> ToolLookup for std::collections::HashMap<String, serde_json::Value, S> {
    fn is_known(&self, name: &str) -> bool {
        self.contains_key(name)
    }
    fn parameters(&self, name: &str) -> Option<&serde_json::Value> {
        self.get(name)
    }
    fn names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self.keys().map(String::as_str).collect();
        names.sort_unstable();
        names
    }
}

/// A call found in the model's output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExtractedCall<'a> {
    /// The tool name as written (markup that leaked into it removed).
    pub name: Cow<'a, str>,
    /// The arguments as JSON text: the model's own text, borrowed, for formats that write
    /// JSON (it may still need salvage); built from the parameters for formats that write
    /// raw values (typed through the tool's schema when it is known).
    pub arguments: Cow<'a, str>,
    /// The call id, when the format or the server gave one.
    pub id: Option<Cow<'a, str>>,
    /// The format that was recognised.
    pub format: Format,
    /// The channel the call was found in.
    pub channel: Channel,
    /// The bytes of the call's markup in its channel's text (for [`Channel::ToolCalls`],
    /// an empty span at the call's index in the server's list).
    pub span: Span,
}

/// An assistant message as the server returned it.
#[derive(Clone, Copy, Debug, Default)]
#[non_exhaustive]
pub struct Message<'a> {
    /// The `content` text.
    pub content: &'a str,
    /// The `reasoning_content` text, when the server split it out.
    pub reasoning_content: Option<&'a str>,
    /// The `tool_calls` the server already parsed: an array of
    /// `{"id"?, "function": {"name", "arguments"}}` or `{"name", "arguments"}`, arguments a
    /// string or a value.
    pub tool_calls: Option<&'a serde_json::Value>,
}

impl<'a> Message<'a> {
    /// A message with this `content` only.
    #[must_use]
    pub fn new(content: &'a str) -> Self {
        Message { content, reasoning_content: None, tool_calls: None }
    }

    /// This message with a `reasoning_content`.
    #[must_use]
    pub fn with_reasoning_content(mut self, reasoning: &'a str) -> Self {
        self.reasoning_content = Some(reasoning);
        self
    }

    /// The message in a JSON object with `content`, and optionally `reasoning_content`
    /// and `tool_calls` (an OpenAI assistant message, or a `toolfix extract --batch` line).
    /// A `content` that is not a string (null, or an array of parts) reads as empty.
    #[must_use]
    pub fn from_value(value: &'a serde_json::Value) -> Self {
        Message {
            content: value.get("content").and_then(serde_json::Value::as_str).unwrap_or(""),
            reasoning_content: value.get("reasoning_content").and_then(serde_json::Value::as_str),
            tool_calls: value.get("tool_calls").filter(|t| t.is_array()),
        }
    }

    /// This message with the server's parsed `tool_calls`.
    #[must_use]
    pub fn with_tool_calls(mut self, tool_calls: &'a serde_json::Value) -> Self {
        self.tool_calls = Some(tool_calls);
        self
    }
}

/// Where reasoning blocks found in `content` go.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum ThinkBlocks {
    /// Left in `content` as written (what servers' tool parsers do).
    #[default]
    Keep,
    /// Moved to `reasoning_content`.
    Move,
}

/// When calls found in reasoning are used.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReasoningCalls {
    /// Only when neither `tool_calls` nor `content` has a call.
    #[default]
    WhenNoOther,
    /// Always (deduplicated against the other channels).
    Always,
    /// Never.
    Never,
}

/// Extraction settings.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Options {
    /// Where reasoning blocks in `content` go.
    pub think_blocks: ThinkBlocks,
    /// When calls found in reasoning are used.
    pub reasoning_calls: ReasoningCalls,
}

impl Options {
    /// These options with `think_blocks`.
    #[must_use]
    pub fn with_think_blocks(mut self, think_blocks: ThinkBlocks) -> Self {
        self.think_blocks = think_blocks;
        self
    }

    /// These options with `reasoning_calls`.
    #[must_use]
    pub fn with_reasoning_calls(mut self, reasoning_calls: ReasoningCalls) -> Self {
        self.reasoning_calls = reasoning_calls;
        self
    }
}

/// What kind of thing a [`Note`] reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum NoteKind {
    /// JSON shaped like a call names a tool that was not offered: left as text.
    UnknownTool,
    /// A call found in a second channel repeats one already found: dropped.
    Duplicate,
    /// Calls found in reasoning were not used, because another channel has calls.
    ReasoningCallsIgnored,
    /// Too many markers failed to parse: the rest of the text was left as prose.
    ScanBudgetExhausted,
}

impl NoteKind {
    /// A stable snake_case name.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            NoteKind::UnknownTool => "unknown_tool",
            NoteKind::Duplicate => "duplicate",
            NoteKind::ReasoningCallsIgnored => "reasoning_calls_ignored",
            NoteKind::ScanBudgetExhausted => "scan_budget_exhausted",
        }
    }
}

/// Something the extractor saw and did not turn into a call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Note {
    /// What happened.
    pub kind: NoteKind,
    /// Where, in the text of the channel concerned.
    pub span: Span,
    /// The tool name concerned, if any.
    pub name: Option<String>,
}

/// The result of [`extract`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Extraction<'a> {
    /// The calls, first seen first, deduplicated; each has an id (the server's or the
    /// format's, or a fresh deterministic `call_...`).
    pub calls: Vec<ExtractedCall<'a>>,
    /// `content` with call markup removed.
    pub content: Cow<'a, str>,
    /// The reasoning: the `reasoning_content` given, and reasoning moved out of `content`.
    pub reasoning_content: Option<Cow<'a, str>>,
    /// What was seen and not used.
    pub notes: Vec<Note>,
}

impl Extraction<'_> {
    /// The result in the shape of the CLI contract:
    /// `{"tool_calls": [{"id", "name", "arguments", "format"}], "content", "reasoning_content"?}`.
    /// Arguments that parse as JSON are embedded as values, others as their raw text.
    #[must_use]
    pub fn to_json(&self) -> serde_json::Value {
        let calls: Vec<serde_json::Value> = self
            .calls
            .iter()
            .map(|c| {
                let arguments = serde_json::from_str::<serde_json::Value>(&c.arguments)
                    .unwrap_or_else(|_| serde_json::Value::String(c.arguments.to_string()));
                serde_json::json!({
                    "id": c.id.as_deref(),
                    "name": c.name,
                    "arguments": arguments,
                    "format": c.format.as_str(),
                })
            })
            .collect();
        let mut out = serde_json::json!({ "tool_calls": calls, "content": self.content });
        if let (Some(r), Some(obj)) = (&self.reasoning_content, out.as_object_mut()) {
            obj.insert("reasoning_content".into(), serde_json::Value::String(r.to_string()));
        }
        out
    }
}

/// The formats the extractor recognises (every one has a parser wired in).
#[must_use]
pub fn supported_formats() -> Vec<Format> {
    let mut out = vec![Format::Native];
    for e in registry::REGISTRY {
        if !out.contains(&e.format) {
            out.push(e.format);
        }
    }
    out
}

/// Find the calls in `message` with the default [`Options`].
///
/// `tools`, when given, lets JSON found in prose become a call only when it names one of
/// them, and lets raw-text parameters be typed through each tool's schema.
#[must_use]
pub fn extract<'a>(message: &Message<'a>, tools: Option<&dyn ToolLookup>) -> Extraction<'a> {
    extract_with(message, tools, &Options::default())
}

/// Find the calls in `message`.
#[must_use]
pub fn extract_with<'a>(message: &Message<'a>, tools: Option<&dyn ToolLookup>, options: &Options) -> Extraction<'a> {
    let cx = parsed::Cx { tools };
    let content_scan = scan::scan(message.content, &cx, scan::Mode::Content, options.think_blocks == ThinkBlocks::Move);
    let reasoning_scan = message.reasoning_content.map(|r| scan::scan(r, &cx, scan::Mode::Reasoning, false));
    let native = message.tool_calls.map(native_calls).unwrap_or_default();
    assemble(message, native, content_scan, reasoning_scan, *options)
}

/// Put the channels together: calls in order, dedupe, ids, prose and reasoning text.
pub(crate) fn assemble<'a>(
    message: &Message<'a>,
    native: Vec<ExtractedCall<'a>>,
    content_scan: scan::Scan<'a>,
    reasoning_scan: Option<scan::Scan<'a>>,
    options: Options,
) -> Extraction<'a> {
    let mut notes = content_scan.notes;
    let content = cut(message.content, &content_scan.removed);
    let mut reasoning_parts: Vec<&'a str> = Vec::new();
    reasoning_parts.extend(message.reasoning_content);
    reasoning_parts.extend(content_scan.reasoning.iter().filter_map(|s| message.content.get(s.range())));
    let reasoning_content = match reasoning_parts.as_slice() {
        [] => None,
        [one] => Some(Cow::Borrowed(*one)),
        many => Some(Cow::Owned(many.join("\n"))),
    };

    let mut candidates = native;
    let to_call = |channel: Channel| {
        move |c: parsed::RawCall<'a>| ExtractedCall {
            name: c.name,
            arguments: c.arguments,
            id: c.id,
            format: c.format,
            channel,
            span: c.span,
        }
    };
    candidates.extend(content_scan.calls.into_iter().map(to_call(Channel::Content)));
    let mut reasoning_calls: Vec<ExtractedCall<'a>> =
        content_scan.reasoning_calls.into_iter().map(to_call(Channel::Content)).collect();
    for c in &mut reasoning_calls {
        c.channel = Channel::Reasoning;
    }
    if let Some(rs) = reasoning_scan {
        notes.extend(rs.notes);
        reasoning_calls.extend(rs.reasoning_calls.into_iter().map(to_call(Channel::Reasoning)));
    }
    let use_reasoning = match options.reasoning_calls {
        ReasoningCalls::WhenNoOther => candidates.is_empty(),
        ReasoningCalls::Always => true,
        ReasoningCalls::Never => false,
    };
    if use_reasoning {
        candidates.extend(reasoning_calls);
    } else if let Some(first) = reasoning_calls.first() {
        notes.push(Note {
            kind: NoteKind::ReasoningCallsIgnored,
            span: first.span,
            name: Some(first.name.to_string()),
        });
    }

    let calls = dedupe_calls(candidates, &mut notes);
    Extraction { calls, content, reasoning_content, notes }
}

/// Drop calls of a later channel that repeat a call of an earlier one; give ids.
fn dedupe_calls<'a>(candidates: Vec<ExtractedCall<'a>>, notes: &mut Vec<Note>) -> Vec<ExtractedCall<'a>> {
    let mut calls: Vec<ExtractedCall<'a>> = Vec::with_capacity(candidates.len());
    let mut keys: Vec<(String, Channel)> = Vec::with_capacity(candidates.len());
    for c in candidates {
        let key = dedupe::call_key(&c.name, &c.arguments);
        if keys.iter().any(|(k, ch)| *k == key && *ch != c.channel) {
            notes.push(Note { kind: NoteKind::Duplicate, span: c.span, name: Some(c.name.to_string()) });
            continue;
        }
        keys.push((key, c.channel));
        calls.push(c);
    }
    for (i, c) in calls.iter_mut().enumerate() {
        if c.id.is_none() {
            c.id = Some(Cow::Owned(dedupe::fresh_id(&c.name, &c.arguments, i)));
        }
    }
    calls
}

/// `text` without the `removed` ranges (sorted, disjoint).
fn cut<'a>(text: &'a str, removed: &[Span]) -> Cow<'a, str> {
    if removed.is_empty() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for s in removed {
        if s.start >= at {
            out.push_str(text.get(at..s.start).unwrap_or(""));
        }
        at = at.max(s.end);
    }
    out.push_str(text.get(at..).unwrap_or(""));
    Cow::Owned(out)
}

/// The calls the server already parsed.
fn native_calls(value: &serde_json::Value) -> Vec<ExtractedCall<'_>> {
    let Some(items) = value.as_array() else {
        return Vec::new();
    };
    items
        .iter()
        .enumerate()
        .filter_map(|(i, item)| {
            let f = item.get("function").filter(|f| f.is_object()).unwrap_or(item);
            let name = f.get("name")?.as_str()?;
            let arguments = match f.get("arguments") {
                Some(serde_json::Value::String(s)) => Cow::Borrowed(s.as_str()),
                None | Some(serde_json::Value::Null) => Cow::Borrowed("{}"),
                Some(v) => Cow::Owned(v.to_string()),
            };
            let id = item.get("id").and_then(|v| v.as_str()).map(Cow::Borrowed);
            Some(ExtractedCall {
                name: Cow::Borrowed(name),
                arguments,
                id,
                format: Format::Native,
                channel: Channel::ToolCalls,
                span: Span::at(i),
            })
        })
        .collect()
}
