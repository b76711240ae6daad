//! Streamed Anthropic Messages (SSE: `message_start`, `content_block_start/delta/stop`,
//! `message_delta`, `message_stop`, `ping`, `error`; docs.anthropic.com, "Streaming
//! Messages").
//!
//! Text deltas flow as the library releases them, in a `text` block the proxy opens when
//! it has text to send and closes before any other block; `thinking` blocks (their
//! `thinking_delta` and `signature_delta`) and blocks of other kinds pass through untouched
//! but renumbered; `tool_use` blocks are held (their `input_json_delta` fragments fed to
//! the library) and re-emitted at the end, repaired, each as one start, one delta whose
//! `partial_json` is the whole input (never empty), one stop. `message_delta` (with the
//! stop reason a non-streamed answer would have and the `x_toolfix` report) and
//! `message_stop` close the stream.
//!
//! Reasoning the library moves out of the text (a `<think>` block in a `text` block) goes
//! out in a `thinking` block of the proxy's own (`thinking_delta`s, then a `signature_delta`
//! with [`PROXY_SIGNATURE`](super::PROXY_SIGNATURE), then its stop): as it comes while no
//! text has gone out (so it comes before the text, as not streamed), else after the text,
//! before the `tool_use` blocks. Text that went out before it turned out to be reasoning
//! (`content_was_reasoning`) is not sent again, as for Chat Completions.

use super::super::kept::{self, Dropped, Why};
use super::super::moved::MovedSoFar;
use super::super::{Adapter, Ended, Fault, Fixed, StreamFixer, Unusable};
use super::{Messages, PROXY_SIGNATURE, is_proxy_thinking};
use crate::sse::{self, Event};
use crate::summary::Summary;
use bytes::Bytes;
use serde_json::{Map, Value, json};
use toolfix::{FixOptions, FixedReply, ReplyEvent, ReplyStream, ToolCallDelta, ToolSet};

/// What an upstream block became.
#[derive(Clone, Copy, Debug)]
enum Block {
    /// Text: fed to the library; sent in the proxy's own text block.
    Text,
    /// Passed through as block `out` (thinking, and kinds the proxy does not know).
    Passed { out: usize, thinking: bool },
    /// A server call: held.
    ToolUse,
}

/// The streaming fixer of Anthropic Messages.
#[expect(clippy::struct_excessive_bools, reason = "independent facts about the stream so far")]
pub(crate) struct MessagesStream {
    sse: sse::Parser,
    stream: Option<ReplyStream>,
    blocks: Vec<(u64, Block)>,
    /// The next output block index.
    next_out: usize,
    /// The proxy's open text block.
    open_text: Option<usize>,
    /// The proxy's open thinking block (reasoning moved out of the text).
    open_thinking: Option<usize>,
    /// Reasoning moved out of the text so far, as the library counts it.
    moved: MovedSoFar,
    /// Moved reasoning held to go out after the text.
    pending_thinking: String,
    /// A thinking block of the proxy's own went out.
    sent_thinking: bool,
    /// The text blocks of the proxy's own opened so far.
    text_blocks: usize,
    /// The upstream's thinking text fed so far, and whether a new block began since: the
    /// blocks' texts are fed joined by a newline, as the non-streamed side joins them.
    thinking_fed: bool,
    thinking_new_block: bool,
    /// `message_start`'s message, for the non-streamed form.
    message: Map<String, Value>,
    /// Thinking blocks as received (text and signature), for the non-streamed form.
    thinking: Vec<(String, String)>,
    /// Text blocks as received (their start's members, `citations` from their
    /// `citations_delta`s, and their text), for the non-streamed form.
    texts: Vec<Map<String, Value>>,
    /// The members of the server's `tool_use` blocks' starts, by upstream index, for the
    /// non-streamed form.
    call_members: Vec<(u64, Map<String, Value>)>,
    stop_reason: Option<String>,
    stop_sequence: Value,
    usage: Option<Value>,
    done: bool,
    errored: bool,
    sent_text: String,
    unfixed: Vec<String>,
    /// The reply outgrew the fixer: everything passes through from then on.
    through: bool,
}

