//! The whole-reply API: what every front end calls. Give it what the model replied — the
//! `content`, the `reasoning_content`, the `tool_calls` the server already parsed, the
//! `finish_reason` — and the tools it was offered; get back calls that can run (each with
//! its canonical name, an id and arguments the schema accepts) or refusals the model can
//! act on, the prose and reasoning left once the calls are taken out, and a report per call.
//!
//! This module and [`pipeline`](crate::pipeline) are the only ones that know the order of
//! the stages: extract → salvage → validate → repair → validate → storm guard. The CLI, the
//! proxy, the MCP wrapper and the agent dispatcher only format what it returns.
//!
//! ```
//! use serde_json::json;
//! use toolfix::{fix_reply, CallStatus, FixOptions, Reply, ToolSet};
//!
//! let tools = ToolSet::new(&[json!({"name": "get_weather", "parameters": {"type": "object",
//!     "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
//!     "required": ["city"]}})]).unwrap();
//! let reply = Reply::new("Let me look.<tool_call>{\"name\": \"GetWeather\", \"arguments\": {'city': 'Paris', 'days': '3'}}</tool_call>");
//! let fixed = fix_reply(&reply, Some(&tools), None, &FixOptions::default()).unwrap();
//! assert_eq!(fixed.content, "Let me look.");
//! let call = &fixed.calls[0];
//! assert_eq!(call.name, "get_weather"); // the canonical name, not the model's variant
//! assert_eq!(call.status, CallStatus::Repaired);
//! assert_eq!(call.arguments_text(), Some(r#"{"city": "Paris", "days": 3}"#));
//! ```
//!
//! [`ReplyStream`] is the streaming counterpart: feed deltas as they arrive, get text that
//! is safe to show at once (call markup held back) and each call as soon as it is complete
//! and fixed. Fed the same reply in any chunks, it returns what [`fix_reply`] returns.
//!
//! # Which calls get the token-limit rule
//!
//! When `finish_reason` is `"length"`, the output was cut by the token limit, so a call
//! that reached the end of the output may be missing more than its closing brackets: the
//! last server-parsed call, a `content` call that reaches the end of `content`, and calls
//! found in reasoning are repaired with [`CallOptions::hit_token_limit`](crate::pipeline::CallOptions)
//! — a tool that may have side effects gets a refusal for such a call when its arguments
//! were not complete.

mod fixer;
mod merge;
pub mod stream;

pub use fixer::CallFixer;
pub use stream::{Received, ReceivedCall, ReplyEvent, ReplyStream, ToolCallDelta};

use crate::error::{Error, ErrorKind, Result};
use crate::extract::{self, Channel, Format, Intent, Message, Note, ReasoningCalls, Signal};
use crate::guard::{GuardConfig, Suppressed};
use crate::limits::Limits;
use crate::pipeline::CallOutcome;
use crate::report::Refusal;
use crate::report::Report;
use crate::schema::ToolSet;
use serde::Serialize;
use serde::ser::SerializeStruct as _;
use serde_json::Value;
use std::borrow::Cow;

/// An assistant reply as the server returned it.
///
/// ```
/// use serde_json::json;
/// use toolfix::Reply;
///
/// let choice = json!({"index": 0, "finish_reason": "length",
///     "message": {"role": "assistant", "content": "Hi", "tool_calls": []}});
/// let reply = Reply::from_choice(&choice);
/// assert_eq!(reply.content, "Hi");
/// assert!(reply.hit_token_limit());
/// ```
#[derive(Clone, Copy, Debug, Default)]
#[non_exhaustive]
pub struct Reply<'a> {
    /// The `content` text (empty when the server sent `null`).
    pub content: &'a str,
    /// The `reasoning_content` text, when the server split it out.
    pub reasoning_content: Option<&'a str>,
    /// The `tool_calls` the server already parsed: an array of `{"id"?, "function":
    /// {"name", "arguments"}}` or `{"name", "arguments"}`, arguments a string or a value.
    pub tool_calls: Option<&'a Value>,
    /// Why the model stopped (`"stop"`, `"tool_calls"`, `"length"`, ...).
    pub finish_reason: Option<&'a str>,
    /// The server's parsed calls, read by the caller (no `Value` needed): used when
    /// `tool_calls` is `None`, and read as `tool_calls` holding the same calls would be.
    pub native_calls: Option<&'a [NativeCall<'a>]>,
}

