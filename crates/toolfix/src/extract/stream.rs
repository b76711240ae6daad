//! The streaming assembler: feed the `content` text as it arrives, get prose and calls
//! back as events.
//!
//! Text that cannot be the start of call markup is released at once; a possible marker is
//! held back until the parsers can decide; a complete call comes out as
//! [`StreamEvent::Call`] once the text after it shows it is complete. The assembler runs
//! the same steps as [`extract`](super::extract) over the text received so far, and stops
//! at the first step that more text could change, so fed whole, byte by byte or in any
//! chunks, it gives the result of the whole-text run.
//!
//! ```
//! use toolfix::extract::stream::{StreamExtractor, StreamEvent};
//! use toolfix::extract::Options;
//!
//! let mut s = StreamExtractor::new(None, Options::default());
//! let mut events = Vec::new();
//! for chunk in ["Checking.<tool", "_call>{\"name\": \"f\", ", "\"arguments\": {}}</tool_call>"] {
//!     events.extend(s.push(chunk.as_bytes()));
//! }
//! events.extend(s.finish());
//! let text: String = events.iter().filter_map(|e| match e {
//!     StreamEvent::Text(t) => Some(t.as_str()),
//!     _ => None,
//! }).collect();
//! assert_eq!(text, "Checking.");
//! assert!(events.iter().any(|e| matches!(e, StreamEvent::Call(c) if c.name == "f")));
//! ```
//!
//! Reasoning that was forced open (only `</think>` appears) is only known when its close
//! marker arrives: the assembler then sends [`StreamEvent::ContentWasReasoning`], meaning
//! every `Text` sent so far was reasoning. Calls found in reasoning are sent at
//! [`finish`](StreamExtractor::finish), when it is known whether another channel had one.

use super::parsed::{Cx, RawCall};
use super::scan::{self, Mode, Read, State, Step};
use super::{Channel, ExtractedCall, Note, NoteKind, Options, ReasoningCalls, ThinkBlocks, ToolLookup, dedupe};
use crate::Span;
use std::borrow::Cow;

/// What the assembler tells its caller.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum StreamEvent {
    /// Prose of `content`, in order.
    Text(String),
    /// Every `Text` sent so far was reasoning that had been forced open (only its close
    /// marker appeared).
    ContentWasReasoning,
    /// A reasoning block moved out of `content` ([`ThinkBlocks::Move`]).
    Reasoning(String),
    /// A complete call.
    Call(ExtractedCall<'static>),
    /// Something seen and not used.
    Note(Note),
}

/// A push-style assembler for one `content` stream.
pub struct StreamExtractor<'t> {
    tools: Option<&'t dyn ToolLookup>,
    options: Options,
    text: String,
    /// Bytes of an unfinished UTF-8 character.
    pending: Vec<u8>,
    state: State,
    /// Text before this byte has been sent or dropped.
    emitted: usize,
    /// Ranges cut from the prose that lie at or after `emitted`.
    cuts: Vec<Span>,
    /// Keys of the calls sent, for the ordinal and the dedupe of reasoning calls.
    keys: Vec<String>,
    reasoning_calls: Vec<ExtractedCall<'static>>,
    /// Do not step again before the text is this long (keeps re-tries linear).
    retry_at: usize,
    /// `content` or `reasoning_content`.
    mode: Mode,
}

impl std::fmt::Debug for StreamExtractor<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamExtractor")
            .field("received", &self.text.len())
            .field("emitted", &self.emitted)
            .field("calls", &self.keys.len())
            .finish_non_exhaustive()
    }
}

