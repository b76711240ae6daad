//! Streamed chat completions (SSE): upstream chunks in, client chunks out.
//!
//! Text deltas go out as the library releases them (only a possible start of call markup
//! waits); a chunk the proxy does not change goes out byte for byte. Tool calls are held
//! until the reply ends, so a corrective re-prompt is still possible then; they go out
//! fixed, one delta per call (id, type, name and the whole arguments), indices from 0,
//! before the choice's closing chunk, which carries the `finish_reason` a non-streamed
//! answer would have and, on the last choice, the `x_toolfix` report. Usage chunks are
//! held and sent after it, then `[DONE]`.

use super::super::{Adapter, Ended, Fault, Fixed, StreamFixer, Unusable};
use super::{ChatCompletions, call_value};
use crate::sse::{self, Event};
use crate::summary::Summary;
use bytes::Bytes;
use serde_json::{Map, Value, json};
use toolfix::reply::Received;
use toolfix::{FixOptions, ReplyEvent, ReplyStream, ToolCallDelta, ToolSet};

/// The most choices fixed in one stream (`n`); later ones pass through.
const MAX_CHOICES: usize = 16;

/// One choice of the stream.
struct Choice {
    index: u64,
    /// `None` once the reply outgrew the fixer: the rest passes through.
    stream: Option<ReplyStream>,
    /// Tool-call indices added to what passes through after the fixer gave up (the calls
    /// it had fixed went out first).
    shift: Option<u64>,
    /// The reply as received, once the stream is finished or given up.
    received: Option<Received>,
    finish: Option<String>,
    /// Content and reasoning sent to the client.
    sent_content: String,
    sent_reasoning: bool,
}

/// The streaming fixer of Chat Completions.
pub(crate) struct ChatStream<'t> {
    tools: &'t ToolSet,
    history: Option<&'t Value>,
    options: FixOptions,
    sse: sse::Parser,
    choices: Vec<Choice>,
    template: Option<Map<String, Value>>,
    usage: Vec<Bytes>,
    usage_value: Option<Value>,
    done: bool,
    errored: bool,
    reasoning_key: &'static str,
    content_was_reasoning: bool,
    unfixed: Vec<String>,
}

impl<'t> ChatStream<'t> {
    pub(crate) fn new(tools: &'t ToolSet, history: Option<&'t Value>, options: FixOptions, max_event: usize) -> Self {
        ChatStream {
            tools,
            history,
            options,
            sse: sse::Parser::new(max_event),
            choices: Vec::new(),
            template: None,
            usage: Vec::new(),
            usage_value: None,
            done: false,
            errored: false,
            reasoning_key: "reasoning_content",
            content_was_reasoning: false,
            unfixed: Vec::new(),
        }
    }

    fn event(&mut self, event: &Event, out: &mut Vec<Bytes>) -> Result<(), Fault> {
        if event.data.trim() == "[DONE]" {
            self.done = true;
            return Ok(());
        }
        let Ok(Value::Object(mut chunk)) = serde_json::from_str::<Value>(&event.data) else {
            return Err(Fault::Malformed);
        };
        if chunk.get("error").is_some_and(|e| !e.is_null()) {
            self.errored = true;
            out.push(event.raw.clone());
            return Ok(());
        }
        if self.template.is_none() {
            let mut t = chunk.clone();
            t.remove("choices");
            t.remove("usage");
            self.template = Some(t);
        }
        let choices = match chunk.get_mut("choices").map(Value::take) {
            Some(Value::Array(c)) if !c.is_empty() => c,
            _ => {
                if let Some(u) = chunk.get("usage").filter(|u| !u.is_null()) {
                    self.usage_value = Some(u.clone());
                    self.usage.push(event.raw.clone());
                } else {
                    out.push(event.raw.clone());
                }
                return Ok(());
            }
        };
        let mut unchanged = true;
        let mut rebuilt = Vec::with_capacity(choices.len());
        for choice in &choices {
            let (same, new) = self.choice(choice, out);
            unchanged &= same;
            rebuilt.extend(new);
        }
        if unchanged {
            out.push(event.raw.clone());
        } else if !rebuilt.is_empty() {
            chunk.insert("choices".to_owned(), Value::Array(rebuilt));
            out.push(sse::frame(&Value::Object(chunk).to_string()));
        }
        Ok(())
    }

