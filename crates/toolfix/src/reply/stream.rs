//! The streaming counterpart of [`fix_reply`](super::fix_reply): feed a reply's deltas as
//! they arrive; get back text that is safe to show now (call markup held back) and, when
//! the reply ends, its calls, fixed.
//!
//! Fed the same reply, in any chunks, [`ReplyStream::finish`] returns what
//! [`fix_reply`](super::fix_reply) returns: the same calls with the same ids, the same
//! prose and reasoning. Deltas are expected in the order servers send them: reasoning, then
//! content, then tool calls. Calls are decided at the end, over the whole reply: which of
//! two copies is kept (the server's call wins over one left in `content`), whether calls
//! drafted in reasoning are used, and which calls the token limit may have cut.
//!
//! ```
//! use serde_json::json;
//! use toolfix::{FixOptions, ReplyEvent, ReplyStream, ToolCallDelta, ToolSet};
//!
//! let tools = ToolSet::new(&[json!({"name": "ls", "parameters": {"type": "object",
//!     "properties": {"path": {"type": "string"}}}})]).unwrap();
//! let mut stream = ReplyStream::new(Some(&tools), None, FixOptions::default());
//! let mut shown = String::new();
//! let mut calls = Vec::new();
//! let mut on = |event: ReplyEvent| match event {
//!     ReplyEvent::Content(t) => shown.push_str(&t),
//!     ReplyEvent::Call(c) => calls.push(c),
//!     _ => {}
//! };
//! for chunk in ["Listing.<tool_", "call>{\"name\": \"ls\", \"argu", "ments\": {\"path\": \".\"}}</tool_call>"] {
//!     stream.push_content(chunk).unwrap().into_iter().for_each(&mut on);
//! }
//! let (events, fixed) = stream.finish(Some("stop"));
//! events.into_iter().for_each(&mut on);
//! assert_eq!(shown, "Listing.");
//! assert_eq!(calls.len(), 1);
//! assert_eq!(fixed.calls[0].arguments_text(), Some(r#"{"path": "."}"#));
//! ```

use super::fixer::CallFixer;
use super::merge::{self, Found};
use super::{FixOptions, FixedCall, FixedReply, check_size};
use crate::error::Result;
use crate::extract::stream::{StreamEvent, StreamExtractor};
use crate::extract::{Channel, Note, ReasoningCalls, ToolLookup};
use crate::schema::ToolSet;
use serde_json::Value;
use std::borrow::Cow;

/// The most server-parsed calls one reply may hold; later ones are dropped with a note.
const MAX_NATIVE_CALLS: usize = 256;

/// What the stream tells its caller.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum ReplyEvent {
    /// Prose of `content`, safe to show.
    Content(String),
    /// Reasoning text: from `reasoning_content`, or a block moved out of `content`.
    Reasoning(String),
    /// Every `Content` sent so far was reasoning that had been forced open (only its close
    /// marker appeared).
    ContentWasReasoning,
    /// A fixed call (all of them come when the reply ends).
    Call(Box<FixedCall>),
    /// Something seen and not used.
    Note(Note),
}

/// One `tool_calls` delta of a streamed chat completion.
#[derive(Clone, Copy, Debug, Default)]
#[non_exhaustive]
pub struct ToolCallDelta<'a> {
    /// The call's `index` in the reply's `tool_calls`.
    pub index: usize,
    /// The call's id, when this delta carries it.
    pub id: Option<&'a str>,
    /// The function name, or a piece of it.
    pub name: Option<&'a str>,
    /// The next piece of the arguments text.
    pub arguments: Option<&'a str>,
}

impl<'a> ToolCallDelta<'a> {
    /// A delta for call `index`.
    #[must_use]
    pub fn new(index: usize) -> Self {
        ToolCallDelta { index, ..ToolCallDelta::default() }
    }

    /// This delta with an id.
    #[must_use]
    pub fn with_id(mut self, id: &'a str) -> Self {
        self.id = Some(id);
        self
    }

    /// This delta with a name (or a piece of it).
    #[must_use]
    pub fn with_name(mut self, name: &'a str) -> Self {
        self.name = Some(name);
        self
    }

    /// This delta with a piece of the arguments.
    #[must_use]
    pub fn with_arguments(mut self, arguments: &'a str) -> Self {
        self.arguments = Some(arguments);
        self
    }