impl MessagesStream {
    pub(crate) fn new(tools: &ToolSet, history: Option<&Value>, options: FixOptions, max_event: usize) -> Self {
        MessagesStream {
            sse: sse::Parser::new(max_event),
            stream: Some(ReplyStream::new(Some(tools), history, options)),
            blocks: Vec::new(),
            next_out: 0,
            open_text: None,
            open_thinking: None,
            moved: MovedSoFar::default(),
            pending_thinking: String::new(),
            sent_thinking: false,
            text_blocks: 0,
            thinking_fed: false,
            thinking_new_block: false,
            message: Map::new(),
            thinking: Vec::new(),
            texts: Vec::new(),
            call_members: Vec::new(),
            stop_reason: None,
            stop_sequence: Value::Null,
            usage: None,
            done: false,
            errored: false,
            sent_text: String::new(),
            unfixed: Vec::new(),
            through: false,
        }
    }

    fn block(&self, index: u64) -> Option<Block> {
        self.blocks.iter().find(|(i, _)| *i == index).map(|(_, b)| *b)
    }

    /// Open a block of the proxy's own: close its text block first.
    fn next_block(&mut self, out: &mut Vec<Bytes>) -> usize {
        self.close_text(out);
        let k = self.next_out;
        self.next_out += 1;
        k
    }

    /// Close the proxy's open blocks (text, thinking).
    fn close_text(&mut self, out: &mut Vec<Bytes>) {
        if let Some(k) = self.open_text.take() {
            out.push(event("content_block_stop", &json!({"type": "content_block_stop", "index": k})));
        }
        if let Some(k) = self.open_thinking.take() {
            out.extend(thinking_end(k));
        }
    }

    /// Reasoning moved out of the text: out now in the proxy's thinking block while no
    /// text went out, else held for after the text.
    fn thinking(&mut self, r: &str, out: &mut Vec<Bytes>) {
        if r.is_empty() {
            return;
        }
        self.moved.reasoning(r);
        if !self.sent_text.is_empty() || self.through {
            self.pending_thinking.push_str(r);
            return;
        }
        let k = if let Some(k) = self.open_thinking {
            k
        } else {
            let k = self.next_block(out);
            out.push(thinking_start(k));
            self.open_thinking = Some(k);
            k
        };
        self.sent_thinking = true;
        out.push(thinking_delta(k, r));
    }

    /// Send released text in the proxy's text block.
    fn text(&mut self, text: &str, out: &mut Vec<Bytes>) {
        if text.is_empty() {
            return;
        }
        let k = if let Some(k) = self.open_text {
            k
        } else {
            let k = self.next_block(out);
            // The first text block carries the upstream's first one's members (as `apply`
            // keeps them); its citations come at the end, when it is known they are kept.
            let start = match self.texts.first() {
                Some(first) if self.sent_text.is_empty() => start_members(first),
                _ => start_members(&Map::new()),
            };
            out.push(event(
                "content_block_start",
                &json!({"type": "content_block_start", "index": k, "content_block": start}),
            ));
            self.text_blocks += 1;
            self.open_text = Some(k);
            k
        };
        self.sent_text.push_str(text);
        out.push(event(
            "content_block_delta",
            &json!({"type": "content_block_delta", "index": k, "delta": {"type": "text_delta", "text": text}}),
        ));
    }

    /// Events of the text and calls (not of the end: see [`Self::take_last`]): text, and
    /// reasoning moved out of it.
    fn take(&mut self, events: Vec<ReplyEvent>, out: &mut Vec<Bytes>) {
        let mut text = String::new();
        for e in events {
            match e {
                ReplyEvent::Content(t) => {
                    self.moved.content(&t);
                    text.push_str(&t);
                }
                ReplyEvent::Reasoning(r) => {
                    self.text(&std::mem::take(&mut text), out);
                    self.thinking(&r, out);
                }
                ReplyEvent::ContentWasReasoning => self.moved.was_reasoning(),
                _ => {}
            }
        }
        self.text(&text, out);
    }

