//! Find tool calls in every channel of an assistant message and in every known model
//! format, without being told the model.
//!
//! [`extract`] reads the server's own `tool_calls`, the `content` text and the
//! `reasoning_content` text. Each text is scanned once for the start markers of every format
//! (one Aho-Corasick automaton); at each marker the matching formats are tried, most
//! specific first. Consumed call markup is cut out of the prose. A call that repeats one
//! already taken (same name, same canonical arguments) is dropped with a note, first seen
//! first ([`Repeats`]).
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
//! `<|START_THINKING|>`, `[THINK]`, Gemma 4's `<|channel>thought`, Apertus'
//! `<|inner_prefix|>`, Apriel's `<thinking>`) move to `reasoning_content` by default
//! ([`ThinkBlocks::Move`], as servers' reasoning parsers and llama.cpp's default reasoning
//! format do); [`ThinkBlocks::Keep`] leaves them in `content` as written. Reasoning that
//! was forced open (only `</think>` appears, and no call comes before it; also Apriel's
//! `[BEGIN FINAL RESPONSE]`) always moves, and so does Harmony's analysis channel. When
//! blocks move, a block's own opener written again inside it and a close marker after the
//! reasoning ended are markup, not text. A block that never closes ends with the call it
//! holds: the call is the model's (channel `Content`), its markup leaves the reasoning,
//! the rest of the block is reasoning. Calls found in reasoning otherwise are reported,
//! and by default ([`ReasoningCalls::WhenNoOther`]) used only when no other channel has a
//! call, since a model often drafts a call in its reasoning and then makes it.
//!
//! # Cut-off calls and raw values
//!
//! A call the text ended inside is marked [`ExtractedCall::cut`]; formats that build the
//! arguments from raw values leave them open where the text stopped, so
//! [`salvage`](crate::salvage::salvage) reports the cut as it does for JSON. A string
//! argument holding another declared parameter's markup is read as the parameters it
//! holds when that is unambiguous ([`split_leaked_markup`]).
//!
//! # Untrusted input
//!
//! Bounded by [`Limits`]: the text read per channel (`max_text_bytes`), the calls taken
//! per reply (`max_calls`), the markup read as one call (`max_held_bytes`, which also
//! bounds what [`StreamExtractor`](stream::StreamExtractor) holds back), the nesting of
//! literals (`max_depth`); past a limit, a [`Note`] says so. Linear time: one automaton
//! pass per text; a parser that fails does so within a bounded view of the text after its
//! marker; a budget of failed parser runs per text; JSON in prose is checked against one
//! bracket-pairing pass shared by all candidates. No panics, no recursion.

mod brackets;
mod dedupe;
mod deepseek;
mod dsml;
mod format;
mod functionary;
mod gemma4;
mod glm;
mod glued;
mod granite;
mod harmony;
mod infer;
pub mod intent;
mod invoke;
mod json;
mod json_family;
mod json_text;
mod kimi_k2;
mod leak;
mod minimax_m3;
mod minimax_text;
pub(crate) mod native;
mod params;
mod parsed;
mod pycall;
mod pythonic;
mod qwen3_coder;
mod react;
mod registry;
mod scan;
mod starts;
mod step3;
pub mod stream;
mod tags;
mod text;
mod typed;

pub use format::Format;
pub use intent::{Intent, LeakedCalls, Signal};
pub use leak::{Leak, Split, split_leaked_markup};

use crate::limits::Limits;
use crate::span::Span;
use serde::Serialize;
use std::borrow::Cow;

/// Where in the assistant message a call was found.
///
/// ```
/// use toolfix::extract::Channel;
///
/// assert_eq!(serde_json::to_string(&Channel::ToolCalls).unwrap(), "\"tool_calls\"");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Channel {
    /// The `content` text.
    Content,
    /// The `reasoning_content` text (or a reasoning block inside `content`).
    Reasoning,
    /// The `tool_calls` the server already parsed.
    ToolCalls,
}