    /// The delta in an OpenAI `choices[].delta.tool_calls[]` item:
    /// `{"index", "id"?, "function": {"name"?, "arguments"?}}`.
    #[must_use]
    pub fn from_value(value: &'a Value) -> Self {
        let f = value.get("function").unwrap_or(&Value::Null);
        ToolCallDelta {
            index: value.get("index").and_then(Value::as_u64).map_or(0, |i| usize::try_from(i).unwrap_or(usize::MAX)),
            id: value.get("id").and_then(Value::as_str),
            name: f.get("name").and_then(Value::as_str),
            arguments: f.get("arguments").and_then(Value::as_str),
        }
    }
}

/// The reply as the server sent it, assembled from the deltas fed to a [`ReplyStream`]
/// (what a front end needs to ask the model again, or to report what it received).
///
/// ```
/// use toolfix::{FixOptions, ReplyStream, ToolCallDelta};
///
/// let mut stream = ReplyStream::new(None, None, FixOptions::default());
/// stream.push_content("On it.").unwrap();
/// stream.push_tool_call(ToolCallDelta::new(0).with_id("c1").with_name("ls").with_arguments("{\"pa"));
/// stream.push_tool_call(ToolCallDelta::new(0).with_arguments("th\": \".\"}"));
/// let received = stream.received();
/// assert_eq!(received.content, "On it.");
/// assert_eq!(received.tool_calls[0].arguments, r#"{"path": "."}"#);
/// assert_eq!(received.tool_calls[0].id.as_deref(), Some("c1"));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Received {
    /// The `content` text, as received.
    pub content: String,
    /// The `reasoning_content` text, when any was received.
    pub reasoning_content: Option<String>,
    /// The server-parsed calls, in the order their first delta came.
    pub tool_calls: Vec<ReceivedCall>,
}

/// A server-parsed call as received (see [`Received`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReceivedCall {
    /// The call's `index` in the deltas.
    pub index: usize,
    /// Its id, when one came.
    pub id: Option<String>,
    /// Its name.
    pub name: String,
    /// Its arguments text, joined.
    pub arguments: String,
}

/// A server-parsed call being received.
#[derive(Debug)]
struct Native {
    index: usize,
    id: Option<String>,
    name: String,
    arguments: Option<String>,
}

/// The streaming fixer for one reply. It owns what it needs (the tool set is shared, not
/// copied), so it can be kept in a struct, moved across threads (`Send`) and held across
/// `.await` points.
pub struct ReplyStream {
    options: FixOptions,
    /// Owns the tool set the stream reads with.
    fixer: CallFixer,
    content: StreamExtractor<'static>,
    reasoning: Option<StreamExtractor<'static>>,
    /// Bytes of content and reasoning received.
    size: usize,
    /// Content received so far: its length and the end of its last non-space character.
    content_len: usize,
    content_end: usize,
    /// The calls found so far, decided when the reply ends.
    found: Found<'static>,
    natives: Vec<Native>,
    natives_seen: usize,
    /// The server's calls have started: the content before them is decided.
    content_done: bool,
    /// What the whole reply will hold.
    content_text: String,
    reasoning_text: Option<String>,
    /// Reasoning moved out of the content (its pieces concatenate).
    moved: Option<String>,
    notes: Vec<Note>,
    /// The reply as received.
    received: Received,
}

impl std::fmt::Debug for ReplyStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReplyStream")
            .field("received", &self.size)
            .field("calls", &(self.found.content.len() + self.found.reasoning.len()))
            .field("natives", &self.natives.len())
            .finish_non_exhaustive()
    }
}

impl ReplyStream {
    /// A stream for one reply, with the tools offered (none: salvage only) and the
    /// conversation so far (for the storm guard).
    #[must_use]
    pub fn new(tools: Option<&ToolSet>, history: Option<&Value>, options: FixOptions) -> Self {
        ReplyStream {
            fixer: CallFixer::new(tools, history, &options),
            content: StreamExtractor::new(None, found_options(&options)),
            reasoning: None,
            options,
            size: 0,
            content_len: 0,
            content_end: 0,
            found: Found::default(),
            natives: Vec::new(),
            natives_seen: 0,
            content_done: false,
            content_text: String::new(),
            reasoning_text: None,
            moved: None,
            notes: Vec::new(),
            received: Received::default(),
        }
    }

    /// The reply as received so far: content, reasoning and server-parsed calls as the
    /// server sent them (text refused for size is not in it).
    #[must_use]
    pub fn received(&self) -> &Received {
        &self.received
    }