    /// One choice of a chunk: feed it; say whether it goes out as it came, and what goes
    /// out instead otherwise.
    fn choice(&mut self, choice: &Value, out: &mut Vec<Bytes>) -> (bool, Option<Value>) {
        let index = choice.get("index").and_then(Value::as_u64).unwrap_or(0);
        let delta = choice.get("delta").unwrap_or(&Value::Null);
        let finish = choice.get("finish_reason").and_then(Value::as_str);
        let key = if delta.get("reasoning").is_some() && delta.get("reasoning_content").is_none() {
            "reasoning"
        } else {
            "reasoning_content"
        };
        let Some(pos) = self.position(index) else {
            return (true, None);
        };
        if delta.get(key).is_some() {
            self.reasoning_key = key;
        }
        let (tools, history, options) = (self.tools, self.history, &self.options);
        let Some(c) = self.choices.get_mut(pos) else { return (true, None) };
        if let Some(f) = finish {
            c.finish = Some(f.to_owned());
        }
        if let Some(shift) = c.shift {
            return passed_through(choice, shift);
        }
        let stream = c.stream.get_or_insert_with(|| ReplyStream::new(Some(tools), history, options.clone()));
        let mut events = Vec::new();
        let mut overflow = None;
        let reasoning_in = delta.get(key).and_then(Value::as_str);
        if let Some(r) = reasoning_in {
            match stream.push_reasoning(r) {
                Ok(e) => events.extend(e),
                Err(_) => overflow = Some((r, true)),
            }
        }
        let content_in = delta.get("content").and_then(Value::as_str);
        if let Some(t) = content_in.filter(|_| overflow.is_none()) {
            match stream.push_content(t) {
                Ok(e) => events.extend(e),
                Err(_) => overflow = Some((t, false)),
            }
        }
        let calls = delta.get("tool_calls").and_then(Value::as_array);
        if overflow.is_none() {
            for call in calls.into_iter().flatten() {
                events.extend(stream.push_tool_call(ToolCallDelta::from_value(call)));
            }
        }
        let (content, reasoning) = self.texts(events);
        if let Some(stuck) = overflow {
            return self.give_up(pos, choice, content, reasoning, stuck, out);
        }
        let same = calls.is_none()
            && finish.is_none()
            && content_in.unwrap_or("") == content
            && reasoning_in.unwrap_or("") == reasoning;
        let mut d = Map::new();
        if let Some(role) = delta.get("role") {
            d.insert("role".to_owned(), role.clone());
        }
        self.note_sent(pos, &content, &reasoning);
        if !reasoning.is_empty() {
            d.insert(self.reasoning_key.to_owned(), Value::String(reasoning));
        }
        if !content.is_empty() {
            d.insert("content".to_owned(), Value::String(content));
        }
        if d.is_empty() {
            return (same, None);
        }
        let mut new = json!({"index": index, "delta": d, "finish_reason": null});
        if let Some(lp) = choice.get("logprobs").filter(|l| !l.is_null())
            && let Some(obj) = new.as_object_mut()
        {
            obj.insert("logprobs".to_owned(), lp.clone());
        }
        (same, Some(new))
    }

    /// The content and reasoning text of some events.
    fn texts(&mut self, events: Vec<ReplyEvent>) -> (String, String) {
        let mut content = String::new();
        let mut reasoning = String::new();
        for e in events {
            match e {
                ReplyEvent::Content(t) => content.push_str(&t),
                ReplyEvent::Reasoning(t) => reasoning.push_str(&t),
                ReplyEvent::ContentWasReasoning => self.content_was_reasoning = true,
                _ => {}
            }
        }
        (content, reasoning)
    }

    fn note_sent(&mut self, pos: usize, content: &str, reasoning: &str) {
        if let Some(c) = self.choices.get_mut(pos) {
            c.sent_content.push_str(content);
            c.sent_reasoning |= !reasoning.is_empty();
        }
    }

