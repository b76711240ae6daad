//! Streamed OpenAI Responses (SSE: `response.created`, `response.output_item.added`,
//! `response.content_part.added`, `response.output_text.delta`,
//! `response.function_call_arguments.delta/.done`, `response.output_item.done`,
//! `response.completed` / `.incomplete` / `.failed`; platform.openai.com, "Streaming
//! events"). No `[DONE]`.
//!
//! Text deltas flow as the library releases them, in a `message` item the proxy opens when
//! it has text to send and closes before any other item; items of other kinds (reasoning,
//! custom tool calls, web search) pass through, renumbered; the text of `reasoning` items
//! (`response.reasoning_text.delta`, `response.reasoning_summary_text.delta`, or the whole
//! item at `response.output_item.done` when no delta came) is also fed to the library as
//! the reply's reasoning, parts joined by a newline as the non-streamed side joins them; `function_call` items are held
//! (their argument deltas fed to the library) and re-emitted at the end, repaired: added,
//! one arguments delta, `.done`, item done — the same arguments in all three places and in
//! the final `response.completed`, which carries the `x_toolfix` report. Every event the
//! proxy sends has its own `sequence_number`, in order.
//!
//! Reasoning the library moves out of the text (a `<think>` block in an `output_text`
//! part) goes out in a `reasoning` item of the proxy's own (its id begins with
//! [`PROXY_REASONING_ID`](super::PROXY_REASONING_ID)): `output_item.added`,
//! `content_part.added` (a `reasoning_text` part), `response.reasoning_text.delta`s,
//! `response.reasoning_text.done`, `content_part.done`, `output_item.done`. It streams as
//! it comes while no text has gone out (so it comes before the text, as not streamed), else
//! it goes out whole after the text, before the `function_call` items. Text that went out
//! before it turned out to be reasoning (`content_was_reasoning`) is not sent again, as for
//! Chat Completions.

use super::super::kept::{self, Dropped, Why};
use super::super::moved::MovedSoFar;
use super::super::{Adapter, Ended, Fault, Fixed, StreamFixer, Unusable};
use super::{Responses, is_proxy_reasoning, proxy_reasoning_id, reasoning_item, reasoning_parts};
use crate::sse::{self, Event};
use crate::summary::Summary;
use bytes::Bytes;
use serde_json::{Map, Value, json};
use std::sync::atomic::{AtomicU64, Ordering};
use toolfix::{FixOptions, FixedReply, ReplyEvent, ReplyStream, ToolCallDelta, ToolSet};

/// What an upstream item became.
#[derive(Clone, Copy, Debug)]
enum Item {
    /// A message: its text is fed to the library.
    Message,
    /// Passed through as output item `out`.
    Passed { out: usize },
    /// A function call: held.
    Call,
}

/// The streaming fixer of OpenAI Responses.
pub(crate) struct ResponsesStream {
    sse: sse::Parser,
    stream: Option<ReplyStream>,
    items: Vec<(u64, Item)>,
    next_out: usize,
    /// The proxy's open message item: (output index, item id).
    open: Option<(usize, String)>,
    /// Text sent in the open message item (for its `.done` events).
    open_text: String,
    message_id: String,
    /// Items passed through, as their `output_item.done` gave them.
    passed: Vec<(usize, Value)>,
    /// The item ids of the server's calls, by upstream output index.
    call_items: Vec<(u64, String)>,
    /// The server's `function_call` items as added (their members), by upstream output
    /// index, for the non-streamed form.
    call_added: Vec<(u64, Map<String, Value>)>,
    /// The first `message` item as added (its members go on the proxy's), the number of
    /// message items added, and each as its `output_item.done` gave it (with its parts'
    /// `annotations` and `logprobs`), for the non-streamed form.
    message_added: Option<Map<String, Value>>,
    messages: usize,
    messages_done: Vec<Value>,
    /// The upstream's last `response` object (`created`, then `completed` / ...).
    response: Map<String, Value>,
    /// The last event's type (`response.completed`, `.incomplete`, `.failed`).
    end: Option<String>,
    seq: AtomicU64,
    errored: bool,
    sent_text: String,
    unfixed: Vec<String>,
    /// The reasoning part last fed: (output index, summary or content, part index).
    reasoning_part: Option<(u64, bool, u64)>,
    /// Some reasoning was fed (the next part starts with a newline).
    reasoning_fed: bool,
    /// Output indices of the reasoning items whose deltas were fed.
    reasoning_items: Vec<u64>,
    /// The proxy's open reasoning item (reasoning moved out of the text): (output index,
    /// item id), and the text sent in it.
    open_own: Option<(usize, String)>,
    own_text: String,
    /// The proxy's reasoning items sent and done, for the final response.
    own_done: Vec<(usize, Value)>,
    /// Reasoning moved out of the text so far, as the library counts it.
    moved: MovedSoFar,
    /// Moved reasoning held to go out after the text.
    pending_own: String,
    /// The reply outgrew the fixer: everything passes through from then on.
    through: bool,
}