/// A call the server parsed, borrowed from a response the caller read itself: what
/// `{"id": id, "function": {"name": name, "arguments": arguments}}` in `tool_calls` says
/// (`arguments` the text of the JSON string).
///
/// ```
/// use toolfix::{fix_reply, CallStatus, FixOptions, NativeCall, Reply};
///
/// let calls = [NativeCall::new("get_time", "{}").with_id("c1")];
/// let fixed = fix_reply(&Reply::new("").with_native_calls(&calls), None, None, &FixOptions::default()).unwrap();
/// assert_eq!(fixed.calls[0].id, "c1");
/// assert_eq!(fixed.calls[0].status, CallStatus::Untouched);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct NativeCall<'a> {
    /// The function's name.
    pub name: &'a str,
    /// The arguments text.
    pub arguments: &'a str,
    /// The call's id, when the server gave one as a string.
    pub id: Option<&'a str>,
}

impl<'a> NativeCall<'a> {
    /// A call of `name` with these arguments, no id.
    #[must_use]
    pub fn new(name: &'a str, arguments: &'a str) -> Self {
        NativeCall { name, arguments, id: None }
    }

    /// This call with an id.
    #[must_use]
    pub fn with_id(mut self, id: &'a str) -> Self {
        self.id = Some(id);
        self
    }
}

impl<'a> Reply<'a> {
    /// A reply with this `content` only.
    #[must_use]
    pub fn new(content: &'a str) -> Self {
        Reply { content, ..Reply::default() }
    }

    /// This reply with a `reasoning_content`.
    #[must_use]
    pub fn with_reasoning_content(mut self, reasoning: &'a str) -> Self {
        self.reasoning_content = Some(reasoning);
        self
    }

    /// This reply with the server's parsed `tool_calls`.
    #[must_use]
    pub fn with_tool_calls(mut self, tool_calls: &'a Value) -> Self {
        self.tool_calls = Some(tool_calls);
        self
    }

    /// This reply with the server's parsed calls, read by the caller (see
    /// [`NativeCall`]); `tool_calls`, when also given, is read instead.
    #[must_use]
    pub fn with_native_calls(mut self, calls: &'a [NativeCall<'a>]) -> Self {
        self.native_calls = Some(calls);
        self
    }

    /// This reply with a `finish_reason`.
    #[must_use]
    pub fn with_finish_reason(mut self, finish_reason: &'a str) -> Self {
        self.finish_reason = Some(finish_reason);
        self
    }

    /// The reply in an assistant message object: `content` (a string; `null` or an array
    /// of parts reads as empty), `reasoning_content` (or `reasoning`, as some servers name
    /// it) and `tool_calls`.
    #[must_use]
    pub fn from_message(message: &'a Value) -> Self {
        Reply {
            content: message.get("content").and_then(Value::as_str).unwrap_or(""),
            reasoning_content: message
                .get("reasoning_content")
                .or_else(|| message.get("reasoning"))
                .and_then(Value::as_str),
            tool_calls: message.get("tool_calls").filter(|t| t.is_array()),
            finish_reason: None,
            native_calls: None,
        }
    }

    /// The reply in a chat completion choice: its `message` (or `delta`) and its
    /// `finish_reason`.
    #[must_use]
    pub fn from_choice(choice: &'a Value) -> Self {
        let message = choice.get("message").or_else(|| choice.get("delta")).unwrap_or(&Value::Null);
        Reply { finish_reason: choice.get("finish_reason").and_then(Value::as_str), ..Reply::from_message(message) }
    }

    /// True when the server says the output was cut by the token limit
    /// (`finish_reason: "length"`).
    #[must_use]
    pub fn hit_token_limit(&self) -> bool {
        self.finish_reason == Some("length")
    }

    fn text_message(&self) -> Message<'a> {
        let mut m = Message::new(self.content);
        if let Some(r) = self.reasoning_content {
            m = m.with_reasoning_content(r);
        }
        m
    }
}