    /// The last events (from the library's `finish`): their text, and the moved reasoning
    /// not yet sent (see [`MovedSoFar::last`]). `thinking`: the thinking blocks' text as fed.
    fn take_last(&mut self, events: Vec<ReplyEvent>, fixed: &FixedReply, thinking: Option<&str>, out: &mut Vec<Bytes>) {
        let (text, rest) = self.moved.last(events, fixed, thinking);
        self.thinking(&rest, out);
        self.text(&text, out);
    }

    /// The reply outgrew the fixer: send what it held, and pass the rest through.
    fn give_up(&mut self, stuck: &str, out: &mut Vec<Bytes>) {
        if let Some(s) = self.stream.take() {
            let thinking = s.received().reasoning_content.clone();
            let (events, fixed) = s.finish(None);
            self.take_last(events, &fixed, thinking.as_deref(), out);
            self.text(stuck, out);
            // The calls fixed so far go out now; the rest passes through.
            self.close_text(out);
            let pending = std::mem::take(&mut self.pending_thinking);
            if !pending.is_empty() {
                let k = self.next_block(out);
                out.extend(thinking_events(k, &pending));
            }
            for c in fixed.calls.iter().filter(|c| c.status.is_usable()) {
                let k = self.next_block(out);
                let input: Value =
                    c.arguments_text().and_then(|t| serde_json::from_str(t).ok()).unwrap_or_else(|| json!({}));
                let block = json!({"type": "tool_use", "id": super::block_id(c), "name": c.name, "input": input});
                out.extend(tool_use_events(k, &block));
            }
        }
        self.through = true;
        self.unfixed.push("the reply is too large to fix; the rest passed through".to_owned());
    }

    fn on_event(&mut self, e: &Event, out: &mut Vec<Bytes>) -> Result<(), Fault> {
        let Ok(Value::Object(data)) = serde_json::from_str::<Value>(&e.data) else {
            return Err(Fault::Malformed);
        };
        let kind = data.get("type").and_then(Value::as_str).unwrap_or("");
        let index = data.get("index").and_then(Value::as_u64).unwrap_or(0);
        match kind {
            "message_start" => {
                if let Some(m) = data.get("message").and_then(Value::as_object) {
                    self.message.clone_from(m);
                }
                out.push(e.raw.clone());
            }
            "content_block_start" => {
                let block = data.get("content_block").unwrap_or(&Value::Null);
                match block.get("type").and_then(Value::as_str).unwrap_or("") {
                    "text" => {
                        self.blocks.push((index, Block::Text));
                        let t = block.get("text").and_then(Value::as_str).unwrap_or("");
                        self.texts.push(block.as_object().cloned().unwrap_or_default());
                        self.push_text(t, out);
                    }
                    "tool_use" if !self.through => {
                        self.blocks.push((index, Block::ToolUse));
                        self.call_members.push((index, block.as_object().cloned().unwrap_or_default()));
                        let i = usize::try_from(index).unwrap_or(usize::MAX);
                        let mut d = ToolCallDelta::new(i);
                        if let Some(id) = block.get("id").and_then(Value::as_str) {
                            d = d.with_id(id);
                        }
                        if let Some(n) = block.get("name").and_then(Value::as_str) {
                            d = d.with_name(n);
                        }
                        let input = block.get("input").filter(|v| v.as_object().is_some_and(|o| !o.is_empty()));
                        let text = input.map(Value::to_string);
                        if let Some(t) = &text {
                            d = d.with_arguments(t);
                        }
                        if let Some(s) = self.stream.as_mut() {
                            let events = s.push_tool_call(d);
                            self.take(events, out);
                        }
                    }
                    other => {
                        let thinking = other == "thinking";
                        let k = self.next_block(out);
                        self.blocks.push((index, Block::Passed { out: k, thinking }));
                        if thinking {
                            self.thinking_new_block = true;
                            let t = block.get("thinking").and_then(Value::as_str).unwrap_or("").to_owned();
                            self.push_thinking(&t);
                            self.thinking.push((t, String::new()));
                        }
                        out.push(with_index(&data, e, k));
                    }
                }
            }
            "content_block_delta" => {
                let delta = data.get("delta").unwrap_or(&Value::Null);
                match self.block(index) {
                    Some(Block::Text) => {
                        let t = delta.get("text").and_then(Value::as_str).unwrap_or("");
                        if let Some(b) = self.texts.last_mut() {
                            append_text(b, t);
                            if let Some(c) = delta.get("citation") {
                                push_citation(b, c);
                            }
                        }
                        self.push_text(t, out);
                    }
                    Some(Block::ToolUse) => {
                        let i = usize::try_from(index).unwrap_or(usize::MAX);
                        let piece = delta.get("partial_json").and_then(Value::as_str).unwrap_or("");
                        if let Some(s) = self.stream.as_mut() {
                            let events = s.push_tool_call(ToolCallDelta::new(i).with_arguments(piece));
                            self.take(events, out);
                        }
                    }
                    Some(Block::Passed { out: k, thinking }) => {
                        if thinking {
                            if let Some(t) = delta.get("thinking").and_then(Value::as_str) {
                                self.push_thinking(t);
                                if let Some(last) = self.thinking.last_mut() {
                                    last.0.push_str(t);
                                }
                            }
                            if let Some(sig) = delta.get("signature").and_then(Value::as_str)
                                && let Some(last) = self.thinking.last_mut()
                            {
                                last.1.push_str(sig);
                            }
                        }
                        out.push(with_index(&data, e, k));
                    }
                    None => out.push(e.raw.clone()),
                }
            }
            "content_block_stop" => match self.block(index) {
                Some(Block::Passed { out: k, .. }) => out.push(with_index(&data, e, k)),
                Some(_) => {}
                None => out.push(e.raw.clone()),
            },
            "message_delta" => {
                let delta = data.get("delta").unwrap_or(&Value::Null);
                if let Some(r) = delta.get("stop_reason").and_then(Value::as_str) {
                    self.stop_reason = Some(r.to_owned());
                }
                if let Some(s) = delta.get("stop_sequence") {
                    self.stop_sequence = s.clone();
                }
                if let Some(u) = data.get("usage") {
                    self.usage = Some(u.clone());
                }
            }
            "message_stop" => self.done = true,
            "error" => {
                self.errored = true;
                out.push(e.raw.clone());
            }
            // `ping` and anything newer pass through.
            _ => out.push(e.raw.clone()),
        }
        Ok(())
    }