impl ResponsesStream {
    pub(crate) fn new(tools: &ToolSet, history: Option<&Value>, options: FixOptions, max_event: usize) -> Self {
        ResponsesStream {
            sse: sse::Parser::new(max_event),
            stream: Some(ReplyStream::new(Some(tools), history, options)),
            items: Vec::new(),
            next_out: 0,
            open: None,
            open_text: String::new(),
            message_id: "msg_toolfix".to_owned(),
            passed: Vec::new(),
            call_items: Vec::new(),
            call_added: Vec::new(),
            message_added: None,
            messages: 0,
            messages_done: Vec::new(),
            response: Map::new(),
            end: None,
            seq: AtomicU64::new(0),
            errored: false,
            sent_text: String::new(),
            unfixed: Vec::new(),
            reasoning_part: None,
            reasoning_fed: false,
            reasoning_items: Vec::new(),
            open_own: None,
            own_text: String::new(),
            own_done: Vec::new(),
            moved: MovedSoFar::default(),
            pending_own: String::new(),
            through: false,
        }
    }

    fn emit(&self, mut data: Value) -> Bytes {
        let name = data.get("type").and_then(Value::as_str).unwrap_or("message").to_owned();
        if let Some(o) = data.as_object_mut() {
            o.insert("sequence_number".to_owned(), json!(self.seq.fetch_add(1, Ordering::Relaxed)));
        }
        sse::named(&name, &data.to_string())
    }

    fn item(&self, index: u64) -> Option<Item> {
        self.items.iter().find(|(i, _)| *i == index).map(|(_, b)| *b)
    }

    /// Close the proxy's open items (message, reasoning).
    fn close_message(&mut self, out: &mut Vec<Bytes>) {
        if let Some((k, id)) = self.open.take() {
            let text = std::mem::take(&mut self.open_text);
            let item = self.final_message(None, &id, &text);
            out.extend(self.message_end(k, &id, &item));
        }
        self.close_own(out);
    }

    /// Close the proxy's open reasoning item.
    fn close_own(&mut self, out: &mut Vec<Bytes>) {
        if let Some((k, id)) = self.open_own.take() {
            let text = std::mem::take(&mut self.own_text);
            out.extend(self.own_end(k, &id, &text));
            self.own_done.push((k, reasoning_item(&id, &text)));
        }
    }

    /// The id of the proxy's reasoning item after `n` others in this stream: the one a
    /// non-streamed answer gives its only item, then (reasoning moved before and after some
    /// text went out comes in two items) `_2`, `_3`, ..., as items of one response must
    /// differ.
    fn own_id(&self, n: usize) -> String {
        let id = proxy_reasoning_id(self.response.get("id").and_then(Value::as_str));
        if n == 0 { id } else { format!("{id}_{}", n + 1) }
    }

    /// The first events of a reasoning item of the proxy's own.
    fn own_start(&self, k: usize, id: &str) -> [Bytes; 2] {
        let item = json!({"type": "reasoning", "id": id, "summary": [], "content": []});
        [
            self.emit(json!({"type": "response.output_item.added", "output_index": k, "item": item})),
            self.emit(
                json!({"type": "response.content_part.added", "item_id": id, "output_index": k, "content_index": 0,
                       "part": {"type": "reasoning_text", "text": ""}}),
            ),
        ]
    }

