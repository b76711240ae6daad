//! The streaming assembler: feed the `content` text as it arrives, get prose, reasoning
//! and calls back as events.
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
//! Memory stays proportional to the text not yet decided (at most
//! [`Limits::max_held_bytes`](crate::limits::Limits) of call markup and a marker), not to the
//! stream: decided text is sent and dropped. Reasoning that moves out of `content` is sent
//! as it is read, in [`StreamEvent::Reasoning`] pieces. Reasoning that was forced open
//! (only `</think>` appears) is only known when its close marker arrives: the assembler
//! then sends [`StreamEvent::ContentWasReasoning`], meaning every `Text` sent so far was
//! reasoning. Calls found in reasoning are sent at [`finish`](StreamExtractor::finish),
//! when it is known whether another channel had one.

use super::dedupe::{self, Seen};
use super::intent;
use super::parsed::{Cx, RawCall};
use super::scan::{self, Groups, Mode, Read, State, Step};
use super::{Channel, ExtractedCall, Note, NoteKind, Options, ReasoningCalls, Repeats, ThinkBlocks, ToolLookup};
use crate::span::Span;
use std::borrow::Cow;

/// Text held back up to this many bytes is read again at the next byte.
const SHORT_WAIT: usize = 64;

/// What the assembler tells its caller.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum StreamEvent {
    /// Prose of `content`, in order.
    Text(String),
    /// Every `Text` sent so far was reasoning that had been forced open (only its close
    /// marker appeared).
    ContentWasReasoning,
    /// A piece of reasoning moved out of `content` ([`ThinkBlocks::Move`], and Harmony's
    /// analysis channel always). Pieces concatenate to the reasoning text, the `\n`
    /// between two blocks included; a block that starts sends a piece (maybe empty) at
    /// once.
    Reasoning(String),
    /// A complete call.
    Call(ExtractedCall<'static>),
    /// Something seen and not used.
    Note(Note),
}

/// A push-style assembler for one `content` (or `reasoning_content`) stream.
pub struct StreamExtractor<'t> {
    tools: Option<&'t dyn ToolLookup>,
    options: Options,
    /// The text not yet dropped: `text[0]` is byte `base` of the stream.
    text: String,
    base: usize,
    /// Bytes of an unfinished UTF-8 character.
    pending: Vec<u8>,
    state: State,
    /// Text before this byte (of `text`) has been sent or dropped.
    emitted: usize,
    /// Ranges (of `text`) cut from the prose that lie at or after `emitted`.
    cuts: Vec<Span>,
    /// Keys of the calls sent.
    seen: Seen,
    /// Calls sent (content calls, then reasoning calls at the end).
    sent: usize,
    too_many: bool,
    reasoning_calls: Vec<ExtractedCall<'static>>,
    /// Calls read in the open reasoning block that moves, with their markup (of `text`):
    /// the model's calls if the block never closes (`scan::ends_unclosed_reasoning`), so
    /// the reasoning is sent up to the first of them only.
    held: Vec<(Span, ExtractedCall<'static>)>,
    /// Do not step again before the text is this long (keeps re-tries linear).
    retry_at: usize,
    /// `content` or `reasoning_content`.
    mode: Mode,
    /// The open reasoning block was announced (its first piece sent).
    block_announced: bool,
    /// Reasoning left this stream before (the next block starts with `\n`).
    moved_any: bool,
    /// Answer call markup whose group is not judged yet (`intent`): nothing from its first
    /// region on is sent before the verdict.
    group: Groups<Pending>,
    /// Reasoning call markup whose group is not judged yet (its text is sent: reasoning
    /// keeps its markup).
    thought: Groups<Pending>,
    /// The last bytes dropped from the front of `text` (they end at `base`), for a window
    /// before a group that reaches back past `base`.
    tail: String,
    /// Calls that ended an unclosed reasoning block while an answer group waited: sent
    /// after its calls, in the order of the text.
    late: Vec<ExtractedCall<'static>>,
}

/// Call markup read, its calls owned (positions counted from the start of the stream).
#[derive(Debug)]
struct Pending {
    region: Span,
    kept: Option<Span>,
    cut: bool,
    calls: Vec<ExtractedCall<'static>>,
}

impl scan::Region for Pending {
    fn region(&self) -> Span {
        self.region
    }
}