/// What the extractor may know about the tools offered to the model.
///
/// Implemented for the schema stage's [`ToolSet`](crate::ToolSet), and for a map of tool
/// name to the `parameters` JSON Schema (handy in tests).
///
/// ```
/// use std::collections::HashMap;
/// use toolfix::extract::ToolLookup;
///
/// let tools = HashMap::from([("get_weather".to_owned(), serde_json::json!({"type": "object"}))]);
/// assert!(tools.is_known("get_weather"));
/// assert_eq!(tools.names(), ["get_weather"]);
/// assert!(tools.parameters("other").is_none());
/// ```
/// `Sync`, so a [`ReplyStream`](crate::ReplyStream) that borrows one can cross `.await` points.
pub trait ToolLookup: Sync {
    /// True when `name` is a tool the model was offered.
    fn is_known(&self, name: &str) -> bool;
    /// The `parameters` JSON Schema of tool `name`, when known.
    fn parameters(&self, name: &str) -> Option<&serde_json::Value>;
    /// The names of all tools offered. Formats that sometimes omit the name (Kimi K2's
    /// bare counter ids) use them to infer it, only when that is unambiguous.
    fn names(&self) -> Vec<&str>;
    /// True when `text` could be the start of a name [`is_known`](Self::is_known)
    /// accepts (a stream holds such text back while a call could follow it). The default
    /// compares with [`names`](Self::names) exactly; a lookup that also resolves other
    /// spellings must accept their starts too.
    fn could_begin_name(&self, text: &str) -> bool {
        self.names().iter().any(|n| n.starts_with(text))
    }
    /// The length in bytes of the longest of [`names`](Self::names) (0 when there is
    /// none). The default asks `names`; a lookup can answer without making the list.
    fn longest_name(&self) -> usize {
        self.names().iter().map(|n| n.len()).max().unwrap_or(0)
    }
    /// How calls to tool `name` written in text are taken, when the tool says
    /// (`x-toolfix.leaked_calls`); `None`: as [`Options::leaked_calls`] says.
    fn leaked_calls(&self, name: &str) -> Option<LeakedCalls> {
        let _ = name;
        None
    }
}

impl<S: std::hash::BuildHasher + Sync> ToolLookup for std::collections::HashMap<String, serde_json::Value, S> {
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
    fn could_begin_name(&self, text: &str) -> bool {
        self.keys().any(|n| n.starts_with(text))
    }
}

impl ToolLookup for crate::schema::ToolSet {
    fn is_known(&self, name: &str) -> bool {
        matches!(self.tool(name), Ok(_) | Err(crate::schema::NameError::Broken { .. }))
    }

    fn parameters(&self, name: &str) -> Option<&serde_json::Value> {
        self.tool(name).ok().map(crate::schema::Tool::parameters)
    }

    fn names(&self) -> Vec<&str> {
        self.tools().iter().map(crate::schema::Tool::name).chain(self.broken_names()).collect()
    }

    fn longest_name(&self) -> usize {
        let declared = self.tools().iter().map(|t| t.name().len());
        declared.chain(self.broken().map(str::len)).max().unwrap_or(0)
    }

    fn could_begin_name(&self, text: &str) -> bool {
        crate::schema::ToolSet::could_begin_name(self, text)
    }

    fn leaked_calls(&self, name: &str) -> Option<LeakedCalls> {
        self.tool(name).ok()?.leaked_calls()
    }
}