    fn push_text(&mut self, t: &str, out: &mut Vec<Bytes>) {
        if t.is_empty() {
            return;
        }
        let Some(s) = self.stream.as_mut() else {
            // Given up: the text passes through.
            self.text(t, out);
            return;
        };
        match s.push_content(t) {
            Ok(events) => self.take(events, out),
            Err(_) => self.give_up(t, out),
        }
    }

    fn push_thinking(&mut self, t: &str) {
        if t.is_empty() {
            return;
        }
        let joined;
        let piece = if std::mem::take(&mut self.thinking_new_block) && self.thinking_fed {
            joined = format!("\n{t}");
            joined.as_str()
        } else {
            t
        };
        self.thinking_fed = true;
        let Some(s) = self.stream.as_mut() else { return };
        if s.push_reasoning(piece).is_err() {
            // Too large to read for calls: the thinking passes through all the same.
            self.stream = None;
            self.through = true;
            self.unfixed.push("the reply is too large to fix; the rest passed through".to_owned());
        }
    }

    /// The reply as a non-streamed message, from what was received.
    fn assembled(&self, received: &toolfix::reply::Received) -> Value {
        let mut m = self.message.clone();
        let mut content = Vec::new();
        for (t, sig) in &self.thinking {
            content.push(json!({"type": "thinking", "thinking": t, "signature": sig}));
        }
        // The text blocks as they came (their members, their citations), when they hold
        // the text the library read; else the text in one block.
        let joined: String = self.texts.iter().filter_map(|b| b.get("text").and_then(Value::as_str)).collect();
        if joined == received.content {
            content.extend(self.texts.iter().map(|b| Value::Object(b.clone())));
        } else if !received.content.is_empty() {
            content.push(json!({"type": "text", "text": received.content}));
        }
        for c in &received.tool_calls {
            let input: Value = serde_json::from_str(&c.arguments).unwrap_or_else(|_| {
                if c.arguments.is_empty() { json!({}) } else { Value::String(c.arguments.clone()) }
            });
            // The block's start with its members (as the API sent it).
            let mut block = self
                .call_members
                .iter()
                .find(|(i, _)| usize::try_from(*i).ok() == Some(c.index))
                .map(|(_, m)| m.clone())
                .unwrap_or_default();
            block.insert("type".to_owned(), json!("tool_use"));
            block.insert("id".to_owned(), json!(c.id));
            block.insert("name".to_owned(), json!(c.name));
            block.insert("input".to_owned(), input);
            content.push(Value::Object(block));
        }
        m.insert("type".to_owned(), json!("message"));
        m.insert("role".to_owned(), json!("assistant"));
        m.insert("content".to_owned(), Value::Array(content));
        m.insert("stop_reason".to_owned(), self.stop_reason.clone().map_or(Value::Null, Value::String));
        m.insert("stop_sequence".to_owned(), self.stop_sequence.clone());
        if let Some(u) = &self.usage {
            m.insert("usage".to_owned(), u.clone());
        }
        Value::Object(m)
    }
}