    fn position(&mut self, index: u64) -> Option<usize> {
        if let Some(p) = self.choices.iter().position(|c| c.index == index) {
            return Some(p);
        }
        if self.choices.len() >= MAX_CHOICES {
            return None;
        }
        self.choices.push(Choice {
            index,
            stream: None,
            shift: None,
            received: None,
            finish: None,
            sent_content: String::new(),
            sent_reasoning: false,
        });
        Some(self.choices.len() - 1)
    }

    /// The reply outgrew the fixer: send what it holds, the text that did not fit (as it
    /// came), and the calls it fixed; pass the rest of this choice through. Nothing the
    /// upstream sent is lost or altered.
    fn give_up(
        &mut self,
        pos: usize,
        choice: &Value,
        mut content: String,
        mut reasoning: String,
        stuck: (&str, bool),
        out: &mut Vec<Bytes>,
    ) -> (bool, Option<Value>) {
        let template = self.template.clone().unwrap_or_default();
        let key = self.reasoning_key;
        let Some(c) = self.choices.get_mut(pos) else { return (true, None) };
        let Some(stream) = c.stream.take() else { return (true, None) };
        let mut received = stream.received().clone();
        let (events, fixed) = stream.finish(None);
        for e in events {
            match e {
                ReplyEvent::Content(t) => content.push_str(&t),
                ReplyEvent::Reasoning(t) => reasoning.push_str(&t),
                _ => {}
            }
        }
        let (text, is_reasoning) = stuck;
        if is_reasoning {
            reasoning.push_str(text);
            received.reasoning_content.get_or_insert_with(String::new).push_str(text);
        } else {
            content.push_str(text);
            received.content.push_str(text);
        }
        c.received = Some(received);
        self.unfixed.push(format!("choice {}: the reply is too large to fix; the rest passed through", c.index));
        let mut d = Map::new();
        if !reasoning.is_empty() {
            d.insert(key.to_owned(), Value::String(reasoning));
        }
        if !content.is_empty() {
            c.sent_content.push_str(&content);
            d.insert("content".to_owned(), Value::String(content));
        }
        if !d.is_empty() {
            out.push(chunk(&template, json!([{"index": c.index, "delta": d, "finish_reason": null}])));
        }
        let usable: Vec<_> = fixed.calls.iter().filter(|x| x.status.is_usable()).collect();
        for (k, call) in usable.iter().enumerate() {
            out.push(chunk(&template, call_delta(c.index, k, &call_value(call, &[]))));
        }
        let shift = usable.len() as u64;
        c.shift = Some(shift);
        // This chunk's text went out above; pass the rest of it.
        let mut rest = choice.clone();
        if let Some(d) = rest.get_mut("delta").and_then(Value::as_object_mut) {
            d.remove("content");
            d.remove("reasoning_content");
            d.remove("reasoning");
        }
        let (_, new) = passed_through(&rest, shift);
        (false, new)
    }
}

