//! The pure streaming core: upstream SSE bytes in, client SSE frames out, the reply
//! fixed by [`ReplyStream`] as it arrives.

use super::super::Adapter;
use super::super::chat::{ChatCompletions, call_value};
use crate::recover::Fixed;
use crate::sse::{self, Event};
use crate::summary::Summary;
use bytes::Bytes;
use serde_json::{Map, Value, json};
use toolfix::{FixOptions, FixedReply, ReplyEvent, ReplyStream, ToolCallDelta, ToolSet};

/// The most choices fixed in one stream (`n`); later ones pass through.
const MAX_CHOICES: usize = 16;

/// The most server-parsed calls assembled per choice.
const MAX_NATIVES: usize = 256;

/// A server-parsed call as its deltas arrive.
#[derive(Debug, Default)]
struct Native {
    index: u64,
    id: Option<String>,
    name: String,
    arguments: String,
}

/// One choice of the stream.
struct Choice<'t> {
    index: u64,
    /// `None` once the reply outgrew the fixer: the rest passes through.
    stream: Option<ReplyStream<'t>>,
    /// Tool-call indices added to what passes through after the fixer gave up (the calls
    /// it had fixed went out first).
    shift: Option<u64>,
    content: String,
    reasoning: Option<String>,
    natives: Vec<Native>,
    finish: Option<String>,
}

/// The pure streaming core: upstream SSE bytes in, client SSE frames out.
pub(crate) struct Fixer<'t> {
    tools: &'t ToolSet,
    history: Option<&'t Value>,
    options: FixOptions,
    sse: sse::Parser,
    choices: Vec<Choice<'t>>,
    template: Option<Map<String, Value>>,
    usage: Vec<Bytes>,
    usage_value: Option<Value>,
    /// `[DONE]` seen.
    pub(crate) done: bool,
    errored: bool,
    reasoning_key: &'static str,
    content_was_reasoning: bool,
    /// Replies the fixer gave up on (too large).
    unfixed: Vec<String>,
}

/// What is left when the upstream stream ends.
pub(crate) struct Ended {
    /// Text still held, to send now.
    pub(crate) text: Vec<Bytes>,
    /// The reply as a non-streaming response (for re-prompts and the report).
    pub(crate) response: Value,
    pub(crate) fixed: Vec<Option<FixedReply>>,
    /// Every choice got its `finish_reason`, or `[DONE]` came.
    pub(crate) complete: bool,
    /// The upstream sent an error event (passed through).
    pub(crate) errored: bool,
    pub(crate) content_was_reasoning: bool,
    pub(crate) closing: Closing,
}

/// What the last frames are built from.
pub(crate) struct Closing {
    template: Map<String, Value>,
    usage: Vec<Bytes>,
    done: bool,
    reasoning_key: &'static str,
    /// Choice indices, in response order, and whether each passed through.
    indices: Vec<(u64, bool)>,
}