impl StreamFixer<'_> for MessagesStream {
    fn push(&mut self, bytes: &[u8]) -> Result<Vec<Bytes>, Fault> {
        let events = self.sse.push(bytes).map_err(|sse::TooLong| Fault::TooLarge)?;
        let mut out = Vec::new();
        for e in events {
            if !self.done {
                self.on_event(&e, &mut out)?;
            }
        }
        Ok(out)
    }

    fn is_done(&self) -> bool {
        self.done
    }

    fn finish(&mut self) -> Ended {
        let mut frames = Vec::new();
        let mut fault = false;
        if let Some(last) = std::mem::replace(&mut self.sse, sse::Parser::new(0)).finish() {
            fault = self.on_event(&last, &mut frames).is_err();
        }
        let complete = !fault && (self.done || self.stop_reason.is_some());
        let (received, fixed) = match self.stream.take() {
            Some(s) => {
                let received = s.received().clone();
                let finish = match self.stop_reason.as_deref() {
                    Some("max_tokens") => Some("length"),
                    Some("tool_use") => Some("tool_calls"),
                    Some(_) => Some("stop"),
                    None => None,
                };
                let (events, f) = s.finish(finish);
                self.take_last(events, &f, received.reasoning_content.as_deref(), &mut frames);
                (received, Some(f))
            }
            None => (toolfix::reply::Received::default(), None),
        };
        let response = self.assembled(&received);
        Ended {
            frames,
            fixed: Fixed { response, bytes: None, replies: vec![fixed], read: None },
            complete,
            errored: self.errored,
            content_was_reasoning: self.moved.content_was_reasoning,
        }
    }

    fn closing(&self, answer: &Fixed, later: bool, summary: &Summary, unusable: Unusable) -> Vec<Bytes> {
        let mut me = Closer {
            start: start_members(&Map::new()),
            opened: false,
            open_text: self.open_text,
            open_thinking: self.open_thinking,
            next_out: self.next_out,
            out: Vec::new(),
        };
        let mut response = answer.response.clone();
        let fixed = answer.replies.first().and_then(Option::as_ref);
        if let Some(f) = fixed.filter(|f| !self.through && Messages::changes(&answer.response, 0, f)) {
            Messages::apply(&mut response, 0, f, unusable);
        }
        let mut dropped = kept::take(&mut response);
        if !self.through {
            let blocks = response.get("content").and_then(Value::as_array).cloned().unwrap_or_default();
            let text: String = blocks
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect();
            // Only what the client has not seen (as for Chat Completions).
            let unseen = if let Some(rest) = text.strip_prefix(self.sent_text.as_str()) {
                rest.to_owned()
            } else if self.sent_text.is_empty() {
                text
            } else {
                match fixed {
                    Some(f) if unusable == Unusable::Explain && f.calls.iter().any(|c| !c.status.is_usable()) => {
                        format!("\n\n{}", f.gave_up(""))
                    }
                    _ => String::new(),
                }
            };
            // Moved reasoning: a later attempt's only when nothing was sent (as its text),
            // before its text; this attempt's held part after the text.
            if later && self.sent_text.is_empty() && !self.sent_thinking {
                for b in blocks.iter().filter(|b| is_proxy_thinking(b)) {
                    me.thinking(b.get("thinking").and_then(Value::as_str).unwrap_or(""));
                }
            }
            // A text block opened now, the first: with the first text block's members.
            if self.sent_text.is_empty()
                && let Some(Value::Object(first)) =
                    blocks.iter().find(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            {
                me.start = start_members(first);
            }
            me.text(&unseen);
            // The first text block's citations, as `apply` kept them: in the proxy's text
            // block, when it is the one block that went out and holds that block's text;
            // otherwise (and the members of text blocks after the first, which a stream
            // sends in that one block) dropped, and noted.
            let mut notes = Dropped::default();
            let streamed_text = format!("{}{unseen}", self.sent_text);
            let one_block = self.text_blocks + usize::from(me.opened) == 1;
            for (n, b) in blocks.iter().filter(|b| b.get("type").and_then(Value::as_str) == Some("text")).enumerate() {
                if n > 0 {
                    notes.note_all(b, &json!({}), &["type", "text"], Why::Streamed);
                    continue;
                }
                let Some(Value::Array(list)) = b.get("citations").filter(|c| kept::says_something(c)) else { continue };
                match me.open_text {
                    Some(k) if one_block && b.get("text").and_then(Value::as_str) == Some(streamed_text.as_str()) => {
                        for c in list {
                            me.out.push(event(
                                "content_block_delta",
                                &json!({"type": "content_block_delta", "index": k,
                                        "delta": {"type": "citations_delta", "citation": c}}),
                            ));
                        }
                    }
                    _ => notes.note(&json!({}), "citations", Why::Streamed),
                }
            }
            dropped = notes.after(dropped);
            if !later {
                me.thinking(&self.pending_thinking);
            }
            me.close_text();
            for b in blocks.iter().filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_use")) {
                let k = me.next_out;
                me.next_out += 1;
                me.out.extend(tool_use_events(k, b));
            }
        }
        let stop = response.get("stop_reason").cloned().unwrap_or(Value::Null);
        let mut delta = json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": self.stop_sequence},
            "usage": self.usage.clone().unwrap_or_else(|| json!({"output_tokens": 0}))});
        if let Some(o) = delta.as_object_mut() {
            let mut report = summary.to_value();
            if let (Some(d), Some(r)) = (dropped, report.as_object_mut()) {
                r.insert("dropped".to_owned(), d);
            }
            o.insert("x_toolfix".to_owned(), report);
        }
        me.out.push(event("message_delta", &delta));
        me.out.push(event("message_stop", &json!({"type": "message_stop"})));
        me.out
    }

    fn error_frame(&self, code: &str, message: &str) -> Bytes {
        let kind = if code == "upstream_timeout" { "timeout_error" } else { "api_error" };
        event("error", &Messages::error_body(kind, code, message))
    }

    fn unfixed(&self) -> Vec<String> {
        self.unfixed.clone()
    }
}