impl std::fmt::Debug for StreamExtractor<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamExtractor")
            .field("received", &(self.base + self.text.len()))
            .field("held", &self.text.len())
            .field("calls", &self.sent)
            .finish_non_exhaustive()
    }
}

impl<'t> StreamExtractor<'t> {
    /// An assembler for one `content` stream.
    #[must_use]
    pub fn new(tools: Option<&'t dyn ToolLookup>, options: Options) -> Self {
        StreamExtractor {
            tools,
            options,
            text: String::new(),
            base: 0,
            pending: Vec::new(),
            state: State::default(),
            emitted: 0,
            cuts: Vec::new(),
            seen: Seen::default(),
            sent: 0,
            too_many: false,
            reasoning_calls: Vec::new(),
            held: Vec::new(),
            retry_at: 0,
            mode: Mode::Content,
            block_announced: false,
            moved_any: false,
            group: Groups::default(),
            thought: Groups::default(),
            tail: String::new(),
            late: Vec::new(),
        }
    }

    /// An assembler for a `reasoning_content` stream: its text comes back as `Text`,
    /// unchanged; the calls found in it come at [`finish`](Self::finish) (channel
    /// `Reasoning`). Whether to use them is the caller's choice: with
    /// [`ReasoningCalls::WhenNoOther`], drop them when the `content` stream had calls.
    ///
    /// ```
    /// use toolfix::extract::stream::{StreamEvent, StreamExtractor};
    /// use toolfix::extract::Options;
    ///
    /// let mut s = StreamExtractor::for_reasoning(None, Options::default());
    /// let mut events = s.push_str("Let me call <tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>");
    /// events.extend(s.finish());
    /// assert!(events.iter().any(|e| matches!(e, StreamEvent::Call(c) if c.name == "f")));
    /// ```
    #[must_use]
    pub fn for_reasoning(tools: Option<&'t dyn ToolLookup>, options: Options) -> Self {
        StreamExtractor { mode: Mode::Reasoning, ..StreamExtractor::new(tools, options) }
    }

    /// Feed the next bytes of the stream (a chunk may end inside a UTF-8 character).
    ///
    /// ```
    /// use toolfix::extract::stream::{StreamEvent, StreamExtractor};
    /// use toolfix::extract::Options;
    ///
    /// let mut s = StreamExtractor::new(None, Options::default());
    /// let prose = "Plain words, nothing else. ".repeat(8);
    /// let events = s.push(prose.as_bytes());
    /// // Prose is sent at once, but for the last bytes: a marker could still start there.
    /// assert!(matches!(&events[..], [StreamEvent::Text(t)] if prose.starts_with(t.as_str()) && t.len() > 64));
    /// ```
    pub fn push(&mut self, chunk: &[u8]) -> Vec<StreamEvent> {
        self.push_with(chunk, self.tools)
    }

    /// As [`push`](Self::push), reading with `tools` (an owner of the tools that cannot
    /// lend them for the stream's whole life passes them at each call).
    pub(crate) fn push_with(&mut self, chunk: &[u8], tools: Option<&dyn ToolLookup>) -> Vec<StreamEvent> {
        self.pending.extend_from_slice(chunk);
        self.take_utf8(false);
        if self.text.len() < self.retry_at {
            return Vec::new();
        }
        self.run(false, tools)
    }

    /// Feed the next text of the stream.
    ///
    /// ```
    /// use toolfix::extract::stream::StreamExtractor;
    /// use toolfix::extract::Options;
    ///
    /// let mut s = StreamExtractor::new(None, Options::default());
    /// assert!(!s.push_str(&"plain prose. ".repeat(10)).is_empty());
    /// ```
    pub fn push_str(&mut self, chunk: &str) -> Vec<StreamEvent> {
        self.push(chunk.as_bytes())
    }

    /// The stream ended: decide everything held back.
    ///
    /// ```
    /// use toolfix::extract::stream::{StreamEvent, StreamExtractor};
    /// use toolfix::extract::Options;
    ///
    /// let mut s = StreamExtractor::new(None, Options::default());
    /// let _ = s.push_str("[TOOL_CALLS][{\"name\": \"f\", \"arguments\": {}}]");
    /// let events = s.finish();
    /// assert!(events.iter().any(|e| matches!(e, StreamEvent::Call(_))));
    /// ```
    pub fn finish(self) -> Vec<StreamEvent> {
        let tools = self.tools;
        self.finish_with(tools)
    }