/// A call found in the model's output.
///
/// Serializes with its `arguments` as the text found (a JSON string: they may still need
/// salvage).
///
/// ```
/// use toolfix::extract::{extract, Message};
///
/// let out = extract(&Message::new("[TOOL_CALLS][{\"name\": \"f\", \"arguments\": {\"n\": 1.50}}]"), None);
/// let json = serde_json::to_value(&out.calls[0]).unwrap();
/// assert_eq!(json["name"], "f");
/// assert_eq!(json["arguments"], "{\"n\": 1.50}");
/// assert_eq!(json["format"], "mistral");
/// assert_eq!(json["channel"], "content");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ExtractedCall<'a> {
    /// The tool name as written (markup that leaked into it removed).
    pub name: Cow<'a, str>,
    /// The arguments as JSON text: the model's own text, borrowed, for formats that write
    /// JSON (it may still need salvage); built from the parameters for formats that write
    /// raw values (typed through the tool's schema when it is known).
    pub arguments: Cow<'a, str>,
    /// The call id, when the format or the server gave one (a fresh deterministic
    /// `call_...` otherwise, once extracted).
    pub id: Option<Cow<'a, str>>,
    /// The format that was recognised.
    pub format: Format,
    /// The channel the call was found in.
    pub channel: Channel,
    /// The bytes of the call's markup in its channel's text (for [`Channel::ToolCalls`],
    /// an empty span at the call's index in the server's list).
    pub span: Span,
    /// Fixes salvage made to the call's envelope when it was not strict JSON
    /// (`{'name': …}`), spans in the channel's text.
    #[serde(skip)]
    pub(crate) envelope: Vec<crate::salvage::TextFix>,
    /// What the markup was meant as, for a call written in text: [`Intent::Call`], or
    /// [`Intent::Uncertain`] when its signals disagree (see [`intent`]). Serialized only
    /// when uncertain.
    #[serde(skip_serializing_if = "Intent::is_call")]
    pub intent: Intent,
    /// The signals read around the call's markup (see [`intent`]); empty for calls the
    /// server parsed. Serialized only when not empty.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub signals: Vec<Signal>,
    /// The text ended inside the call's markup, before what closes it: more may have been
    /// coming. Arguments cut inside a value are left open where they stopped, so
    /// [`salvage`](crate::salvage::salvage) reports the cut too. Serialized only when true.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub cut: bool,
}

/// An assistant message as the server returned it.
///
/// ```
/// use toolfix::extract::Message;
///
/// let value = serde_json::json!({"content": "Hi", "reasoning_content": "hmm", "tool_calls": []});
/// let m = Message::from_value(&value);
/// assert_eq!((m.content, m.reasoning_content), ("Hi", Some("hmm")));
/// ```
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
    ///
    /// ```
    /// let m = toolfix::extract::Message::new("Hi");
    /// assert_eq!(m.content, "Hi");
    /// ```
    #[must_use]
    pub fn new(content: &'a str) -> Self {
        Message { content, reasoning_content: None, tool_calls: None }
    }

    /// This message with a `reasoning_content`.
    ///
    /// ```
    /// let m = toolfix::extract::Message::new("").with_reasoning_content("thinking");
    /// assert_eq!(m.reasoning_content, Some("thinking"));
    /// ```
    #[must_use]
    pub fn with_reasoning_content(mut self, reasoning: &'a str) -> Self {
        self.reasoning_content = Some(reasoning);
        self
    }

    /// The message in a JSON object with `content`, and optionally `reasoning_content`
    /// and `tool_calls` (an OpenAI assistant message, or a `toolfix extract --batch` line).
    /// A `content` that is not a string (null, or an array of parts) reads as empty.
    ///
    /// ```
    /// let v = serde_json::json!({"content": null, "tool_calls": [{"function": {"name": "f", "arguments": "{}"}}]});
    /// let m = toolfix::extract::Message::from_value(&v);
    /// assert_eq!(m.content, "");
    /// assert!(m.tool_calls.is_some());
    /// ```
    #[must_use]
    pub fn from_value(value: &'a serde_json::Value) -> Self {
        Message {
            content: value.get("content").and_then(serde_json::Value::as_str).unwrap_or(""),
            reasoning_content: value.get("reasoning_content").and_then(serde_json::Value::as_str),
            tool_calls: value.get("tool_calls").filter(|t| t.is_array()),
        }
    }

    /// This message with the server's parsed `tool_calls`.
    ///
    /// ```
    /// let calls = serde_json::json!([{"name": "f", "arguments": {}}]);
    /// let m = toolfix::extract::Message::new("").with_tool_calls(&calls);
    /// assert_eq!(toolfix::extract::extract(&m, None).calls[0].name, "f");
    /// ```
    #[must_use]
    pub fn with_tool_calls(mut self, tool_calls: &'a serde_json::Value) -> Self {
        self.tool_calls = Some(tool_calls);
        self
    }
}