fn owned(c: RawCall<'_>, channel: Channel) -> ExtractedCall<'static> {
    ExtractedCall {
        name: Cow::Owned(c.name.into_owned()),
        arguments: Cow::Owned(c.arguments.into_owned()),
        id: c.id.map(|i| Cow::Owned(i.into_owned())),
        format: c.format,
        channel,
        span: c.span,
    }
}

impl<'t> StreamExtractor<'t> {
    /// An assembler for one stream.
    #[must_use]
    pub fn new(tools: Option<&'t dyn ToolLookup>, options: Options) -> Self {
        StreamExtractor {
            tools,
            options,
            text: String::new(),
            pending: Vec::new(),
            state: State::default(),
            emitted: 0,
            cuts: Vec::new(),
            keys: Vec::new(),
            reasoning_calls: Vec::new(),
            retry_at: 0,
            mode: Mode::Content,
        }
    }

    /// An assembler for a `reasoning_content` stream: its text comes back as `Text`,
    /// unchanged; the calls found in it come at [`finish`](Self::finish) (channel
    /// `Reasoning`). Whether to use them is the caller's choice: with
    /// [`ReasoningCalls::WhenNoOther`], drop them when the `content` stream had calls.
    #[must_use]
    pub fn for_reasoning(tools: Option<&'t dyn ToolLookup>, options: Options) -> Self {
        StreamExtractor { mode: Mode::Reasoning, ..StreamExtractor::new(tools, options) }
    }

    /// Feed the next bytes of the stream (a chunk may end inside a UTF-8 character).
    pub fn push(&mut self, chunk: &[u8]) -> Vec<StreamEvent> {
        self.pending.extend_from_slice(chunk);
        self.take_utf8(false);
        if self.text.len() < self.retry_at {
            return Vec::new();
        }
        self.run(false)
    }

    /// Feed the next text of the stream.
    pub fn push_str(&mut self, chunk: &str) -> Vec<StreamEvent> {
        self.push(chunk.as_bytes())
    }

    /// The stream ended: decide everything held back.
    pub fn finish(mut self) -> Vec<StreamEvent> {
        self.take_utf8(true);
        let mut events = self.run(true);
        let use_reasoning = match self.options.reasoning_calls {
            ReasoningCalls::WhenNoOther => self.keys.is_empty(),
            ReasoningCalls::Always => true,
            ReasoningCalls::Never => false,
        };
        let reasoning = std::mem::take(&mut self.reasoning_calls);
        if use_reasoning {
            let content_keys = self.keys.len();
            for mut c in reasoning {
                let key = dedupe::call_key(&c.name, &c.arguments);
                if self.keys.iter().take(content_keys).any(|k| *k == key) {
                    events.push(StreamEvent::Note(Note {
                        kind: NoteKind::Duplicate,
                        span: c.span,
                        name: Some(c.name.to_string()),
                    }));
                    continue;
                }
                if c.id.is_none() {
                    c.id = Some(Cow::Owned(dedupe::fresh_id(&c.name, &c.arguments, self.keys.len())));
                }
                self.keys.push(key);
                events.push(StreamEvent::Call(c));
            }
        } else if let Some(first) = reasoning.first() {
            events.push(StreamEvent::Note(Note {
                kind: NoteKind::ReasoningCallsIgnored,
                span: first.span,
                name: Some(first.name.to_string()),
            }));
        }
        events
    }

    /// Move the complete UTF-8 prefix of `pending` into `text`.
    fn take_utf8(&mut self, at_end: bool) {
        loop {
            match std::str::from_utf8(&self.pending) {
                Ok(s) => {
                    self.text.push_str(s);
                    self.pending.clear();
                    return;
                }
                Err(e) => {
                    let valid = e.valid_up_to();
                    if let Some(s) = self.pending.get(..valid).and_then(|b| std::str::from_utf8(b).ok()) {
                        self.text.push_str(s);
                    }
                    match e.error_len() {
                        // Invalid bytes: replaced, as a lossy decoder would.
                        Some(bad) => {
                            self.text.push('\u{FFFD}');
                            self.pending.drain(..valid + bad);
                        }
                        None if at_end => {
                            self.text.push('\u{FFFD}');
                            self.pending.clear();
                            return;
                        }
                        None => {
                            self.pending.drain(..valid);
                            return;
                        }
                    }
                }
            }
        }
    }

    fn run(&mut self, is_final: bool) -> Vec<StreamEvent> {
        let mut events = Vec::new();
        let cx = Cx { tools: self.tools };
        let read =
            Read { cx: &cx, mode: self.mode, move_blocks: self.options.think_blocks == ThinkBlocks::Move, is_final };
        let text_owned = std::mem::take(&mut self.text);
        let text = text_owned.as_str();
        loop {
            let Some(step) = scan::step(text, &mut self.state, &read) else {
                let pending = text.len().saturating_sub(self.state.pos);
                self.retry_at = text.len() + pending.max(16);
                break;
            };
            match step {
                Step::End => break,
                Step::Prose | Step::Skip => {}
                Step::Calls { region, calls, reasoning, cut } => {
                    if cut {
                        self.cuts.push(region);
                    }
                    for c in calls {
                        if reasoning {
                            self.reasoning_calls.push(owned(c, Channel::Reasoning));
                        } else {
                            let mut c = owned(c, Channel::Content);
                            if c.id.is_none() {
                                c.id = Some(Cow::Owned(dedupe::fresh_id(&c.name, &c.arguments, self.keys.len())));
                            }
                            self.keys.push(dedupe::call_key(&c.name, &c.arguments));
                            events.push(StreamEvent::Call(c));
                        }
                    }
                }
                Step::Noted(note) | Step::Exhausted(note) => events.push(StreamEvent::Note(note)),
                Step::Forced { cut_end, .. } => {
                    events.push(StreamEvent::ContentWasReasoning);
                    self.emitted = self.emitted.max(cut_end);
                }
                Step::BlockEnd { moved } => {
                    if let Some((cut, body)) = moved {
                        // The block's text was held back (see `emit`): it leaves as reasoning.
                        emit_to(text, &mut self.emitted, &mut self.cuts, cut.start, &mut events);
                        events.push(StreamEvent::Reasoning(text.get(body.range()).unwrap_or("").to_owned()));
                        self.emitted = self.emitted.max(cut.end);
                    }
                }
            }
            // Text before the current position is decided, except a block that may move.
            let safe = match self.state_block_start() {
                Some(start) => start.min(self.state.pos),
                None => self.state.pos,
            };
            emit_to(text, &mut self.emitted, &mut self.cuts, safe, &mut events);
        }
        self.text = text_owned;
        events
    }

    /// Where a block that will move started, while inside it.
    fn state_block_start(&self) -> Option<usize> {
        self.state.moving_block_start(self.options.think_blocks == ThinkBlocks::Move)
    }
}

/// Send the prose in `[emitted, to)`, without the cut ranges.
fn emit_to(text: &str, emitted: &mut usize, cuts: &mut Vec<Span>, to: usize, events: &mut Vec<StreamEvent>) {
    if to <= *emitted {
        return;
    }
    let mut out = String::new();
    let mut at = *emitted;
    cuts.retain(|c| c.end > at);
    for c in cuts.iter() {
        if c.start >= to {
            break;
        }
        if c.start > at {
            out.push_str(text.get(at..c.start).unwrap_or(""));
        }
        at = at.max(c.end);
    }
    if at < to {
        out.push_str(text.get(at..to).unwrap_or(""));
    }
    *emitted = to.max(at);
    if !out.is_empty() {
        events.push(StreamEvent::Text(out));
    }
}