/// Settings of [`fix_reply`] and [`ReplyStream`].
///
/// ```
/// use toolfix::{FixOptions, Limits};
/// use toolfix::guard::GuardConfig;
///
/// let options = FixOptions::default()
///     .with_limits(Limits::default().with_max_input_bytes(1 << 20))
///     .with_guard(Some(GuardConfig::default().with_threshold(4)));
/// assert!(options.guard.is_some());
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct FixOptions {
    /// How calls are found (reasoning blocks, calls in reasoning).
    pub extract: extract::Options,
    /// Size and depth caps.
    pub limits: Limits,
    /// The storm guard's settings; `None` turns it off. A tool without its own guard
    /// policy counts as mutating unless it is declared read-only.
    pub guard: Option<GuardConfig>,
}

impl Default for FixOptions {
    fn default() -> Self {
        FixOptions {
            extract: extract::Options::default(),
            limits: Limits::default(),
            guard: Some(GuardConfig::default()),
        }
    }
}

impl FixOptions {
    /// These options with other extraction settings.
    #[must_use]
    pub fn with_extract(mut self, extract: extract::Options) -> Self {
        self.extract = extract;
        self
    }

    /// These options with other limits.
    #[must_use]
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// These options with other storm-guard settings (`None`: no guard).
    #[must_use]
    pub fn with_guard(mut self, guard: Option<GuardConfig>) -> Self {
        self.guard = guard;
        self
    }
}

/// What became of a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum CallStatus {
    /// Valid as sent: the arguments are the model's text, byte for byte.
    Untouched,
    /// Recovered by text fixes and/or schema repairs.
    Repaired,
    /// Refused: [`FixedCall::refusal`] says what the model should fix.
    Refused,
    /// Valid, but the storm guard stopped it: [`FixedCall::suppressed`] holds the message.
    Suppressed,
}

impl CallStatus {
    /// The stable `snake_case` name.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            CallStatus::Untouched => "untouched",
            CallStatus::Repaired => "repaired",
            CallStatus::Refused => "refused",
            CallStatus::Suppressed => "suppressed",
        }
    }

    /// True when the call can run (untouched or repaired).
    #[must_use]
    pub const fn is_usable(self) -> bool {
        matches!(self, CallStatus::Untouched | CallStatus::Repaired)
    }
}

/// One call of a fixed reply.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct FixedCall {
    /// The call id: the server's or the format's when given, otherwise fresh (unique in
    /// the conversation, and the same for the same request).
    pub id: String,
    /// The tool's declared name when the name resolved (`get_weather` for `GetWeather`),
    /// otherwise the name as written.
    pub name: String,
    /// The name as the model wrote it.
    pub written_name: String,
    /// The format the call was found in ([`Format::Native`] for server-parsed calls).
    pub format: Format,
    /// Where the call was found.
    pub channel: Channel,
    /// What became of it.
    pub status: CallStatus,
    /// What the markup was meant as, for a call written in text ([`Intent::Uncertain`]:
    /// its signals disagree; such a call runs only for a tool declared read-only).
    pub intent: Intent,
    /// The signals read around the call's markup (see [`extract::intent`]); empty for a
    /// call the server parsed.
    pub signals: Vec<Signal>,
    /// The arguments as the model wrote them (for a call found in text, as its format
    /// gives them); `None` when they are the accepted text, byte for byte.
    written_arguments: Option<String>,
    outcome: CallOutcome,
    suppressed: Option<Suppressed>,
}

impl FixedCall {
    /// The arguments to run the tool with, as JSON text (the model's text byte for byte
    /// when untouched), when the call is usable.
    #[must_use]
    pub fn arguments_text(&self) -> Option<&str> {
        if self.status.is_usable() { self.outcome.arguments_text() } else { None }
    }

    /// The arguments as a value, when the call is usable.
    #[must_use]
    pub fn arguments(&self) -> Option<&Value> {
        if self.status.is_usable() { self.outcome.arguments() } else { None }
    }

    /// What the model should fix, when the call is refused.
    #[must_use]
    pub fn refusal(&self) -> Option<&Refusal> {
        self.outcome.refusal()
    }