/// Builds the closing events.
struct Closer {
    /// The start of a text block it opens.
    start: Map<String, Value>,
    /// It opened a text block.
    opened: bool,
    open_text: Option<usize>,
    open_thinking: Option<usize>,
    next_out: usize,
    out: Vec<Bytes>,
}

impl Closer {
    /// A whole thinking block of the proxy's own.
    fn thinking(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        self.close_text();
        let k = self.next_out;
        self.next_out += 1;
        self.out.extend(thinking_events(k, text));
    }

    fn text(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        let k = if let Some(k) = self.open_text {
            k
        } else {
            if let Some(k) = self.open_thinking.take() {
                self.out.extend(thinking_end(k));
            }
            let k = self.next_out;
            self.next_out += 1;
            self.out.push(event(
                "content_block_start",
                &json!({"type": "content_block_start", "index": k, "content_block": self.start}),
            ));
            self.opened = true;
            self.open_text = Some(k);
            k
        };
        self.out.push(event(
            "content_block_delta",
            &json!({"type": "content_block_delta", "index": k, "delta": {"type": "text_delta", "text": text}}),
        ));
    }

    fn close_text(&mut self) {
        if let Some(k) = self.open_text.take() {
            self.out.push(event("content_block_stop", &json!({"type": "content_block_stop", "index": k})));
        }
        if let Some(k) = self.open_thinking.take() {
            self.out.extend(thinking_end(k));
        }
    }
}