    /// As [`finish`](Self::finish), reading with `tools` (see [`push_with`](Self::push_with)).
    pub(crate) fn finish_with(mut self, tools: Option<&dyn ToolLookup>) -> Vec<StreamEvent> {
        self.take_utf8(true);
        let mut events = self.run(true, tools);
        let use_reasoning = match self.options.reasoning_calls {
            ReasoningCalls::WhenNoOther => self.sent == 0,
            ReasoningCalls::Always => true,
            ReasoningCalls::Never => false,
        };
        let reasoning = std::mem::take(&mut self.reasoning_calls);
        if use_reasoning {
            let content_seen = self.seen.clone();
            for c in reasoning {
                let repeat = match self.options.repeats {
                    Repeats::Drop => !self.seen.take(&c.name, &c.arguments),
                    Repeats::Keep => content_seen.contains(&c.name, &c.arguments),
                };
                if repeat {
                    events.push(StreamEvent::Note(Note::new(NoteKind::Duplicate, c.span, Some(c.name.to_string()))));
                    continue;
                }
                self.send(c, &mut events);
            }
        } else if let Some(first) = reasoning.first() {
            let name = Some(first.name.to_string());
            events.push(StreamEvent::Note(Note::new(NoteKind::ReasoningCallsIgnored, first.span, name)));
        }
        events
    }

    /// Bytes of text held: received and not yet dropped (the text not yet decided, and up
    /// to as much again of decided text waiting to be dropped in one go).
    ///
    /// ```
    /// use toolfix::extract::stream::StreamExtractor;
    /// use toolfix::extract::Options;
    ///
    /// let mut s = StreamExtractor::new(None, Options::default());
    /// let _ = s.push_str(&"plain prose. ".repeat(10_000));
    /// assert!(s.held() < 8192);
    /// ```
    #[must_use]
    pub fn held(&self) -> usize {
        self.text.len() + self.pending.len()
    }