    /// The arguments as the model wrote them, before any repair: what a fixer or a model
    /// that refuses the repair needs (for a call found in text, as its format gives them).
    #[must_use]
    pub fn written_arguments(&self) -> &str {
        match &self.written_arguments {
            Some(written) => written,
            None => self.outcome.arguments_text().unwrap_or_default(),
        }
    }

    /// The storm guard's verdict, when it stopped the call.
    #[must_use]
    pub fn suppressed(&self) -> Option<&Suppressed> {
        self.suppressed.as_ref()
    }

    /// The message for the model when the call cannot run: the refusal or the storm
    /// guard's message.
    #[must_use]
    pub fn message(&self) -> Option<&str> {
        match (&self.suppressed, self.outcome.refusal()) {
            (Some(s), _) => Some(&s.message),
            (None, Some(r)) => Some(&r.message),
            (None, None) => None,
        }
    }

    /// What to answer the model about this call in a corrective re-prompt: why it could
    /// not be used, or that it was not run because another call of its reply could not be
    /// (`feedback::call_result`).
    #[must_use]
    pub fn result_for_model(&self) -> &str {
        crate::feedback::call_result(self.message())
    }

    /// The per-call result of the repair pipeline.
    #[must_use]
    pub fn outcome(&self) -> &CallOutcome {
        &self.outcome
    }

    /// What was changed: text fixes, schema repairs and notes.
    #[must_use]
    pub fn report(&self) -> &Report {
        self.outcome.report()
    }
}

impl Serialize for FixedCall {
    /// `{"id","name","format","channel","status","arguments"?: <raw JSON>, "error"?:
    /// {"message","issues"}, "suppressed"?: {...}, "report": {...}}`: the arguments are the
    /// accepted text itself, so numbers and key order survive.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("FixedCall", 9)?;
        s.serialize_field("id", &self.id)?;
        s.serialize_field("name", &self.name)?;
        if self.written_name != self.name {
            s.serialize_field("written_name", &self.written_name)?;
        }
        s.serialize_field("format", self.format.as_str())?;
        s.serialize_field("channel", channel_name(self.channel))?;
        s.serialize_field("status", &self.status)?;
        if self.intent != Intent::Call {
            s.serialize_field("intent", &self.intent)?;
        }
        if !self.signals.is_empty() {
            s.serialize_field("signals", &self.signals)?;
        }
        if let Some(text) = self.arguments_text() {
            let raw = serde_json::value::RawValue::from_string(crate::salvage::compact(text))
                .map_err(serde::ser::Error::custom)?;
            s.serialize_field("arguments", &raw)?;
        }
        if let Some(r) = self.refusal() {
            s.serialize_field("error", r)?;
        }
        if let Some(sup) = &self.suppressed {
            s.serialize_field(
                "suppressed",
                &serde_json::json!({"message": sup.message, "repeats": sup.repeats, "window": sup.window}),
            )?;
        }
        s.serialize_field("report", self.report())?;
        s.end()
    }
}

fn channel_name(channel: Channel) -> &'static str {
    match channel {
        Channel::Content => "content",
        Channel::Reasoning => "reasoning",
        _ => "tool_calls",
    }
}

/// How a reply ended, over all its calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ReplyOutcome {
    /// No call: plain prose is a valid answer.
    NoCalls,
    /// Every call can run.
    Usable,
    /// At least one call was refused or suppressed.
    Refused,
}

/// The result of [`fix_reply`]: the calls in order, and the prose and reasoning left.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct FixedReply {
    /// The calls, in order: `content` calls, then server-parsed ones, then calls found in
    /// reasoning (used only when allowed: see [`extract::ReasoningCalls`]); a call that
    /// repeats one of another channel is dropped (a note says so).
    pub calls: Vec<FixedCall>,
    /// `content` without call markup.
    pub content: String,
    /// The reasoning: the `reasoning_content` given and reasoning moved out of `content`.
    pub reasoning_content: Option<String>,
    /// What the extractor saw and did not turn into a call.
    pub notes: Vec<Note>,
    /// Whether [`fix_reply`] left `content` as the reply gave it (see
    /// [`FixedReply::content_as_given`]).
    content_as_given: bool,
}