    /// Feed the next piece of `content`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InputTooLarge`](crate::error::ErrorKind) once content and reasoning together
    /// pass [`Limits::max_input_bytes`](crate::limits::Limits); the stream should then be passed
    /// through unfixed.
    pub fn push_content(&mut self, text: &str) -> Result<Vec<ReplyEvent>> {
        self.grow(text.len())?;
        if let Some(last) = text.char_indices().rev().find(|(_, c)| !c.is_whitespace())
            && self.content_end != usize::MAX
        {
            self.content_end = self.content_len + last.0 + last.1.len_utf8();
        }
        self.content_len += text.len();
        self.received.content.push_str(text);
        let events = self.content.push_with(text.as_bytes(), lookup(&self.fixer));
        let mut out = Vec::new();
        self.take_content(events, &mut out);
        Ok(out)
    }

    /// Feed the next piece of `reasoning_content`.
    ///
    /// # Errors
    ///
    /// As [`push_content`](Self::push_content).
    pub fn push_reasoning(&mut self, text: &str) -> Result<Vec<ReplyEvent>> {
        self.grow(text.len())?;
        self.reasoning_text.get_or_insert_with(String::new).push_str(text);
        self.received.reasoning_content.get_or_insert_with(String::new).push_str(text);
        let options = found_options(&self.options);
        let reasoning = self.reasoning.get_or_insert_with(|| StreamExtractor::for_reasoning(None, options));
        let events = reasoning.push_with(text.as_bytes(), lookup(&self.fixer));
        let mut out = Vec::new();
        self.take_reasoning(events, &mut out);
        Ok(out)
    }

    /// Feed a `tool_calls` delta. A call is complete when a delta for a later index
    /// arrives, or at the end.
    pub fn push_tool_call(&mut self, delta: ToolCallDelta<'_>) -> Vec<ReplyEvent> {
        let mut out = Vec::new();
        let cap = self.options.limits.max_input_bytes.saturating_add(1);
        if !self.content_done {
            // Servers send the tool calls after the content: the content is complete, and
            // the output went on after it, so no content call was cut.
            self.content_done = true;
            self.content_end = usize::MAX;
            self.end_content(&mut out);
        }
        if !self.natives.iter().any(|n| n.index == delta.index) {
            if self.natives_seen >= MAX_NATIVE_CALLS {
                return out;
            }
            self.natives_seen += 1;
            // A later call has started: the earlier ones are complete.
            self.complete_natives(Some(delta.index));
            self.natives.push(Native { index: delta.index, id: None, name: String::new(), arguments: None });
            self.received.tool_calls.push(ReceivedCall { index: delta.index, ..ReceivedCall::default() });
        }
        if let Some(r) = self.received.tool_calls.iter_mut().rev().find(|r| r.index == delta.index) {
            if let Some(id) = delta.id.filter(|i| !i.is_empty()) {
                r.id.get_or_insert_with(|| id.to_owned());
            }
            if let Some(name) = delta.name
                && r.name != name
            {
                push_capped(&mut r.name, name, 1024);
            }
            if let Some(a) = delta.arguments {
                push_capped(&mut r.arguments, a, cap);
            }
        }
        if let Some(n) = self.natives.iter_mut().find(|n| n.index == delta.index) {
            if let Some(id) = delta.id.filter(|i| !i.is_empty()) {
                n.id.get_or_insert_with(|| id.to_owned());
            }
            if let Some(name) = delta.name
                && n.name != name
            {
                push_capped(&mut n.name, name, 1024);
            }
            if let Some(a) = delta.arguments {
                // Over the cap the text is still too large for the pipeline, which refuses it
                // as such; more is not kept.
                push_capped(n.arguments.get_or_insert_with(String::new), a, cap);
            }
        }
        out
    }