/// Where reasoning blocks found in `content` go.
///
/// ```
/// use toolfix::extract::{extract_with, Message, Options, ThinkBlocks};
///
/// let options = Options::default().with_think_blocks(ThinkBlocks::Move);
/// let out = extract_with(&Message::new("<think>hmm</think>Hi"), None, &options);
/// assert_eq!((&*out.content, out.reasoning_content.as_deref()), ("Hi", Some("hmm")));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum ThinkBlocks {
    /// Left in `content` as written.
    Keep,
    /// Moved to `reasoning_content` (what servers' reasoning parsers do, and llama.cpp's
    /// default reasoning format).
    #[default]
    Move,
}

/// When calls found in reasoning are used.
///
/// ```
/// use toolfix::extract::{extract_with, Message, Options, ReasoningCalls};
///
/// let m = Message::new("").with_reasoning_content("<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>");
/// let never = Options::default().with_reasoning_calls(ReasoningCalls::Never);
/// assert!(extract_with(&m, None, &never).calls.is_empty());
/// ```
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

/// What happens to a call that repeats one already taken (same name, same arguments up to
/// key order, whitespace and number spelling).
///
/// ```
/// use toolfix::extract::{extract_with, Message, Options, Repeats};
///
/// let one = "<tool_call>{\"name\": \"ping\", \"arguments\": {}}</tool_call>";
/// let text = one.repeat(2);
/// let m = Message::new(&text);
/// assert_eq!(extract_with(&m, None, &Options::default()).calls.len(), 1);
/// let keep = Options::default().with_repeats(Repeats::Keep);
/// assert_eq!(extract_with(&m, None, &keep).calls.len(), 2);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Repeats {
    /// Kept once, the repeats reported ([`NoteKind::Duplicate`]).
    #[default]
    Drop,
    /// Kept, when in the same channel (tools that must run again); a call found in two
    /// channels is still the same call, kept once.
    Keep,
}

/// Extraction settings.
///
/// ```
/// use toolfix::Limits;
/// use toolfix::extract::{Options, ThinkBlocks};
///
/// let o = Options::default().with_think_blocks(ThinkBlocks::Move).with_limits(Limits::default().with_max_calls(4));
/// assert_eq!(o.limits.max_calls, 4);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Options {
    /// Where reasoning blocks in `content` go.
    pub think_blocks: ThinkBlocks,
    /// When calls found in reasoning are used.
    pub reasoning_calls: ReasoningCalls,
    /// What happens to a repeated call.
    pub repeats: Repeats,
    /// The caps (text per channel, calls per reply, markup per call, depth).
    pub limits: Limits,
    /// How calls written in text are taken (see [`intent`]); a tool's own policy
    /// ([`ToolLookup::leaked_calls`]) wins for calls to it.
    pub leaked_calls: LeakedCalls,
    /// Keep every call, repeats included: the caller (the whole-reply layer) drops them by
    /// the keys of the accepted calls, so no arguments are read twice.
    pub(crate) keep_repeats: bool,
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

    /// These options with `repeats`.
    #[must_use]
    pub fn with_repeats(mut self, repeats: Repeats) -> Self {
        self.repeats = repeats;
        self
    }

    /// These options with `limits`.
    #[must_use]
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// These options with `leaked_calls`.
    #[must_use]
    pub fn with_leaked_calls(mut self, leaked_calls: LeakedCalls) -> Self {
        self.leaked_calls = leaked_calls;
        self
    }

    /// These options keeping every call, repeats included (the whole-reply layer drops
    /// them by the accepted calls' keys).
    pub(crate) fn keeping_repeats(mut self) -> Self {
        self.keep_repeats = true;
        self
    }
}