    fn own_delta(&self, k: usize, id: &str, text: &str) -> Bytes {
        self.emit(json!({"type": "response.reasoning_text.delta", "item_id": id, "output_index": k,
                         "content_index": 0, "delta": text}))
    }

    /// The last events of a reasoning item of the proxy's own.
    fn own_end(&self, k: usize, id: &str, text: &str) -> [Bytes; 3] {
        let part = json!({"type": "reasoning_text", "text": text});
        [
            self.emit(json!({"type": "response.reasoning_text.done", "item_id": id, "output_index": k, "content_index": 0, "text": text})),
            self.emit(json!({"type": "response.content_part.done", "item_id": id, "output_index": k, "content_index": 0, "part": part})),
            self.emit(json!({"type": "response.output_item.done", "output_index": k, "item": reasoning_item(id, text)})),
        ]
    }

    /// A whole reasoning item of the proxy's own, as output item `k`.
    fn own_events(&self, k: usize, id: &str, text: &str) -> Vec<Bytes> {
        let mut out = Vec::with_capacity(6);
        out.extend(self.own_start(k, id));
        out.push(self.own_delta(k, id, text));
        out.extend(self.own_end(k, id, text));
        out
    }

    /// Reasoning moved out of the text: out now in the proxy's reasoning item while no
    /// text went out, else held for after the text.
    fn own(&mut self, r: &str, out: &mut Vec<Bytes>) {
        if r.is_empty() {
            return;
        }
        self.moved.reasoning(r);
        if !self.sent_text.is_empty() || self.through {
            self.pending_own.push_str(r);
            return;
        }
        let (k, id) = if let Some(o) = &self.open_own {
            o.clone()
        } else {
            let k = self.next_out;
            self.next_out += 1;
            let id = self.own_id(self.own_done.len());
            out.extend(self.own_start(k, &id));
            self.open_own = Some((k, id.clone()));
            (k, id)
        };
        self.own_text.push_str(r);
        out.push(self.own_delta(k, &id, r));
    }

    /// The last events of the proxy's message item `item` (one `output_text` part).
    fn message_end(&self, k: usize, id: &str, item: &Value) -> [Bytes; 3] {
        let part = item.get("content").and_then(|c| c.get(0)).cloned().unwrap_or(Value::Null);
        let text = part.get("text").cloned().unwrap_or_else(|| json!(""));
        [
            self.emit(json!({"type": "response.output_text.done", "item_id": id, "output_index": k, "content_index": 0, "text": text})),
            self.emit(json!({"type": "response.content_part.done", "item_id": id, "output_index": k, "content_index": 0, "part": part})),
            self.emit(json!({"type": "response.output_item.done", "output_index": k, "item": item})),
        ]
    }

    /// The proxy's message item `id` holding `text`, done: `template` (the first message
    /// item of the answer as `apply` wrote it, with the members it kept) holding it, or a
    /// `message` item with the members of the first one the upstream added.
    fn final_message(&self, template: Option<&Value>, id: &str, text: &str) -> Value {
        let mut item = match template {
            Some(Value::Object(t)) => t.clone(),
            _ => self.message_added.clone().unwrap_or_default(),
        };
        let mut part = item
            .get("content")
            .and_then(Value::as_array)
            .and_then(|parts| parts.iter().find(|p| p.get("type").and_then(Value::as_str) == Some("output_text")))
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        // What points into the text fits only the text it came with (the text sent may
        // differ from the answer's, when some went out before it changed).
        if part.get("text").and_then(Value::as_str) != Some(text) {
            part.remove("logprobs");
            part.insert("annotations".to_owned(), json!([]));
        }
        part.insert("type".to_owned(), json!("output_text"));
        part.insert("text".to_owned(), json!(text));
        part.entry("annotations").or_insert_with(|| json!([]));
        item.insert("type".to_owned(), json!("message"));
        item.insert("id".to_owned(), json!(id));
        item.insert("status".to_owned(), json!("completed"));
        item.insert("role".to_owned(), json!("assistant"));
        item.insert("content".to_owned(), json!([part]));
        Value::Object(item)
    }