    /// The reply ended (with the server's `finish_reason`): decide everything held back.
    /// Returns the last events (the calls among them) and the whole fixed reply, equal to
    /// what [`fix_reply`](super::fix_reply) returns for the same reply.
    pub fn finish(mut self, finish_reason: Option<&str>) -> (Vec<ReplyEvent>, FixedReply) {
        let hit = finish_reason == Some("length");
        let mut out = Vec::new();
        self.end_content(&mut out);
        self.complete_natives(None);
        if let Some(r) = self.reasoning.take() {
            let events = r.finish_with(lookup(&self.fixer));
            self.take_reasoning(events, &mut out);
        }
        let cut = merge::Cut { hit, content_end: self.content_end };
        let found = std::mem::take(&mut self.found);
        let (calls, mut notes) = merge::assemble(&mut self.fixer, found, cut, &self.options);
        out.extend(calls.iter().cloned().map(|c| ReplyEvent::Call(Box::new(c))));
        out.extend(notes.iter().cloned().map(ReplyEvent::Note));
        let mut parts: Vec<String> = Vec::new();
        parts.extend(self.reasoning_text);
        parts.extend(self.moved);
        let reasoning_content = if parts.is_empty() { None } else { Some(parts.join("\n")) };
        self.notes.append(&mut notes);
        let fixed = FixedReply {
            calls,
            content: self.content_text,
            reasoning_content,
            notes: self.notes,
            content_as_given: false,
        };
        (out, fixed)
    }

    /// Decide the content received so far.
    fn end_content(&mut self, out: &mut Vec<ReplyEvent>) {
        let fresh = StreamExtractor::new(None, found_options(&self.options));
        let events = std::mem::replace(&mut self.content, fresh).finish_with(lookup(&self.fixer));
        self.take_content(events, out);
    }

    fn grow(&mut self, more: usize) -> Result<()> {
        self.size += more;
        check_size(self.size, &self.options.limits)
    }

    fn take_content(&mut self, events: Vec<StreamEvent>, out: &mut Vec<ReplyEvent>) {
        for e in events {
            match e {
                StreamEvent::Text(t) => {
                    self.content_text.push_str(&t);
                    out.push(ReplyEvent::Content(t));
                }
                StreamEvent::ContentWasReasoning => {
                    self.moved.get_or_insert_with(String::new).push_str(&std::mem::take(&mut self.content_text));
                    out.push(ReplyEvent::ContentWasReasoning);
                }
                StreamEvent::Reasoning(r) => {
                    self.moved.get_or_insert_with(String::new).push_str(&r);
                    out.push(ReplyEvent::Reasoning(r));
                }
                StreamEvent::Call(c) if c.channel == Channel::Reasoning => self.found.reasoning.push(c),
                StreamEvent::Call(c) => self.found.content.push(c),
                StreamEvent::Note(n) => {
                    self.notes.push(n.clone());
                    out.push(ReplyEvent::Note(n));
                }
            }
        }
    }

    fn take_reasoning(&mut self, events: Vec<StreamEvent>, out: &mut Vec<ReplyEvent>) {
        for e in events {
            match e {
                StreamEvent::Text(t) => out.push(ReplyEvent::Reasoning(t)),
                StreamEvent::Call(c) => self.found.reasoning.push(c),
                StreamEvent::Note(n) => {
                    self.notes.push(n.clone());
                    out.push(ReplyEvent::Note(n));
                }
                _ => {}
            }
        }
    }

    /// Take the server-parsed calls before index `before` (all of them when `None`), read
    /// as the whole reply reads them (a name inferred, merged calls split).
    fn complete_natives(&mut self, before: Option<usize>) {
        let (mut done, keep): (Vec<Native>, Vec<Native>) =
            std::mem::take(&mut self.natives).into_iter().partition(|n| before.is_none_or(|b| n.index < b));
        self.natives = keep;
        done.sort_by_key(|n| n.index);
        for n in done {
            let arguments = Cow::Owned(n.arguments.unwrap_or_else(|| "{}".to_owned()));
            crate::extract::native::calls_into(
                &mut self.found.native,
                Cow::Owned(n.name),
                arguments,
                n.id.map(Cow::Owned),
                n.index,
                lookup(&self.fixer),
            );
        }
    }
}

/// The tools the stream reads with, as extraction sees them.
fn lookup(fixer: &CallFixer) -> Option<&dyn ToolLookup> {
    fixer.tools().map(|t| t as &dyn ToolLookup)
}

/// How the stream's extractors read: every call kept (repeats and calls in reasoning are
/// decided at the end, over the whole reply).
fn found_options(options: &FixOptions) -> crate::extract::Options {
    options.extract.with_reasoning_calls(ReasoningCalls::Always).keeping_repeats()
}

/// Append `piece` to `text`, keeping at most `cap` bytes (cut on a character boundary).
fn push_capped(text: &mut String, piece: &str, cap: usize) {
    let room = cap.saturating_sub(text.len());
    if piece.len() <= room {
        text.push_str(piece);
    } else {
        text.push_str(piece.get(..crate::span::floor_char_boundary(piece, room)).unwrap_or(""));
    }
}