/// What kind of thing a [`Note`] reports.
///
/// ```
/// use toolfix::extract::NoteKind;
///
/// assert_eq!(NoteKind::UnknownTool.as_str(), "unknown_tool");
/// assert_eq!(serde_json::to_string(&NoteKind::Duplicate).unwrap(), "\"duplicate\"");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum NoteKind {
    /// JSON shaped like a call names a tool that was not offered: left as text.
    UnknownTool,
    /// A call repeats one already taken (in this channel or another): dropped.
    Duplicate,
    /// Calls found in reasoning were not used, because another channel has calls.
    ReasoningCallsIgnored,
    /// Too many markers failed to parse: the rest of the text was left as prose.
    ScanBudgetExhausted,
    /// The text is longer than [`Limits::max_text_bytes`]: the rest was left as prose.
    TextTooLarge,
    /// More calls than [`Limits::max_calls`]: the rest were dropped.
    TooManyCalls,
    /// Markup that may start a call ends no call within [`Limits::max_held_bytes`]: left
    /// as prose.
    CallTooLarge,
    /// Call markup the model only showed (an example, a quote, a question, a tool
    /// definition: see [`intent`]): left in the text, not a call.
    ShownCall,
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
            NoteKind::TextTooLarge => "text_too_large",
            NoteKind::TooManyCalls => "too_many_calls",
            NoteKind::CallTooLarge => "call_too_large",
            NoteKind::ShownCall => "shown_call",
        }
    }
}

impl Serialize for NoteKind {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// Something the extractor saw and did not turn into a call.
///
/// ```
/// use toolfix::extract::{extract, Message, NoteKind};
///
/// let text = "[TOOL_CALLS][{\"name\": \"f\", \"arguments\": {}}]".repeat(2);
/// let out = extract(&Message::new(&text), None);
/// let note = &out.notes[0];
/// assert_eq!((note.kind, note.name.as_deref()), (NoteKind::Duplicate, Some("f")));
/// let json = serde_json::to_value(note).unwrap();
/// assert_eq!(json["kind"], "duplicate");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Note {
    /// What happened.
    pub kind: NoteKind,
    /// Where, in the text of the channel concerned.
    pub span: Span,
    /// The tool name concerned, if any.
    pub name: Option<String>,
    /// For a shown call, the signals that decided it (see [`intent`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub signals: Vec<Signal>,
}

impl Note {
    /// A note.
    pub(crate) fn new(kind: NoteKind, span: Span, name: Option<String>) -> Self {
        Note { kind, span, name, signals: Vec::new() }
    }
}

/// The result of [`extract`].
///
/// ```
/// use toolfix::extract::{extract, Message};
///
/// let out = extract(&Message::new("No call here."), None);
/// assert!(out.calls.is_empty() && out.notes.is_empty());
/// assert_eq!(out.content, "No call here.");
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Extraction<'a> {
    /// The calls, first seen first, repeats dropped; each has an id (the server's or the
    /// format's, or a fresh deterministic `call_...`).
    pub calls: Vec<ExtractedCall<'a>>,
    /// `content` with call markup removed.
    pub content: Cow<'a, str>,
    /// The reasoning: the `reasoning_content` given, and reasoning moved out of `content`.
    pub reasoning_content: Option<Cow<'a, str>>,
    /// What was seen and not used.
    pub notes: Vec<Note>,
}