impl<'t> StreamFixer<'t> for ChatStream<'t> {
    fn push(&mut self, bytes: &[u8]) -> Result<Vec<Bytes>, Fault> {
        let events = self.sse.push(bytes).map_err(|sse::TooLong| Fault::TooLarge)?;
        let mut out = Vec::new();
        for e in events {
            if !self.done {
                self.event(&e, &mut out)?;
            }
        }
        Ok(out)
    }

    fn is_done(&self) -> bool {
        self.done
    }

    fn finish(&mut self) -> Ended {
        let mut frames = Vec::new();
        let mut fault = None;
        if let Some(last) = std::mem::replace(&mut self.sse, sse::Parser::new(0)).finish()
            && let Err(f) = self.event(&last, &mut frames)
        {
            fault = Some(f);
        }
        let template = self.template.clone().unwrap_or_default();
        let mut fixed = Vec::new();
        let mut choices = Vec::new();
        self.choices.sort_by_key(|c| c.index);
        let complete = fault.is_none()
            && (self.done || (!self.choices.is_empty() && self.choices.iter().all(|c| c.finish.is_some())));
        let (tools, history, options) = (self.tools, self.history, self.options.clone());
        let mut was_reasoning = false;
        for c in &mut self.choices {
            let reply = match c.stream.take() {
                Some(stream) => {
                    c.received = Some(stream.received().clone());
                    let (events, f) = stream.finish(c.finish.as_deref());
                    let mut content = String::new();
                    let mut reasoning = String::new();
                    for e in events {
                        match e {
                            ReplyEvent::Content(t) => content.push_str(&t),
                            ReplyEvent::Reasoning(t) => reasoning.push_str(&t),
                            ReplyEvent::ContentWasReasoning => was_reasoning = true,
                            _ => {}
                        }
                    }
                    let mut d = Map::new();
                    if !reasoning.is_empty() {
                        c.sent_reasoning = true;
                        d.insert(self.reasoning_key.to_owned(), Value::String(reasoning));
                    }
                    if !content.is_empty() {
                        c.sent_content.push_str(&content);
                        d.insert("content".to_owned(), Value::String(content));
                    }
                    if !d.is_empty() {
                        frames.push(chunk(&template, json!([{"index": c.index, "delta": d, "finish_reason": null}])));
                    }
                    Some(f)
                }
                None if c.shift.is_none() => {
                    // A choice that only ever had a role or a finish reason.
                    let (_, f) = ReplyStream::new(Some(tools), history, options.clone()).finish(c.finish.as_deref());
                    Some(f)
                }
                None => None,
            };
            fixed.push(reply);
            choices.push(assembled(c.received.as_ref(), c.index, c.finish.as_deref()));
        }
        self.content_was_reasoning |= was_reasoning;
        let mut response = template;
        response.insert("object".to_owned(), json!("chat.completion"));
        response.insert("choices".to_owned(), Value::Array(choices));
        if let Some(u) = self.usage_value.take() {
            response.insert("usage".to_owned(), u);
        }
        Ended {
            frames,
            fixed: Fixed { response: Value::Object(response), bytes: None, replies: fixed, read: None },
            complete,
            errored: self.errored,
            content_was_reasoning: self.content_was_reasoning,
        }
    }

    fn closing(&self, answer: &Fixed, later: bool, summary: &Summary, unusable: Unusable) -> Vec<Bytes> {
        let template = self.template.clone().unwrap_or_default();
        let mut response = answer.response.clone();
        for (i, f) in answer.replies.iter().enumerate() {
            // As in a non-streamed answer: a reply left alone keeps the upstream's finish reason.
            if let Some(f) = f.as_ref().filter(|f| ChatCompletions::changes(&answer.response, i, f)) {
                ChatCompletions::apply(&mut response, i, f, unusable);
            }
        }
        let choices = response.get("choices").and_then(Value::as_array).cloned().unwrap_or_default();
        let mut out = Vec::new();
        let mut closers = Vec::new();
        for (pos, choice) in choices.iter().enumerate() {
            let Some(c) = self.choices.get(pos) else { continue };
            if c.shift.is_some() {
                continue; // its finish went out as the upstream sent it
            }
            let message = choice.get("message").unwrap_or(&Value::Null);
            let mut d = Map::new();
            let text = message.get("content").and_then(Value::as_str).unwrap_or("");
            // Only what the client has not seen: a later attempt's text only when none was
            // sent, and the note of a give-up.
            let unseen = if let Some(rest) = text.strip_prefix(c.sent_content.as_str()) {
                rest.to_owned()
            } else if c.sent_content.is_empty() {
                text.to_owned()
            } else {
                match answer.replies.get(pos).and_then(Option::as_ref) {
                    Some(f) if unusable == Unusable::Explain && f.calls.iter().any(|x| !x.status.is_usable()) => {
                        format!("\n\n{}", f.gave_up(""))
                    }
                    _ => String::new(),
                }
            };
            if later
                && !c.sent_reasoning
                && c.sent_content.is_empty()
                && let Some(r) = message.get("reasoning_content").or_else(|| message.get("reasoning"))
            {
                d.insert(self.reasoning_key.to_owned(), r.clone());
            }
            if !unseen.is_empty() {
                d.insert("content".to_owned(), json!(unseen));
            }
            if !d.is_empty() {
                out.push(chunk(&template, json!([{"index": c.index, "delta": d, "finish_reason": null}])));
            }
            for (k, call) in message.get("tool_calls").and_then(Value::as_array).into_iter().flatten().enumerate() {
                out.push(chunk(&template, call_delta(c.index, k, call)));
            }
            let finish = choice.get("finish_reason").cloned().unwrap_or(Value::Null);
            closers.push(json!({"index": c.index, "delta": {}, "finish_reason": finish}));
        }
        if closers.is_empty() {
            // Every choice passed through (its finish went out as sent): the report goes
            // in a chunk of its own.
            let mut c = template.clone();
            c.insert("choices".to_owned(), json!([]));
            c.insert("x_toolfix".to_owned(), summary.to_value());
            out.push(sse::frame(&Value::Object(c).to_string()));
        }
        let last = closers.len().saturating_sub(1);
        for (n, closer) in closers.into_iter().enumerate() {
            let mut c = template.clone();
            c.insert("choices".to_owned(), json!([closer]));
            if n == last {
                c.insert("x_toolfix".to_owned(), summary.to_value());
            }
            out.push(sse::frame(&Value::Object(c).to_string()));
        }
        out.extend(self.usage.iter().cloned());
        if self.done {
            out.push(sse::frame("[DONE]"));
        }
        out
    }

    fn error_frame(&self, code: &str, message: &str) -> Bytes {
        sse::frame(&ChatCompletions::error_body("upstream_error", code, message).to_string())
    }

    fn unfixed(&self) -> Vec<String> {
        self.unfixed.clone()
    }
}