impl FixedReply {
    /// True when [`fix_reply`] returned `content` exactly as the reply gave it, byte for
    /// byte: no markup, reasoning or blank taken out. A caller that keeps the reply can
    /// then tell the content is unchanged without comparing the two texts. `false` says
    /// nothing (a reply fixed by [`ReplyStream`] always answers `false`), and a change the
    /// caller makes to the field afterwards is not seen.
    ///
    /// ```
    /// use toolfix::{FixOptions, Reply, fix_reply};
    ///
    /// let plain = fix_reply(&Reply::new("It is sunny."), None, None, &FixOptions::default()).unwrap();
    /// assert!(plain.content_as_given());
    /// let call = Reply::new("Sure. <tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>");
    /// let fixed = fix_reply(&call, None, None, &FixOptions::default()).unwrap();
    /// assert!(!fixed.content_as_given());
    /// ```
    #[must_use]
    pub fn content_as_given(&self) -> bool {
        self.content_as_given
    }

    /// How the reply ended over all its calls.
    #[must_use]
    pub fn outcome(&self) -> ReplyOutcome {
        if self.calls.is_empty() {
            ReplyOutcome::NoCalls
        } else if self.calls.iter().all(|c| c.status.is_usable()) {
            ReplyOutcome::Usable
        } else {
            ReplyOutcome::Refused
        }
    }

    /// True when some call was recovered or repaired (not all untouched server calls under
    /// the names they were sent with).
    #[must_use]
    pub fn changed_calls(&self) -> bool {
        self.calls
            .iter()
            .any(|c| c.channel != Channel::ToolCalls || c.status != CallStatus::Untouched || c.written_name != c.name)
    }
}

impl FixedReply {
    /// The corrective re-prompt after this reply (`feedback::reprompt`): each call written
    /// in its text with what to fix, then the request to send the calls again as tool calls.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolfix::{FixOptions, Reply, ToolSet, fix_reply};
    ///
    /// let tools = ToolSet::new(&[json!({"name": "pay", "parameters": {"type": "object",
    ///     "properties": {"to": {"type": "string"}}, "required": ["to"]}})]).unwrap();
    /// let reply = Reply::new("<tool_call>{\"name\": \"pay\", \"arguments\": {}}</tool_call>");
    /// let fixed = fix_reply(&reply, Some(&tools), None, &FixOptions::default()).unwrap();
    /// let text = fixed.reprompt();
    /// assert!(text.contains("`pay`") && text.ends_with("as tool calls."));
    /// ```
    #[must_use]
    pub fn reprompt(&self) -> String {
        crate::feedback::reprompt(
            self.calls
                .iter()
                .filter(|c| c.channel != Channel::ToolCalls)
                .map(|c| (c.written_name.as_str(), c.result_for_model())),
        )
    }

    /// The turn a client gets when this reply's calls still could not be used after every
    /// attempt (`feedback::gave_up`): `prose`, then which calls were not run and why.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolfix::{FixOptions, Reply, ToolSet, fix_reply};
    ///
    /// let tools = ToolSet::new(&[json!({"name": "pay", "parameters": {"type": "object",
    ///     "properties": {"to": {"type": "string"}}, "required": ["to"]}})]).unwrap();
    /// let calls = json!([{"id": "c1", "function": {"name": "pay", "arguments": "{}"}}]);
    /// let fixed = fix_reply(&Reply::new("Paying.").with_tool_calls(&calls), Some(&tools), None,
    ///     &FixOptions::default()).unwrap();
    /// let text = fixed.gave_up(&fixed.content);
    /// assert!(text.starts_with("Paying.\n\n") && text.contains("`pay` was not run."));
    /// ```
    #[must_use]
    pub fn gave_up(&self, prose: &str) -> String {
        crate::feedback::gave_up(
            prose,
            self.calls.iter().filter(|c| !c.status.is_usable()).map(|c| (c.name.as_str(), c.result_for_model())),
        )
    }
}