    fn message_start(&self, k: usize, id: &str) -> [Bytes; 2] {
        // With the members of the first message item the upstream added.
        let mut item = self.message_added.clone().unwrap_or_default();
        for (key, value) in [
            ("type", json!("message")),
            ("id", json!(id)),
            ("status", json!("in_progress")),
            ("role", json!("assistant")),
            ("content", json!([])),
        ] {
            item.insert(key.to_owned(), value);
        }
        [
            self.emit(json!({"type": "response.output_item.added", "output_index": k, "item": item})),
            self.emit(
                json!({"type": "response.content_part.added", "item_id": id, "output_index": k, "content_index": 0,
                             "part": {"type": "output_text", "text": "", "annotations": []}}),
            ),
        ]
    }

    fn text(&mut self, text: &str, out: &mut Vec<Bytes>) {
        if text.is_empty() {
            return;
        }
        let (k, id) = if let Some(o) = &self.open {
            o.clone()
        } else {
            self.close_own(out);
            let k = self.next_out;
            self.next_out += 1;
            let id = self.message_id.clone();
            out.extend(self.message_start(k, &id));
            self.open = Some((k, id.clone()));
            (k, id)
        };
        self.sent_text.push_str(text);
        self.open_text.push_str(text);
        out.push(self.emit(json!({"type": "response.output_text.delta", "item_id": id, "output_index": k,
                                  "content_index": 0, "delta": text})));
    }