impl<'t> Fixer<'t> {
    pub(crate) fn new(tools: &'t ToolSet, history: Option<&'t Value>, options: FixOptions, max_event: usize) -> Self {
        Fixer {
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

    /// Feed upstream bytes; get the frames to send now.
    pub(crate) fn push(&mut self, bytes: &[u8]) -> Result<Vec<Bytes>, sse::TooLong> {
        let events = self.sse.push(bytes)?;
        let mut out = Vec::new();
        for e in events {
            if !self.done {
                self.event(&e, &mut out);
            }
        }
        Ok(out)
    }

    fn event(&mut self, event: &Event, out: &mut Vec<Bytes>) {
        if event.data.trim() == "[DONE]" {
            self.done = true;
            return;
        }
        let Ok(Value::Object(mut chunk)) = serde_json::from_str::<Value>(&event.data) else {
            out.push(event.raw.clone());
            return;
        };
        if chunk.get("error").is_some_and(|e| !e.is_null()) {
            self.errored = true;
            out.push(event.raw.clone());
            return;
        }
        if self.template.is_none() {
            let mut t = chunk.clone();
            t.remove("choices");
            t.remove("usage");
            self.template = Some(t);
        }
        let choices = match chunk.get("choices") {
            Some(Value::Array(c)) if !c.is_empty() => c.clone(),
            _ => {
                if let Some(u) = chunk.get("usage").filter(|u| !u.is_null()) {
                    self.usage_value = Some(u.clone());
                    self.usage.push(event.raw.clone());
                } else {
                    out.push(event.raw.clone());
                }
                return;
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
        if delta.get(key).is_some() {
            self.reasoning_key = key;
        }
        let Some(pos) = self.position(index) else { return (true, None) };
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
        let mut overflow = false;
        let reasoning_in = delta.get(key).and_then(Value::as_str);
        if let Some(r) = reasoning_in {
            c.reasoning.get_or_insert_with(String::new).push_str(r);
            match stream.push_reasoning(r) {
                Ok(e) => events.extend(e),
                Err(_) => overflow = true,
            }
        }
        let content_in = delta.get("content").and_then(Value::as_str);
        if let Some(t) = content_in.filter(|_| !overflow) {
            c.content.push_str(t);
            match stream.push_content(t) {
                Ok(e) => events.extend(e),
                Err(_) => overflow = true,
            }
        }
        let calls = delta.get("tool_calls").and_then(Value::as_array);
        for call in calls.into_iter().flatten() {
            let d = ToolCallDelta::from_value(call);
            assemble(&mut c.natives, call);
            events.extend(stream.push_tool_call(d));
        }
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
        if overflow {
            return self.give_up(pos, choice, content, reasoning, out);
        }
        let same = calls.is_none()
            && finish.is_none()
            && content_in.unwrap_or("") == content
            && reasoning_in.unwrap_or("") == reasoning;
        let mut d = Map::new();
        if let Some(role) = delta.get("role") {
            d.insert("role".to_owned(), role.clone());
        }
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
            content: String::new(),
            reasoning: None,
            natives: Vec::new(),
            finish: None,
        });
        Some(self.choices.len() - 1)
    }

    /// The reply outgrew the fixer: send what it holds and the calls it fixed, and pass
    /// the rest of this choice through.
    fn give_up(
        &mut self,
        pos: usize,
        choice: &Value,
        mut content: String,
        mut reasoning: String,
        out: &mut Vec<Bytes>,
    ) -> (bool, Option<Value>) {
        let template = self.template.clone().unwrap_or_default();
        let key = self.reasoning_key;
        let Some(c) = self.choices.get_mut(pos) else { return (true, None) };
        let Some(stream) = c.stream.take() else { return (true, None) };
        let (events, fixed) = stream.finish(None);
        for e in events {
            match e {
                ReplyEvent::Content(t) => content.push_str(&t),
                ReplyEvent::Reasoning(t) => reasoning.push_str(&t),
                _ => {}
            }
        }
        self.unfixed.push(format!("choice {}: the reply is too large to fix; the rest passed through", c.index));
        let mut d = Map::new();
        if !reasoning.is_empty() {
            d.insert(key.to_owned(), Value::String(reasoning));
        }
        if !content.is_empty() {
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
        // This chunk's content went into the stream and out above; pass the rest of it.
        let mut rest = choice.clone();
        if let Some(d) = rest.get_mut("delta").and_then(Value::as_object_mut) {
            d.remove("content");
            d.remove("reasoning_content");
            d.remove("reasoning");
        }
        let (_, new) = passed_through(&rest, shift);
        (false, new)
    }

    /// The upstream stream ended.
    pub(crate) fn finish(mut self) -> Ended {
        if let Some(last) = std::mem::replace(&mut self.sse, sse::Parser::new(0)).finish() {
            let mut out = Vec::new();
            self.event(&last, &mut out);
        }
        let template = self.template.take().unwrap_or_default();
        let mut text = Vec::new();
        let mut fixed = Vec::new();
        let mut choices = Vec::new();
        let mut indices = Vec::new();
        self.choices.sort_by_key(|c| c.index);
        let complete = self.done || (!self.choices.is_empty() && self.choices.iter().all(|c| c.finish.is_some()));
        for c in std::mem::take(&mut self.choices) {
            indices.push((c.index, c.shift.is_some()));
            let reply = match c.stream {
                Some(stream) => {
                    let (events, f) = stream.finish(c.finish.as_deref());
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
                    let mut d = Map::new();
                    if !reasoning.is_empty() {
                        d.insert(self.reasoning_key.to_owned(), Value::String(reasoning));
                    }
                    if !content.is_empty() {
                        d.insert("content".to_owned(), Value::String(content));
                    }
                    if !d.is_empty() {
                        text.push(chunk(&template, json!([{"index": c.index, "delta": d, "finish_reason": null}])));
                    }
                    Some(f)
                }
                None if c.shift.is_none() => {
                    // A choice that only ever had a role or a finish reason.
                    let (_, f) = ReplyStream::new(Some(self.tools), self.history, self.options.clone())
                        .finish(c.finish.as_deref());
                    Some(f)
                }
                None => None,
            };
            fixed.push(reply);
            choices.push(assembled(&c.content, c.reasoning.as_deref(), &c.natives, c.index, c.finish.as_deref()));
        }
        let mut response = template.clone();
        response.insert("object".to_owned(), json!("chat.completion"));
        response.insert("choices".to_owned(), Value::Array(choices));
        if let Some(u) = self.usage_value.take() {
            response.insert("usage".to_owned(), u);
        }
        Ended {
            text,
            response: Value::Object(response),
            fixed,
            complete,
            errored: self.errored,
            content_was_reasoning: self.content_was_reasoning,
            closing: Closing {
                template,
                usage: std::mem::take(&mut self.usage),
                done: self.done,
                reasoning_key: self.reasoning_key,
                indices,
            },
        }
    }

    /// Replies the fixer gave up on.
    pub(crate) fn unfixed(&self) -> &[String] {
        &self.unfixed
    }
}

impl Closing {
    /// The last frames: for each choice its calls and its closing chunk (the last one
    /// with `x_toolfix`), held usage chunks, `[DONE]`. `late`: the answer is a later
    /// attempt's, whose text has not been sent yet.
    pub(crate) fn frames(&self, answer: &Fixed, late: bool, summary: &Summary) -> Vec<Bytes> {
        let mut response = answer.response.clone();
        for (i, f) in answer.replies.iter().enumerate() {
            // As in a non-streaming answer: a reply left alone keeps the upstream's finish reason.
            if let Some(f) = f.as_ref().filter(|f| ChatCompletions::changes(&answer.response, i, f)) {
                ChatCompletions::apply(&mut response, i, f);
            }
        }
        let choices = response.get("choices").and_then(Value::as_array).cloned().unwrap_or_default();
        let mut out = Vec::new();
        let mut closers = Vec::new();
        for (pos, choice) in choices.iter().enumerate() {
            let index = self.indices.get(pos).map_or(pos as u64, |(i, _)| *i);
            if self.indices.get(pos).is_some_and(|(_, through)| *through) {
                continue; // its finish went out as the upstream sent it
            }
            let message = choice.get("message").unwrap_or(&Value::Null);
            if late {
                let mut d = Map::new();
                d.insert("role".to_owned(), json!("assistant"));
                if let Some(r) = message.get("reasoning_content").or_else(|| message.get("reasoning")) {
                    d.insert(self.reasoning_key.to_owned(), r.clone());
                }
                if let Some(t) = message.get("content").and_then(Value::as_str).filter(|t| !t.is_empty()) {
                    d.insert("content".to_owned(), json!(t));
                }
                out.push(chunk(&self.template, json!([{"index": index, "delta": d, "finish_reason": null}])));
            }
            for (k, call) in message.get("tool_calls").and_then(Value::as_array).into_iter().flatten().enumerate() {
                out.push(chunk(&self.template, call_delta(index, k, call)));
            }
            let finish = choice.get("finish_reason").cloned().unwrap_or(Value::Null);
            closers.push(json!({"index": index, "delta": {}, "finish_reason": finish}));
        }
        let last = closers.len().saturating_sub(1);
        for (n, closer) in closers.into_iter().enumerate() {
            let mut c = self.template.clone();
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

/// Add a tool-call delta to the calls assembled so far (capped).
fn assemble(natives: &mut Vec<Native>, call: &Value) {
    let index = call.get("index").and_then(Value::as_u64).unwrap_or(0);
    let pos = match natives.iter().position(|n| n.index == index) {
        Some(p) => p,
        None if natives.len() < MAX_NATIVES => {
            natives.push(Native { index, ..Native::default() });
            natives.len() - 1
        }
        None => return,
    };
    let Some(n) = natives.get_mut(pos) else { return };
    if let Some(id) = call.get("id").and_then(Value::as_str).filter(|i| !i.is_empty()) {
        n.id.get_or_insert_with(|| id.to_owned());
    }
    let f = call.get("function").unwrap_or(&Value::Null);
    if let Some(name) = f.get("name").and_then(Value::as_str)
        && n.name != name
        && n.name.len() < 1024
    {
        n.name.push_str(name);
    }
    if let Some(a) = f.get("arguments").and_then(Value::as_str)
        && n.arguments.len() < 16 << 20
    {
        n.arguments.push_str(a);
    }
}

/// A streamed choice as a non-streaming one.
fn assembled(content: &str, reasoning: Option<&str>, natives: &[Native], index: u64, finish: Option<&str>) -> Value {
    let mut message = Map::new();
    message.insert("role".to_owned(), json!("assistant"));
    message.insert("content".to_owned(), if content.is_empty() { Value::Null } else { json!(content) });
    if let Some(r) = reasoning {
        message.insert("reasoning_content".to_owned(), json!(r));
    }
    if !natives.is_empty() {
        let calls: Vec<Value> = natives
            .iter()
            .filter(|n| !n.name.is_empty())
            .map(|n| json!({"id": n.id, "type": "function", "function": {"name": n.name, "arguments": n.arguments}}))
            .collect();
        message.insert("tool_calls".to_owned(), Value::Array(calls));
    }
    json!({"index": index, "message": message, "finish_reason": finish})
}