/// The start of a thinking block of the proxy's own (empty, as the API starts one).
fn thinking_start(k: usize) -> Bytes {
    event(
        "content_block_start",
        &json!({"type": "content_block_start", "index": k,
                "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
    )
}

fn thinking_delta(k: usize, text: &str) -> Bytes {
    event(
        "content_block_delta",
        &json!({"type": "content_block_delta", "index": k, "delta": {"type": "thinking_delta", "thinking": text}}),
    )
}

/// The end of a thinking block of the proxy's own: its mark as signature, then its stop.
fn thinking_end(k: usize) -> [Bytes; 2] {
    [
        event(
            "content_block_delta",
            &json!({"type": "content_block_delta", "index": k,
                    "delta": {"type": "signature_delta", "signature": PROXY_SIGNATURE}}),
        ),
        event("content_block_stop", &json!({"type": "content_block_stop", "index": k})),
    ]
}

/// A whole thinking block of the proxy's own.
fn thinking_events(k: usize, text: &str) -> [Bytes; 4] {
    let [sig, stop] = thinking_end(k);
    [thinking_start(k), thinking_delta(k, text), sig, stop]
}

/// The start of the proxy's text block that holds the text of `first` (a text block): its
/// members, empty text, no citations (they come in `citations_delta`s at the end).
fn start_members(first: &Map<String, Value>) -> Map<String, Value> {
    let mut start: Map<String, Value> =
        first.iter().filter(|(k, _)| k.as_str() != "citations").map(|(k, v)| (k.clone(), v.clone())).collect();
    start.insert("type".to_owned(), json!("text"));
    start.insert("text".to_owned(), json!(""));
    start
}

/// Add a text delta to a text block as received.
fn append_text(block: &mut Map<String, Value>, t: &str) {
    if t.is_empty() {
        return;
    }
    match block.get_mut("text") {
        Some(Value::String(text)) => text.push_str(t),
        _ => {
            block.insert("text".to_owned(), json!(t));
        }
    }
}

/// Add a `citations_delta`'s citation to a text block as received.
fn push_citation(block: &mut Map<String, Value>, citation: &Value) {
    match block.get_mut("citations") {
        Some(Value::Array(list)) => list.push(citation.clone()),
        _ => {
            block.insert("citations".to_owned(), json!([citation]));
        }
    }
}

/// An SSE event with its `event:` line (the SDK ignores events without one).
fn event(name: &str, data: &Value) -> Bytes {
    sse::named(name, &data.to_string())
}

/// An upstream event with its block renumbered to `k`.
fn with_index(data: &Map<String, Value>, e: &Event, k: usize) -> Bytes {
    let mut d = data.clone();
    d.insert("index".to_owned(), json!(k));
    let name = d.get("type").and_then(Value::as_str).unwrap_or("message").to_owned();
    let _ = e;
    event(&name, &Value::Object(d))
}

/// The three events of one `tool_use` block: start (the block's members, its input
/// empty), one `input_json_delta` with the whole input, stop.
fn tool_use_events(k: usize, block: &Value) -> [Bytes; 3] {
    let input = block.get("input").cloned().unwrap_or_else(|| json!({}));
    let mut members = block.as_object().cloned().unwrap_or_default();
    members.insert("input".to_owned(), json!({}));
    let start = json!({"type": "content_block_start", "index": k, "content_block": members});
    let delta = json!({"type": "content_block_delta", "index": k,
        "delta": {"type": "input_json_delta", "partial_json": input.to_string()}});
    [
        event("content_block_start", &start),
        event("content_block_delta", &delta),
        event("content_block_stop", &json!({"type": "content_block_stop", "index": k})),
    ]
}