/// A chunk from the stream's template with these choices.
fn chunk(template: &Map<String, Value>, choices: Value) -> Bytes {
    let mut c = template.clone();
    c.insert("choices".to_owned(), choices);
    sse::frame(&Value::Object(c).to_string())
}

/// The delta that sends one whole call.
fn call_delta(choice: u64, k: usize, call: &Value) -> Value {
    let f = call.get("function").unwrap_or(&Value::Null);
    json!([{"index": choice, "delta": {"tool_calls": [{
        "index": k,
        "id": call.get("id").cloned().unwrap_or(Value::Null),
        "type": "function",
        "function": {"name": f.get("name").cloned().unwrap_or(Value::Null),
                     "arguments": f.get("arguments").cloned().unwrap_or(json!("{}"))},
    }]}, "finish_reason": null}])
}

/// A choice of a stream the fixer gave up on: as it came, tool-call indices shifted past
/// the calls already sent.
fn passed_through(choice: &Value, shift: u64) -> (bool, Option<Value>) {
    let mut c = choice.clone();
    if shift > 0
        && let Some(calls) = c.pointer_mut("/delta/tool_calls").and_then(Value::as_array_mut)
    {
        for call in calls {
            if let Some(i) = call.get("index").and_then(Value::as_u64)
                && let Some(obj) = call.as_object_mut()
            {
                obj.insert("index".to_owned(), json!(i + shift));
            }
        }
    }
    (shift == 0, Some(c))
}

/// A streamed choice as a non-streamed one, from what was received.
fn assembled(received: Option<&Received>, index: u64, finish: Option<&str>) -> Value {
    let mut message = Map::new();
    message.insert("role".to_owned(), json!("assistant"));
    let empty = Received::default();
    let r = received.unwrap_or(&empty);
    message.insert("content".to_owned(), if r.content.is_empty() { Value::Null } else { json!(r.content) });
    if let Some(reasoning) = &r.reasoning_content {
        message.insert("reasoning_content".to_owned(), json!(reasoning));
    }
    if !r.tool_calls.is_empty() {
        let calls: Vec<Value> = r
            .tool_calls
            .iter()
            .filter(|n| !n.name.is_empty())
            .map(|n| json!({"id": n.id, "type": "function", "function": {"name": n.name, "arguments": n.arguments}}))
            .collect();
        message.insert("tool_calls".to_owned(), Value::Array(calls));
    }
    json!({"index": index, "message": message, "finish_reason": finish})
}