    /// Events of the text and calls (not of the reasoning items, nor of the end: see
    /// [`Self::take_last`]): text, and reasoning moved out of it.
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
                    self.own(&r, out);
                }
                ReplyEvent::ContentWasReasoning => self.moved.was_reasoning(),
                _ => {}
            }
        }
        self.text(&text, out);
    }

    /// The last events (from the library's `finish`): their text, and the moved reasoning
    /// not yet sent (see [`MovedSoFar::last`]). `reasoning`: the reasoning items' text as fed.
    fn take_last(
        &mut self,
        events: Vec<ReplyEvent>,
        fixed: &FixedReply,
        reasoning: Option<&str>,
        out: &mut Vec<Bytes>,
    ) {
        let (text, rest) = self.moved.last(events, fixed, reasoning);
        self.own(&rest, out);
        self.text(&text, out);
    }

    /// The reply outgrew the fixer: what it held goes out, and the rest passes through (in
    /// the same message item: reasoning moved out of the text after text went out waits
    /// for the end, as in a stream that ends).
    fn give_up(&mut self, out: &mut Vec<Bytes>) {
        if let Some(s) = self.stream.take() {
            let reasoning = s.received().reasoning_content.clone();
            let (events, fixed) = s.finish(None);
            self.take_last(events, &fixed, reasoning.as_deref(), out);
        }
        self.through = true;
        self.unfixed.push("the reply is too large to fix; the rest passed through".to_owned());
    }

    fn push_text(&mut self, t: &str, out: &mut Vec<Bytes>) {
        if t.is_empty() {
            return;
        }
        let Some(s) = self.stream.as_mut() else {
            self.text(t, out);
            return;
        };
        if let Ok(events) = s.push_content(t) {
            self.take(events, out);
        } else {
            // Too large to fix: what was held, this text, then the rest as it comes.
            self.give_up(out);
            self.text(t, out);
        }
    }

    /// Feed a piece of a reasoning item's text as the reply's reasoning (the event itself
    /// passes through untouched). `part`: (output index, summary or content, part index).
    fn push_reasoning(&mut self, part: (u64, bool, u64), t: &str, out: &mut Vec<Bytes>) {
        if t.is_empty() {
            return;
        }
        if !self.reasoning_items.contains(&part.0) {
            self.reasoning_items.push(part.0);
        }
        let Some(s) = self.stream.as_mut() else { return };
        let new_part = self.reasoning_part != Some(part);
        self.reasoning_part = Some(part);
        let joined;
        let piece = if new_part && self.reasoning_fed {
            joined = format!("\n{t}");
            joined.as_str()
        } else {
            t
        };
        self.reasoning_fed = true;
        // The events are the reasoning items' own text (they pass through as they are)
        // and notes: nothing to send.
        if s.push_reasoning(piece).is_err() {
            // Too large to read for calls: what was held goes out, the rest passes through.
            self.give_up(out);
        }
    }

    /// The reasoning events: their text is fed to the library, and they pass through.
    fn reasoning_event(&mut self, kind: &str, data: &Map<String, Value>, index: u64, out: &mut Vec<Bytes>) {
        let part = |key: &str| data.get(key).and_then(Value::as_u64).unwrap_or(0);
        match kind {
            "response.reasoning_text.delta" => {
                let t = data.get("delta").and_then(Value::as_str).unwrap_or("");
                self.push_reasoning((index, false, part("content_index")), t, out);
            }
            "response.reasoning_summary_text.delta" => {
                let t = data.get("delta").and_then(Value::as_str).unwrap_or("");
                self.push_reasoning((index, true, part("summary_index")), t, out);
            }
            // A server that sends the reasoning item whole, without deltas.
            "response.output_item.done" if !self.reasoning_items.contains(&index) => {
                let Some(item) =
                    data.get("item").filter(|i| i.get("type").and_then(Value::as_str) == Some("reasoning"))
                else {
                    return;
                };
                // Every part is a new one (no delta of this item came).
                for (n, t) in reasoning_parts(item).enumerate() {
                    self.push_reasoning((index, true, u64::try_from(n).unwrap_or(u64::MAX)), t, out);
                }
            }
            _ => {}
        }
    }

    fn on_event(&mut self, e: &Event, out: &mut Vec<Bytes>) -> Result<(), Fault> {
        let Ok(Value::Object(data)) = serde_json::from_str::<Value>(&e.data) else {
            return Err(Fault::Malformed);
        };
        let kind = data.get("type").and_then(Value::as_str).unwrap_or("").to_owned();
        let index = data.get("output_index").and_then(Value::as_u64).unwrap_or(0);
        self.reasoning_event(&kind, &data, index, out);
        match kind.as_str() {
            "response.created" | "response.in_progress" | "response.queued" => {
                if let Some(r) = data.get("response").and_then(Value::as_object) {
                    self.response.clone_from(r);
                }
                out.push(self.emit(Value::Object(data)));
            }
            "response.output_item.added" => {
                let item = data.get("item").unwrap_or(&Value::Null);
                match item.get("type").and_then(Value::as_str).unwrap_or("") {
                    "message" => {
                        self.items.push((index, Item::Message));
                        self.messages += 1;
                        if self.message_added.is_none() {
                            self.message_added = item.as_object().cloned();
                        }
                        if let Some(id) = item.get("id").and_then(Value::as_str) {
                            id.clone_into(&mut self.message_id);
                        }
                    }
                    "function_call" if self.stream.is_some() => {
                        self.items.push((index, Item::Call));
                        if let Some(id) = item.get("id").and_then(Value::as_str) {
                            self.call_items.push((index, id.to_owned()));
                        }
                        self.call_added.push((index, item.as_object().cloned().unwrap_or_default()));
                        let mut d = ToolCallDelta::new(usize::try_from(index).unwrap_or(usize::MAX));
                        if let Some(id) = item.get("call_id").and_then(Value::as_str) {
                            d = d.with_id(id);
                        }
                        if let Some(n) = item.get("name").and_then(Value::as_str) {
                            d = d.with_name(n);
                        }
                        // Empty arguments too: a call whose arguments stay empty reads as
                        // the same call not streamed (`""`, repaired to `{}`), not as one
                        // that sent none (`{}`, untouched).
                        if let Some(a) = item.get("arguments").and_then(Value::as_str) {
                            d = d.with_arguments(a);
                        }
                        if let Some(s) = self.stream.as_mut() {
                            let events = s.push_tool_call(d);
                            self.take(events, out);
                        }
                    }
                    _ => {
                        self.close_message(out);
                        let k = self.next_out;
                        self.next_out += 1;
                        self.items.push((index, Item::Passed { out: k }));
                        out.push(self.emit(renumber(data, k)));
                    }
                }
            }
            "response.output_text.delta" => {
                if matches!(self.item(index), Some(Item::Message) | None) {
                    let t = data.get("delta").and_then(Value::as_str).unwrap_or("").to_owned();
                    self.push_text(&t, out);
                }
            }
            "response.function_call_arguments.delta" => {
                if let Some(Item::Call) = self.item(index) {
                    let piece = data.get("delta").and_then(Value::as_str).unwrap_or("");
                    let i = usize::try_from(index).unwrap_or(usize::MAX);
                    if let Some(s) = self.stream.as_mut() {
                        let events = s.push_tool_call(ToolCallDelta::new(i).with_arguments(piece));
                        self.take(events, out);
                    }
                }
            }
            "response.completed" | "response.incomplete" | "response.failed" => {
                if let Some(r) = data.get("response").and_then(Value::as_object) {
                    self.response.clone_from(r);
                }
                self.end = Some(kind);
            }
            "error" => {
                self.errored = true;
                out.push(e.raw.clone());
            }
            _ => match self.item(index) {
                // The message's and calls' own events: the proxy sends its own (a message
                // item done is kept, for its parts' members).
                Some(Item::Message | Item::Call) if kind.starts_with("response.") => {
                    if kind == "response.output_item.done"
                        && let Some(item) =
                            data.get("item").filter(|i| i.get("type").and_then(Value::as_str) == Some("message"))
                    {
                        self.messages_done.push(item.clone());
                    }
                }
                Some(Item::Passed { out: k }) => {
                    if kind == "response.output_item.done"
                        && let Some(item) = data.get("item")
                    {
                        self.passed.push((k, item.clone()));
                    }
                    out.push(self.emit(renumber(data, k)));
                }
                _ => out.push(self.emit(Value::Object(data))),
            },
        }
        Ok(())
    }

    /// The reply as a non-streamed response, from what was received.
    fn assembled(&self, received: &toolfix::reply::Received) -> Value {
        let mut r = self.response.clone();
        let mut output: Vec<Value> = self.passed.iter().map(|(_, i)| i.clone()).collect();
        // The message items as done (their members, their parts'), when each came whole
        // and they hold the text the library read; else the text in one item.
        let joined: String = self
            .messages_done
            .iter()
            .flat_map(|i| i.get("content").and_then(Value::as_array).into_iter().flatten())
            .filter(|p| p.get("type").and_then(Value::as_str) == Some("output_text"))
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect();
        if self.messages > 0 && self.messages_done.len() == self.messages && joined == received.content {
            output.extend(self.messages_done.iter().cloned());
        } else if !received.content.is_empty() {
            output.push(self.final_message(None, &self.message_id, &received.content));
        }
        for c in &received.tool_calls {
            let id = self
                .call_items
                .iter()
                .find(|(i, _)| usize::try_from(*i).ok() == Some(c.index))
                .map_or_else(|| format!("fc_{}", c.index), |(_, id)| id.clone());
            // The item as added, with its members.
            let mut item = self
                .call_added
                .iter()
                .find(|(i, _)| usize::try_from(*i).ok() == Some(c.index))
                .map(|(_, m)| m.clone())
                .unwrap_or_default();
            for (key, value) in [
                ("type", json!("function_call")),
                ("id", json!(id)),
                ("call_id", json!(c.id)),
                ("name", json!(c.name)),
                ("arguments", json!(c.arguments)),
                ("status", json!("completed")),
            ] {
                item.insert(key.to_owned(), value);
            }
            output.push(Value::Object(item));
        }
        r.insert("object".to_owned(), json!("response"));
        r.insert("output".to_owned(), Value::Array(output));
        if !r.contains_key("status") || r.get("status").and_then(Value::as_str) == Some("in_progress") {
            r.insert("status".to_owned(), json!("completed"));
        }
        Value::Object(r)
    }
}