impl Serialize for FixedReply {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("FixedReply", 5)?;
        s.serialize_field("outcome", &self.outcome())?;
        s.serialize_field("tool_calls", &self.calls)?;
        s.serialize_field("content", &self.content)?;
        if let Some(r) = &self.reasoning_content {
            s.serialize_field("reasoning_content", r)?;
        }
        let notes: Vec<Value> = self
            .notes
            .iter()
            .map(|n| serde_json::json!({"kind": n.kind.as_str(), "span": [n.span.start, n.span.end], "name": n.name}))
            .collect();
        s.serialize_field("notes", &notes)?;
        s.end()
    }
}

/// Fix a whole reply: find the calls in every channel, repair each against its tool's
/// schema (or, without `tools`, salvage its JSON only), stop repeat storms, and return the
/// calls with the prose and reasoning left.
///
/// `history` is the conversation's `messages` array, when known: the storm guard rebuilds
/// its window from it, so no state is kept between calls.
///
/// # Errors
///
/// [`ErrorKind::InputTooLarge`] when `content` and `reasoning_content` together are longer
/// than [`Limits::max_input_bytes`]. Every other problem is a refused call, not an error.
pub fn fix_reply(
    reply: &Reply<'_>,
    tools: Option<&ToolSet>,
    history: Option<&Value>,
    options: &FixOptions,
) -> Result<FixedReply> {
    check_size(reply.content.len() + reply.reasoning_content.map_or(0, str::len), &options.limits)?;
    let lookup = tools.map(|t| t as &dyn extract::ToolLookup);
    // Every call of every channel, repeats kept (whether reasoning calls are used, and
    // which repeat is kept, is decided over all of them once they are repaired).
    let found_options = options.extract.with_reasoning_calls(ReasoningCalls::Always).keeping_repeats();
    let text = extract::extract_with(&reply.text_message(), lookup, &found_options);
    // The server's calls, from its `tool_calls` value or as the caller read them: the
    // same reading either way (`extract::native`), then the same extraction.
    let served = match (reply.tool_calls, reply.native_calls) {
        (Some(calls), _) => Some(extract::native_calls(calls, lookup)),
        (None, Some(calls)) => {
            let mut out = Vec::with_capacity(calls.len());
            for (i, c) in calls.iter().enumerate() {
                let id = c.id.map(Cow::Borrowed);
                extract::native::calls_into(&mut out, Cow::Borrowed(c.name), Cow::Borrowed(c.arguments), id, i, lookup);
            }
            Some(out)
        }
        (None, None) => None,
    };
    let (native, mut native_notes) = match served {
        Some(served) => extract::extract_native(served, &found_options),
        None => (Vec::new(), Vec::new()),
    };
    let mut found = merge::Found { native, ..merge::Found::default() };
    for call in text.calls {
        if call.channel == Channel::Reasoning { found.reasoning.push(call) } else { found.content.push(call) }
    }
    // A content call may have been cut only when the output ended in it: it reaches the
    // end of `content` and no server-parsed call follows.
    let content_end = if found.native.is_empty() { reply.content.trim_end().len() } else { usize::MAX };
    let cut = merge::Cut { hit: reply.hit_token_limit(), content_end };
    let mut fixer = CallFixer::new(tools, history, options);
    let (calls, mut notes) = merge::assemble(&mut fixer, found, cut, options);
    let mut all_notes = text.notes;
    all_notes.append(&mut native_notes);
    all_notes.append(&mut notes);
    // The extractor hands back the very text it was given when it took nothing out of it.
    let content_as_given = matches!(&text.content, std::borrow::Cow::Borrowed(c)
        if c.as_ptr() == reply.content.as_ptr() && c.len() == reply.content.len());
    Ok(FixedReply {
        calls,
        content: text.content.into_owned(),
        reasoning_content: text.reasoning_content.map(std::borrow::Cow::into_owned),
        notes: all_notes,
        content_as_given,
    })
}

fn check_size(size: usize, limits: &Limits) -> Result<()> {
    if size > limits.max_input_bytes {
        return Err(Error::new(
            ErrorKind::InputTooLarge,
            format!("the reply is too large ({size} bytes, limit {} bytes)", limits.max_input_bytes),
        ));
    }
    Ok(())
}