/// The formats the extractor recognises (every one has a grammar in the registry).
///
/// ```
/// use toolfix::extract::{supported_formats, Format};
///
/// assert_eq!(supported_formats().len(), Format::ALL.len());
/// ```
#[must_use]
pub fn supported_formats() -> Vec<Format> {
    let mut out = vec![Format::Native];
    out.extend(registry::REGISTRY.iter().map(|s| s.format));
    out
}

/// Find the calls in `message` with the default [`Options`].
///
/// `tools`, when given, lets JSON found in prose become a call only when it names one of
/// them, and lets raw-text parameters be typed through each tool's schema.
///
/// ```
/// use toolfix::extract::{extract, Message};
///
/// let out = extract(&Message::new("<|python_tag|>{\"name\": \"f\", \"parameters\": {\"a\": 1}}"), None);
/// assert_eq!(out.calls[0].arguments, "{\"a\": 1}");
/// ```
#[must_use]
pub fn extract<'a>(message: &Message<'a>, tools: Option<&dyn ToolLookup>) -> Extraction<'a> {
    extract_with(message, tools, &Options::default())
}

/// Find the calls in `message`.
///
/// ```
/// use toolfix::Limits;
/// use toolfix::extract::{extract_with, Message, NoteKind, Options};
///
/// let text = "<tool_call>{\"name\": \"a\", \"arguments\": {}}</tool_call><tool_call>{\"name\": \"b\", \"arguments\": {}}</tool_call>";
/// let options = Options::default().with_limits(Limits::default().with_max_calls(1));
/// let out = extract_with(&Message::new(text), None, &options);
/// assert_eq!(out.calls.len(), 1);
/// assert_eq!(out.notes[0].kind, NoteKind::TooManyCalls);
/// ```
#[must_use]
pub fn extract_with<'a>(message: &Message<'a>, tools: Option<&dyn ToolLookup>, options: &Options) -> Extraction<'a> {
    let native = message.tool_calls.map(|t| native_calls(t, tools)).unwrap_or_default();
    extract_found(message, native, tools, options)
}

/// As [`extract_with`], the server's calls already read (`native`, in order, as
/// [`native_calls`] or [`native::calls_into`] read them); `message.tool_calls` is not read.
pub(crate) fn extract_found<'a>(
    message: &Message<'a>,
    native: Vec<ExtractedCall<'a>>,
    tools: Option<&dyn ToolLookup>,
    options: &Options,
) -> Extraction<'a> {
    let cx = parsed::Cx::new(tools, options.limits);
    let move_blocks = options.think_blocks == ThinkBlocks::Move;
    let content_scan = scan::scan(message.content, &cx, scan::Mode::Content, move_blocks, options.leaked_calls);
    let reasoning_scan =
        message.reasoning_content.map(|r| scan::scan(r, &cx, scan::Mode::Reasoning, false, options.leaked_calls));
    assemble(message, native, content_scan, reasoning_scan, *options)
}

/// What [`extract_found`] returns for a message with no text (an empty `content`, no
/// `reasoning_content`) and the server's calls `native`: those calls kept once, capped and
/// given ids as there, and the notes about them (the scan of an empty text finds nothing,
/// so it is not run).
pub(crate) fn extract_native<'a>(
    native: Vec<ExtractedCall<'a>>,
    options: &Options,
) -> (Vec<ExtractedCall<'a>>, Vec<Note>) {
    let mut notes = Vec::new();
    let calls = keep_once(native, *options, &mut notes);
    (calls, notes)
}