impl StreamFixer<'_> for ResponsesStream {
    fn push(&mut self, bytes: &[u8]) -> Result<Vec<Bytes>, Fault> {
        let events = self.sse.push(bytes).map_err(|sse::TooLong| Fault::TooLarge)?;
        let mut out = Vec::new();
        for e in events {
            if self.end.is_none() {
                self.on_event(&e, &mut out)?;
            }
        }
        Ok(out)
    }

    fn is_done(&self) -> bool {
        self.end.is_some()
    }

    fn finish(&mut self) -> Ended {
        let mut frames = Vec::new();
        let mut fault = false;
        if let Some(last) = std::mem::replace(&mut self.sse, sse::Parser::new(0)).finish() {
            fault = self.on_event(&last, &mut frames).is_err();
        }
        let complete = !fault && self.end.is_some();
        let incomplete = self.response.get("status").and_then(Value::as_str) == Some("incomplete")
            && self.response.get("incomplete_details").and_then(|d| d.get("reason")).and_then(Value::as_str)
                == Some("max_output_tokens");
        let (received, fixed) = match self.stream.take() {
            Some(s) => {
                let received = s.received().clone();
                let (events, f) = s.finish(Some(if incomplete { "length" } else { "stop" }));
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
            errored: self.errored || self.end.as_deref() == Some("response.failed"),
            content_was_reasoning: self.moved.content_was_reasoning,
        }
    }

    fn closing(&self, answer: &Fixed, later: bool, summary: &Summary, unusable: Unusable) -> Vec<Bytes> {
        let mut out = Vec::new();
        let mut response = answer.response.clone();
        let fixed = answer.replies.first().and_then(Option::as_ref);
        if let Some(f) = fixed.filter(|f| Responses::changes(&answer.response, 0, f)) {
            Responses::apply(&mut response, 0, f, unusable);
        }
        let mut dropped = kept::take(&mut response);
        let items = response.get("output").and_then(Value::as_array).cloned().unwrap_or_default();
        // The first message item as `apply` wrote it: the proxy's is that (its members).
        let template = items.iter().find(|i| i.get("type").and_then(Value::as_str) == Some("message"));
        let text: String = items
            .iter()
            .filter(|i| i.get("type").and_then(Value::as_str) == Some("message"))
            .flat_map(|i| i.get("content").and_then(Value::as_array).cloned().unwrap_or_default())
            .filter_map(|p| p.get("text").and_then(Value::as_str).map(str::to_owned))
            .collect();
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
        let mut next_out = self.next_out;
        let mut final_output: Vec<(usize, Value)> = self.passed.clone();
        final_output.extend(self.own_done.iter().cloned());
        // The proxy's reasoning item still open: closed before any other item.
        let mut open_own = self.open_own.clone();
        let mut close_own = |out: &mut Vec<Bytes>, final_output: &mut Vec<(usize, Value)>| {
            if let Some((k, id)) = open_own.take() {
                out.extend(self.own_end(k, &id, &self.own_text));
                final_output.push((k, reasoning_item(&id, &self.own_text)));
            }
        };
        // Moved reasoning of a later attempt: only when nothing was sent (as its text),
        // before its text.
        if later && self.sent_text.is_empty() && self.own_done.is_empty() && self.open_own.is_none() {
            for item in items.iter().filter(|i| is_proxy_reasoning(i)) {
                let k = next_out;
                next_out += 1;
                let id = item.get("id").and_then(Value::as_str).unwrap_or("");
                let text: String = reasoning_parts(item).collect();
                out.extend(self.own_events(k, id, &text));
                final_output.push((k, reasoning_item(id, &text)));
            }
        }
        // The message item: open (or opened now for unseen text), then closed.
        let mut open = self.open.clone();
        let mut message_text = self.open_text.clone();
        if !unseen.is_empty() {
            let (k, id) = if let Some(o) = &open {
                o.clone()
            } else {
                close_own(&mut out, &mut final_output);
                let k = next_out;
                next_out += 1;
                out.extend(self.message_start(k, &self.message_id));
                (k, self.message_id.clone())
            };
            out.push(self.emit(json!({"type": "response.output_text.delta", "item_id": id, "output_index": k,
                                      "content_index": 0, "delta": unseen})));
            message_text.push_str(&unseen);
            open = Some((k, id));
        }
        if let Some((k, id)) = open {
            let item = self.final_message(template, &id, &message_text);
            // Members the template kept that the text sent does not fit, and the members of
            // message items after the first (a stream sends their text in this one):
            // dropped, and noted.
            let mut notes = Dropped::default();
            let part = |i: &Value| i.get("content").and_then(|c| c.get(0)).cloned().unwrap_or(Value::Null);
            if let Some(t) = template {
                let (was, is) = (part(t), part(&item));
                for key in ["annotations", "logprobs"] {
                    if was.get(key).is_some_and(kept::says_something) && was.get(key) != is.get(key) {
                        notes.note(&json!({}), key, Why::Streamed);
                    }
                }
            }
            for later in items.iter().filter(|i| i.get("type").and_then(Value::as_str) == Some("message")).skip(1) {
                super::items::note_message(later, &json!({}), Why::Streamed, &mut notes);
            }
            dropped = notes.after(dropped);
            out.extend(self.message_end(k, &id, &item));
            final_output.push((k, item));
        }
        close_own(&mut out, &mut final_output);
        // This attempt's moved reasoning held for after the text.
        if !later && !self.pending_own.is_empty() {
            let k = next_out;
            next_out += 1;
            let id = self.own_id(self.own_done.len() + usize::from(self.open_own.is_some()));
            out.extend(self.own_events(k, &id, &self.pending_own));
            final_output.push((k, reasoning_item(&id, &self.pending_own)));
        }
        for item in items.iter().filter(|i| i.get("type").and_then(Value::as_str) == Some("function_call")) {
            let k = next_out;
            next_out += 1;
            let id = item.get("id").and_then(Value::as_str).unwrap_or("");
            let arguments = item.get("arguments").and_then(Value::as_str).unwrap_or("{}");
            let mut added = item.clone();
            if let Some(o) = added.as_object_mut() {
                o.insert("arguments".to_owned(), json!(""));
                o.insert("status".to_owned(), json!("in_progress"));
            }
            out.push(self.emit(json!({"type": "response.output_item.added", "output_index": k, "item": added})));
            out.push(self.emit(json!({"type": "response.function_call_arguments.delta", "item_id": id, "output_index": k, "delta": arguments})));
            out.push(self.emit(json!({"type": "response.function_call_arguments.done", "item_id": id, "output_index": k, "arguments": arguments})));
            out.push(self.emit(json!({"type": "response.output_item.done", "output_index": k, "item": item})));
            final_output.push((k, item.clone()));
        }
        final_output.sort_by_key(|(k, _)| *k);
        let mut r = self.response.clone();
        r.insert("output".to_owned(), Value::Array(final_output.into_iter().map(|(_, i)| i).collect()));
        let mut report = summary.to_value();
        if let (Some(d), Some(o)) = (dropped, report.as_object_mut()) {
            o.insert("dropped".to_owned(), d);
        }
        r.insert("x_toolfix".to_owned(), report);
        let end = self.end.clone().unwrap_or_else(|| "response.completed".to_owned());
        out.push(self.emit(json!({"type": end, "response": r})));
        out
    }

    fn error_frame(&self, code: &str, message: &str) -> Bytes {
        // The event's own fields (as the API sends them), and `error` too, which the
        // OpenAI SDK raises as an `APIError`.
        self.emit(json!({"type": "error", "code": code, "message": message, "param": null,
                         "error": {"type": "upstream_error", "code": code, "message": message}}))
    }

    fn unfixed(&self) -> Vec<String> {
        self.unfixed.clone()
    }
}

/// An upstream event with its output index set to `k`.
fn renumber(mut data: Map<String, Value>, k: usize) -> Value {
    data.insert("output_index".to_owned(), json!(k));
    Value::Object(data)
}