    /// Send a call: an id when it has none, and the cap on calls per reply.
    fn send(&mut self, mut c: ExtractedCall<'static>, events: &mut Vec<StreamEvent>) {
        if self.sent >= self.options.limits.max_calls {
            if !self.too_many {
                self.too_many = true;
                events.push(StreamEvent::Note(Note::new(NoteKind::TooManyCalls, c.span, Some(c.name.to_string()))));
            }
            return;
        }
        if c.id.is_none() {
            c.id = Some(Cow::Owned(dedupe::fresh_id(&c.name, &c.arguments, self.sent)));
        }
        self.sent += 1;
        events.push(StreamEvent::Call(c));
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

    fn run(&mut self, is_final: bool, tools: Option<&dyn ToolLookup>) -> Vec<StreamEvent> {
        let mut events = Vec::new();
        let cx = Cx::new(tools, self.options.limits);
        let move_blocks = self.options.think_blocks == ThinkBlocks::Move;
        let read = Read::new(&cx, self.mode, move_blocks, is_final, self.base);
        let text_owned = std::mem::take(&mut self.text);
        let text = text_owned.as_str();
        loop {
            let Some(step) = scan::step(text, &mut self.state, &read) else {
                // The next byte may decide a short wait (the start of a marker); a long one
                // (a call being written) is tried again once it has doubled, which keeps
                // the re-tries linear.
                let pending = text.len().saturating_sub(self.state.pos);
                self.retry_at = text.len() + if pending <= SHORT_WAIT { 1 } else { pending };
                break;
            };
            match step {
                Step::End => break,
                Step::Prose | Step::Skip => {}
                Step::Calls { region, calls, reasoning, cut, moved, kept } => {
                    if moved.is_some() {
                        // Reasoning leaves the text here: a waiting group's window ends.
                        self.judge(text, false, self.base + region.start, &read, &mut events);
                    }
                    if let Some(body) = moved {
                        self.emit(text, region.start, Channel::Content, &mut events);
                        self.announce(&mut events);
                        let piece = text.get(body.range()).unwrap_or("");
                        if !piece.is_empty() {
                            events.push(StreamEvent::Reasoning(piece.to_owned()));
                        }
                        self.block_announced = false;
                    }
                    if cut && reasoning {
                        self.cuts.extend(scan::around(region, kept));
                    }
                    let hold =
                        reasoning && self.mode == Mode::Content && self.state.moving_block(move_blocks).is_some();
                    let channel = if reasoning { Channel::Reasoning } else { Channel::Content };
                    let owned: Vec<ExtractedCall<'static>> =
                        calls.into_iter().map(|c| self.owned(c, channel)).collect();
                    if hold {
                        self.held.extend(owned.into_iter().map(|c| (region, c)));
                    } else {
                        let b = self.base;
                        let abs = |s: Span| Span::new(s.start + b, s.end + b);
                        let found =
                            Pending { region: abs(region), kept: kept.map(abs), cut: cut && !reasoning, calls: owned };
                        self.found(text, found, reasoning, &read, &mut events);
                    }
                }
                Step::Noted(note) | Step::Exhausted(note) => events.push(StreamEvent::Note(note)),
                Step::ReasoningCut(span) => self.cuts.push(span),
                Step::Forced { cut_end, .. } => {
                    events.push(StreamEvent::ContentWasReasoning);
                    self.moved_any = true;
                    self.emitted = self.emitted.max(cut_end);
                }
                Step::BlockEnd { moved, unclosed } => {
                    if let Some((cut, _)) = moved {
                        // Reasoning leaves the text here: a waiting group's window ends.
                        self.judge(text, false, self.base + cut.start, &read, &mut events);
                    }
                    for (region, c) in std::mem::take(&mut self.held) {
                        if unclosed && scan::ends_unclosed_reasoning(text.len(), region, &self.options.limits) {
                            if !self.cuts.contains(&region) {
                                self.cuts.push(region);
                                self.cuts.sort_unstable_by_key(|c| c.start);
                            }
                            let c = ExtractedCall { channel: Channel::Content, ..c };
                            if self.group.open.is_empty() {
                                self.content_call(c, &mut events);
                            } else {
                                // After the calls of the group waiting before it.
                                self.late.push(c);
                            }
                        } else {
                            self.reasoning_call(c);
                        }
                    }
                    if let Some((cut, body)) = moved {
                        self.emit(text, cut.start, Channel::Content, &mut events);
                        self.announce(&mut events);
                        self.emitted = self.emitted.max(body.start);
                        self.emit(text, body.end, Channel::Reasoning, &mut events);
                        self.emitted = self.emitted.max(cut.end);
                        self.block_announced = false;
                    }
                }
            }
            self.judge_ready(text, &read, false, &mut events);
            if !self.group.open.is_empty() {
                // Call markup waits for its verdict, and what follows it with it.
                continue;
            }
            // Text before the current position is decided: prose, or the reasoning of a
            // block that moves (up to a call that may end it, while that is not known).
            match self.state.moving_block(move_blocks) {
                Some(b) if self.mode == Mode::Content => {
                    self.emit(text, b.start, Channel::Content, &mut events);
                    self.announce(&mut events);
                    self.emitted = self.emitted.max(b.body);
                    while let Some((region, _)) = self.held.first()
                        && !scan::ends_unclosed_reasoning(text.len(), *region, &self.options.limits)
                    {
                        let (_, c) = self.held.remove(0);
                        self.reasoning_call(c);
                    }
                    let to = self.held.first().map_or(self.state.pos, |(r, _)| r.start.min(self.state.pos));
                    self.emit(text, to, Channel::Reasoning, &mut events);
                }
                _ => self.emit(text, self.state.pos, Channel::Content, &mut events),
            }
        }
        if is_final {
            // The text is all read: every group waiting is judged, then the rest is sent.
            self.judge_ready(text, &read, true, &mut events);
            if self.group.open.is_empty() {
                self.emit(text, self.state.pos, Channel::Content, &mut events);
            }
        }
        self.text = text_owned;
        self.drop_decided();
        events
    }

    /// Call markup read: it joins the group before it when only layout lies between, or
    /// starts a group (the one before it is judged: its window ends here).
    fn found(
        &mut self,
        text: &str,
        found: Pending,
        reasoning: bool,
        read: &Read<'_, '_>,
        events: &mut Vec<StreamEvent>,
    ) {
        let base = self.base;
        let groups = if reasoning { &self.thought } else { &self.group };
        if let Some(last) = groups.open.last() {
            let between = text.get(last.region.end - base..found.region.start - base).unwrap_or_default();
            if intent::only_layout(between) {
                let groups = if reasoning { &mut self.thought } else { &mut self.group };
                groups.open.push(found);
                return;
            }
            self.judge(text, reasoning, found.region.start, read, events);
        }
        let groups = if reasoning { &mut self.thought } else { &mut self.group };
        groups.open.push(found);
    }

    /// Judge the groups whose window after them is complete: the scan is past it and
    /// text follows it, or (`at_end`) the whole text has been read.
    fn judge_ready(&mut self, text: &str, read: &Read<'_, '_>, at_end: bool, events: &mut Vec<StreamEvent>) {
        let total = self.base + text.len();
        let pos = self.base + self.state.pos;
        for reasoning in [false, true] {
            let groups = if reasoning { &self.thought } else { &self.group };
            if at_end {
                self.judge(text, reasoning, total, read, events);
            } else if groups.ready(pos, total) {
                let ceiling = groups.window_end();
                self.judge(text, reasoning, ceiling, read, events);
            }
        }
    }

    /// Judge the waiting group of one place, its window after it ending at `ceiling`
    /// (counted from the start of the stream): send its calls and cut its markup, or leave
    /// the markup as text with a note.
    fn judge(
        &mut self,
        text: &str,
        reasoning: bool,
        ceiling: usize,
        read: &Read<'_, '_>,
        events: &mut Vec<StreamEvent>,
    ) {
        let base = self.base;
        let total = base + text.len();
        let groups = if reasoning { &mut self.thought } else { &mut self.group };
        let open = std::mem::take(&mut groups.open);
        let (Some(first), Some(last)) = (open.first(), open.last()) else { return };
        let (start, end) = (first.region.start, last.region.end);
        for c in open.iter().flat_map(|p| &p.calls) {
            groups.forms.add(c.format);
        }
        let mixed = groups.forms.mixed();
        let floor = groups.floor;
        groups.floor = end;
        let after = intent::after_window(text, end - base, ceiling.min(total) - base);
        let reaches_end = end + after.len() >= total && read.is_final;
        let before = self.before_window(text, floor, start);
        let place = match (reasoning, self.mode) {
            (false, _) => intent::Place::Answer,
            (true, Mode::Reasoning) => intent::Place::Reasoning,
            (true, Mode::Content) => intent::Place::Block,
        };
        let calls: Vec<(&str, &str)> =
            open.iter().flat_map(|p| &p.calls).map(|c| (c.name.as_ref(), c.arguments.as_ref())).collect();
        let (verdict, signals) =
            intent::judge(&before, after, reaches_end, &calls, mixed, place, self.options.leaked_calls, read.cx.tools);
        for p in open {
            match verdict {
                intent::Verdict::Prose => {
                    for c in &p.calls {
                        let mut note = Note::new(NoteKind::ShownCall, c.span, Some(c.name.to_string()));
                        note.signals = signals.to_vec();
                        events.push(StreamEvent::Note(note));
                    }
                }
                intent::Verdict::Taken(intent) => {
                    if p.cut {
                        let local = |s: Span| Span::new(s.start - base, s.end - base);
                        self.cuts.extend(scan::around(local(p.region), p.kept.map(local)));
                        self.cuts.sort_unstable_by_key(|c| c.start);
                    }
                    for c in p.calls {
                        let c = ExtractedCall { intent, signals: signals.to_vec(), ..c };
                        if reasoning { self.reasoning_call(c) } else { self.content_call(c, events) }
                    }
                }
            }
        }
        if !reasoning {
            for c in std::mem::take(&mut self.late) {
                self.content_call(c, events);
            }
        }
    }

    /// The window before a group that starts at `start`, back to `floor` (both counted
    /// from the start of the stream): the bytes the whole-text read takes
    /// (`intent::before_window`), from the tail of dropped text when they reach back past
    /// `base`.
    fn before_window(&self, text: &str, floor: usize, start: usize) -> String {
        let from = start.saturating_sub(intent::BEFORE).max(floor);
        let here = text.get(..start.saturating_sub(self.base)).unwrap_or_default();
        if from >= self.base {
            let at = crate::span::ceil_char_boundary(here, from - self.base);
            return here.get(at..).unwrap_or_default().to_owned();
        }
        let tail_start = self.base - self.tail.len();
        let at = crate::span::ceil_char_boundary(&self.tail, from.saturating_sub(tail_start));
        let mut joined = self.tail.get(at..).unwrap_or_default().to_owned();
        joined.push_str(here);
        joined
    }

    /// A call read outside reasoning: sent, or noted as a repeat.
    fn content_call(&mut self, c: ExtractedCall<'static>, events: &mut Vec<StreamEvent>) {
        if !self.options.keep_repeats && !self.seen.take(&c.name, &c.arguments) && self.options.repeats == Repeats::Drop
        {
            events.push(StreamEvent::Note(Note::new(NoteKind::Duplicate, c.span, Some(c.name.to_string()))));
        } else {
            self.send(c, events);
        }
    }

    /// A call read in reasoning: kept for [`finish`](Self::finish).
    fn reasoning_call(&mut self, c: ExtractedCall<'static>) {
        if self.reasoning_calls.len() < self.options.limits.max_calls {
            self.reasoning_calls.push(c);
        }
    }

    /// A moving block starts: send its first piece (the separator from earlier reasoning).
    fn announce(&mut self, events: &mut Vec<StreamEvent>) {
        if !self.block_announced {
            self.block_announced = true;
            let sep = if self.moved_any { "\n" } else { "" };
            self.moved_any = true;
            events.push(StreamEvent::Reasoning(sep.to_owned()));
        }
    }

    /// Forget the text that is decided (sent, or cut), once it is worth the copy.
    fn drop_decided(&mut self) {
        let mut keep_from = self.emitted.min(self.state.pos);
        // A reasoning group waiting for its verdict still reads the text after it.
        if let Some(first) = self.thought.open.first() {
            keep_from = keep_from.min(first.region.start.saturating_sub(self.base));
        }
        if keep_from < 4096 || keep_from < self.text.len() / 2 {
            return;
        }
        let keep_from = crate::span::floor_char_boundary(&self.text, keep_from);
        // Keep the last bytes dropped: a window before a later group may reach back here.
        self.tail.push_str(self.text.get(..keep_from).unwrap_or_default());
        let from = crate::span::ceil_char_boundary(&self.tail, self.tail.len().saturating_sub(intent::BEFORE));
        self.tail.drain(..from);
        self.state.rebase(&self.text, keep_from, self.options.limits.max_depth);
        self.text.drain(..keep_from);
        self.base += keep_from;
        self.emitted -= keep_from;
        self.retry_at = self.retry_at.saturating_sub(keep_from);
        self.cuts.retain(|c| c.end > keep_from);
        for c in &mut self.cuts {
            *c = Span::new(c.start.saturating_sub(keep_from), c.end - keep_from);
        }
        for (r, _) in &mut self.held {
            *r = Span::new(r.start.saturating_sub(keep_from), r.end.saturating_sub(keep_from));
        }
    }

    /// A found call, owned, its span counted from the start of the stream.
    fn owned(&self, c: RawCall<'_>, channel: Channel) -> ExtractedCall<'static> {
        ExtractedCall {
            name: Cow::Owned(c.name.into_owned()),
            arguments: Cow::Owned(c.arguments.into_owned()),
            id: c.id.map(|i| Cow::Owned(i.into_owned())),
            format: c.format,
            channel,
            span: Span::new(c.span.start + self.base, c.span.end + self.base),
            envelope: c
                .envelope
                .iter()
                .map(|f| crate::salvage::TextFix { span: f.span.shift(self.base), ..*f })
                .collect(),
            cut: c.cut,
            intent: c.intent,
            signals: c.signals.to_vec(),
        }
    }

    /// Send the text in `[emitted, to)`, without the cut ranges, as prose or reasoning.
    fn emit(&mut self, text: &str, to: usize, channel: Channel, events: &mut Vec<StreamEvent>) {
        if to <= self.emitted {
            return;
        }
        let mut out = String::with_capacity(to - self.emitted);
        let mut at = self.emitted;
        self.cuts.retain(|c| c.end > at);
        for c in &self.cuts {
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
        self.emitted = to.max(at);
        if !out.is_empty() {
            events.push(match channel {
                Channel::Reasoning => StreamEvent::Reasoning(out),
                _ => StreamEvent::Text(out),
            });
        }
    }
}