/// Put the channels together: calls in order, repeats, ids, prose and reasoning text.
fn assemble<'a>(
    message: &Message<'a>,
    native: Vec<ExtractedCall<'a>>,
    content_scan: scan::Scan<'a>,
    reasoning_scan: Option<scan::Scan<'a>>,
    options: Options,
) -> Extraction<'a> {
    if reasoning_scan.is_none() && content_scan.is_empty() {
        // Nothing found in `content` (prose only): it stays whole, the server's calls are
        // the calls (what the general path below gives such a scan).
        let mut notes = Vec::new();
        let calls = keep_once(native, options, &mut notes);
        let reasoning_content = message.reasoning_content.map(Cow::Borrowed);
        return Extraction { calls, content: Cow::Borrowed(message.content), reasoning_content, notes };
    }
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
    // Calls that ended an unclosed block leave its reasoning text.
    let reasoning_content = match reasoning_content {
        Some(_) if !content_scan.reasoning_cuts.is_empty() => {
            Some(Cow::Owned(without(message, &content_scan.reasoning, &content_scan.reasoning_cuts)))
        }
        other => other,
    };

    let to_call = |channel: Channel| {
        move |c: parsed::RawCall<'a>| ExtractedCall {
            name: c.name,
            arguments: c.arguments,
            id: c.id,
            format: c.format,
            channel,
            span: c.span,
            envelope: c.envelope,
            cut: c.cut,
            intent: c.intent,
            signals: c.signals.to_vec(),
        }
    };
    let mut candidates = native;
    candidates.extend(content_scan.calls.into_iter().map(to_call(Channel::Content)));
    let mut reasoning_calls: Vec<ExtractedCall<'a>> =
        content_scan.reasoning_calls.into_iter().map(to_call(Channel::Reasoning)).collect();
    if let Some(rs) = reasoning_scan {
        notes.extend(rs.notes);
        reasoning_calls.extend(rs.reasoning_calls.into_iter().map(to_call(Channel::Reasoning)));
    }
    reasoning_calls.truncate(options.limits.max_calls);
    let use_reasoning = match options.reasoning_calls {
        ReasoningCalls::WhenNoOther => candidates.is_empty(),
        ReasoningCalls::Always => true,
        ReasoningCalls::Never => false,
    };
    if use_reasoning {
        candidates.extend(reasoning_calls);
    } else if let Some(first) = reasoning_calls.first() {
        notes.push(Note::new(NoteKind::ReasoningCallsIgnored, first.span, Some(first.name.to_string())));
    }

    let calls = keep_once(candidates, options, &mut notes);
    Extraction { calls, content, reasoning_content, notes }
}

/// Drop repeated calls (see [`Repeats`]), cap the count, give ids.
fn keep_once<'a>(
    candidates: Vec<ExtractedCall<'a>>,
    options: Options,
    notes: &mut Vec<Note>,
) -> Vec<ExtractedCall<'a>> {
    if candidates.is_empty() {
        return candidates;
    }
    // Every call kept and none over the cap: the list itself (what the loop below keeps).
    if options.keep_repeats && candidates.len() <= options.limits.max_calls {
        return with_ids(candidates);
    }
    let mut calls: Vec<ExtractedCall<'a>> = Vec::with_capacity(candidates.len());
    // Keys per channel, to tell a repeat in the same channel from one in another.
    let mut seen: Vec<(Channel, dedupe::Seen)> = Vec::new();
    for c in candidates {
        if options.keep_repeats {
            if calls.len() >= options.limits.max_calls {
                notes.push(Note::new(NoteKind::TooManyCalls, c.span, Some(c.name.to_string())));
                break;
            }
            calls.push(c);
            continue;
        }
        let in_other = seen.iter().any(|(ch, s)| *ch != c.channel && s.contains(&c.name, &c.arguments));
        let own = seen.iter().position(|(ch, _)| *ch == c.channel).unwrap_or_else(|| {
            seen.push((c.channel, dedupe::Seen::default()));
            seen.len() - 1
        });
        let in_own = seen.get_mut(own).is_some_and(|(_, s)| !s.take(&c.name, &c.arguments));
        if in_other || (in_own && options.repeats == Repeats::Drop) {
            notes.push(Note::new(NoteKind::Duplicate, c.span, Some(c.name.to_string())));
            continue;
        }
        if calls.len() >= options.limits.max_calls {
            notes.push(Note::new(NoteKind::TooManyCalls, c.span, Some(c.name.to_string())));
            break;
        }
        calls.push(c);
    }
    with_ids(calls)
}

/// `calls`, each without an id given a fresh one.
fn with_ids(mut calls: Vec<ExtractedCall<'_>>) -> Vec<ExtractedCall<'_>> {
    for (i, c) in calls.iter_mut().enumerate() {
        if c.id.is_none() {
            c.id = Some(Cow::Owned(dedupe::fresh_id(&c.name, &c.arguments, i)));
        }
    }
    calls
}

/// The reasoning text (`reasoning_content`, then the `blocks` of `content`, joined by
/// `\n`), the `cuts` (ranges of `content`, sorted) left out.
fn without(message: &Message<'_>, blocks: &[Span], cuts: &[Span]) -> String {
    let mut parts: Vec<Cow<'_, str>> = Vec::with_capacity(blocks.len() + 1);
    parts.extend(message.reasoning_content.map(Cow::Borrowed));
    for b in blocks {
        let mut inside: Vec<Span> = cuts
            .iter()
            .filter(|c| c.start >= b.start && c.end <= b.end)
            .map(|c| Span::new(c.start - b.start, c.end - b.start))
            .collect();
        inside.sort_unstable_by_key(|c| c.start);
        parts.push(cut(message.content.get(b.range()).unwrap_or(""), &inside));
    }
    parts.join("\n")
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
pub(crate) fn native_calls<'a>(value: &'a serde_json::Value, tools: Option<&dyn ToolLookup>) -> Vec<ExtractedCall<'a>> {
    let Some(items) = value.as_array() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let f = item.get("function").filter(|f| f.is_object()).unwrap_or(item);
        let Some(name) = f.get("name").and_then(serde_json::Value::as_str) else {
            continue;
        };
        let arguments = match f.get("arguments") {
            Some(serde_json::Value::String(s)) => Cow::Borrowed(s.as_str()),
            None | Some(serde_json::Value::Null) => Cow::Borrowed("{}"),
            Some(v) => Cow::Owned(v.to_string()),
        };
        let id = item.get("id").and_then(|v| v.as_str()).map(Cow::Borrowed);
        native::calls_into(&mut out, Cow::Borrowed(name), arguments, id, i, tools);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{Extraction, Message, Options, Repeats, extract_found, extract_native, native_calls};
    use crate::limits::Limits;
    use serde_json::json;
    use std::borrow::Cow;

    #[test]
    fn the_server_calls_alone_come_out_as_an_empty_message_with_them_gives_them() {
        let call = |id: Option<&str>, name: &str, args: &str| {
            let mut c = json!({"type": "function", "function": {"name": name, "arguments": args}});
            if let Some(id) = id {
                c["id"] = json!(id);
            }
            c
        };
        let lists = [
            json!([]),
            json!([call(Some("c1"), "get_weather", "{\"city\": \"Paris\"}")]),
            json!([call(None, "a", "{}"), call(None, "a", "{}"), call(Some("x"), "b", "{\"n\": 1}")]),
            json!([call(None, "a", "{}"), call(None, "b", "{"), call(None, "c", "[]"), call(None, "a", "{}")]),
        ];
        let options = [
            Options::default(),
            Options::default().keeping_repeats(),
            Options::default().with_repeats(Repeats::Keep),
            Options::default().with_limits(Limits::default().with_max_calls(2)),
            Options::default().with_limits(Limits::default().with_max_calls(2)).keeping_repeats(),
        ];
        for list in &lists {
            for o in &options {
                let native = native_calls(list, None);
                let whole = extract_found(&Message::new(""), native.clone(), None, o);
                let (calls, notes) = extract_native(native, o);
                let alone = Extraction { calls, content: Cow::Borrowed(""), reasoning_content: None, notes };
                assert_eq!(alone, whole, "{list} {o:?}");
            }
        }
    }
}
