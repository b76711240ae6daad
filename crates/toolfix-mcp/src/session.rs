//! The wrapper's state and decisions, without I/O: what to do with each line from the
//! client and from the server.

use crate::Config;
use crate::envelope::{CallParams, Envelope, ListParams, ListResult, Members, id_key, offset};
use crate::event::Event;
use serde_json::Value;
use serde_json::value::RawValue;
use std::collections::HashMap;
use std::fmt::Write as _;
use toolfix::guard::{GuardConfig, ToolPolicy};
use toolfix::schema::NameError;
use toolfix::{CallFixer, CallStatus, FixOptions, Limits, Tool, ToolSet};

/// Most client requests tracked at once; past it, new ones are relayed untracked.
const MAX_PENDING: usize = 1 << 16;

/// What to do with a line from the client.
#[derive(Debug)]
pub(crate) enum ClientAction {
    /// Send the line to the server as it came.
    Forward,
    /// Send this line to the server instead.
    Replace(Vec<u8>),
    /// Do not send it: answer the client with this line.
    Answer(Vec<u8>),
    /// Neither send it nor answer it: a call that cannot be checked and has no id to
    /// answer (a notification).
    Drop,
}

/// What to do with a line from the server.
#[derive(Debug, Default)]
pub(crate) struct ServerStep {
    /// Keep the line from the client (an answer to the wrapper's own request).
    pub(crate) swallow: bool,
    /// Requests of the wrapper's own to send to the server.
    pub(crate) requests: Vec<Vec<u8>>,
    /// What to log.
    pub(crate) events: Vec<Event>,
}

#[derive(Debug)]
enum Kind {
    Other,
    List { fresh: bool },
    Call,
}

#[derive(Debug)]
struct Pending {
    id: Box<RawValue>,
    kind: Kind,
}

/// One client-server session.
#[derive(Debug)]
pub(crate) struct Session {
    /// The library's per-call entry, over the tools learned so far and the session's
    /// calls (the storm guard's window).
    fixer: CallFixer,
    /// The tools of the listing under way (client's pages or the wrapper's own).
    listing: Vec<Tool>,
    pending: HashMap<String, Pending>,
    own: HashMap<String, bool>,
    own_prefix: String,
    next_own: u64,
}

impl Session {
    pub(crate) fn new(config: &Config) -> Session {
        let guard = config.guard.enabled.then(|| {
            let mut g = GuardConfig::default().with_window(config.guard.window).with_threshold(config.guard.threshold);
            for name in &config.guard.exempt {
                g = g.with_tool(name.clone(), ToolPolicy::exempt());
            }
            g
        });
        let options = FixOptions::default()
            .with_limits(Limits::default().with_max_input_bytes(config.max_message_bytes))
            .with_guard(guard);
        Session {
            fixer: CallFixer::new(Some(&ToolSet::default()), None, &options),
            listing: Vec::new(),
            pending: HashMap::new(),
            own: HashMap::new(),
            own_prefix: format!("toolfix-mcp/{}/", std::process::id()),
            next_own: 0,
        }
    }

    /// The tools learned so far.
    #[cfg(test)]
    pub(crate) fn tools(&self) -> &[Tool] {
        self.fixer.tools().map_or(&[], ToolSet::tools)
    }

    /// Decide about a whole line from the client.
    pub(crate) fn on_client(&mut self, line: &[u8], events: &mut Vec<Event>) -> ClientAction {
        let Ok(text) = std::str::from_utf8(line) else {
            return ClientAction::Forward;
        };
        let Some(msg) = Envelope::parse(text) else {
            return unreadable(text, events);
        };
        let (Some(method), Some(id)) = (msg.method.as_deref(), msg.id) else {
            // Notifications and answers to the server's requests.
            return ClientAction::Forward;
        };
        let key = id_key(id);
        let kind = match method {
            "tools/list" => {
                let fresh = msg
                    .params
                    .and_then(|p| serde_json::from_str::<ListParams<'_>>(p.get()).ok())
                    .is_none_or(|p| p.cursor.is_none());
                Kind::List { fresh }
            }
            "tools/call" => match msg.params {
                Some(params) => match self.call(text, &key, id, params, events) {
                    ClientAction::Answer(a) => return ClientAction::Answer(a),
                    other => {
                        self.track(key, id, Kind::Call);
                        return other;
                    }
                },
                None => Kind::Call,
            },
            _ => Kind::Other,
        };
        self.track(key, id, kind);
        ClientAction::Forward
    }

    fn track(&mut self, key: String, id: &RawValue, kind: Kind) {
        if self.pending.len() < MAX_PENDING {
            self.pending.insert(key, Pending { id: id.to_owned(), kind });
        }
    }

    /// Decide about a `tools/call` request: the library's per-call entry fixes it; the
    /// wrapper only forwards it as sent, forwards it repaired, or answers with the
    /// refusal or the storm guard's message.
    fn call(
        &mut self,
        line: &str,
        key: &str,
        id: &RawValue,
        params: &RawValue,
        events: &mut Vec<Event>,
    ) -> ClientAction {
        let Ok(call) = serde_json::from_str::<CallParams<'_>>(params.get()) else {
            return unreadable(line, events);
        };
        let Ok(name) = serde_json::from_str::<String>(call.name.get()) else {
            return ClientAction::Forward;
        };
        let Some(Ok(_) | Err(NameError::Ambiguous { .. })) = self.fixer.tools().map(|t| t.tool(&name)) else {
            // Not (yet) listed, or its schema did not compile here: the server decides.
            return ClientAction::Forward;
        };
        let raw = call.arguments.map(RawValue::get).filter(|a| *a != "null").unwrap_or("{}");
        // MCP arguments are an object: a string holds the model's text, which the pipeline
        // reads as it would a model's output (fences, cut-off values and all).
        let held = raw.starts_with('"').then(|| serde_json::from_str::<String>(raw).ok()).flatten();
        let fixed = self.fixer.fix(&name, held.as_deref().unwrap_or(raw), Some(key), false);
        let tool = fixed.name.clone();
        match fixed.status {
            CallStatus::Untouched | CallStatus::Repaired => {}
            CallStatus::Suppressed => {
                let message = fixed.message().unwrap_or_default().to_owned();
                events.push(Event::Storm { tool, id: id.get().to_owned(), message: message.clone() });
                return ClientAction::Answer(tool_error(id, &message));
            }
            _ => {
                let Some(refusal) = fixed.refusal() else {
                    return ClientAction::Forward;
                };
                events.push(Event::Refused { tool, id: id.get().to_owned(), refusal: refusal.clone() });
                return ClientAction::Answer(tool_error(id, &refusal.message));
            }
        }
        let Some(text) = fixed.arguments_text() else {
            return ClientAction::Forward;
        };
        let renamed = fixed.name != name;
        let untouched = held.is_none() && (fixed.status == CallStatus::Untouched || text == raw);
        if untouched && !renamed {
            return ClientAction::Forward;
        }
        match splice(line, params, &call, renamed.then_some(fixed.name.as_str()), (!untouched).then_some(text)) {
            Some(new_line) => {
                events.push(Event::Repaired {
                    tool,
                    id: id.get().to_owned(),
                    renamed_from: renamed.then(|| name.clone()),
                    decoded: held.is_some(),
                    report: fixed.report().clone(),
                });
                ClientAction::Replace(new_line)
            }
            None => ClientAction::Forward,
        }
    }

    /// Decide about a whole line from the server.
    pub(crate) fn on_server(&mut self, line: &[u8]) -> ServerStep {
        let mut step = ServerStep::default();
        let Some(msg) = std::str::from_utf8(line).ok().and_then(Envelope::parse) else {
            return step;
        };
        match (msg.method.as_deref(), msg.id) {
            (Some("notifications/tools/list_changed"), None) => {
                step.requests.push(self.own_request(None));
            }
            (None, Some(id)) => {
                let key = id_key(id);
                if let Some(fresh) = self.own.remove(&key) {
                    step.swallow = true;
                    match msg.result.map(|r| serde_json::from_str::<ListResult>(r.get())) {
                        Some(Ok(page)) => {
                            let cursor = page.next_cursor.clone();
                            self.learn(&page, fresh, &mut step.events);
                            if let Some(cursor) = cursor.filter(|c| !c.is_null()) {
                                step.requests.push(self.own_request(Some(&cursor)));
                            }
                        }
                        _ => step.events.push(Event::Warning(
                            "the server did not answer the wrapper's tools/list; the tools known stay as they were"
                                .to_owned(),
                        )),
                    }
                } else if let Some(pending) = self.pending.remove(&key) {
                    match pending.kind {
                        Kind::List { fresh } => {
                            if let Some(Ok(page)) = msg.result.map(|r| serde_json::from_str::<ListResult>(r.get())) {
                                self.learn(&page, fresh, &mut step.events);
                            }
                        }
                        Kind::Call => {
                            if let Some(result) = msg.result {
                                self.fixer.record_result(&key, result.get());
                            }
                        }
                        Kind::Other => {}
                    }
                }
            }
            _ => {}
        }
        step
    }

    fn own_request(&mut self, cursor: Option<&Value>) -> Vec<u8> {
        self.next_own += 1;
        let id = Value::String(format!("{}{}", self.own_prefix, self.next_own));
        self.own.insert(id.to_string(), cursor.is_none());
        let mut line = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/list\"");
        if let Some(c) = cursor {
            let _ = write!(line, ",\"params\":{{\"cursor\":{c}}}");
        }
        line.push_str("}\n");
        line.into_bytes()
    }

    /// Take in one page of a tool listing: a fresh listing starts over.
    fn learn(&mut self, page: &ListResult, fresh: bool, events: &mut Vec<Event>) {
        let (set, errors) = ToolSet::new_partial(&page.tools);
        if !errors.is_empty() {
            events.push(Event::Definitions(errors.iter().map(|e| e.message().to_owned()).collect()));
        }
        if fresh {
            self.listing.clear();
        }
        for tool in set.tools() {
            self.listing.retain(|t| t.name() != tool.name());
            self.listing.push(tool.clone());
        }
        match ToolSet::from_tools(self.listing.clone()) {
            Ok(set) => self.fixer.set_tools(Some(&set)),
            Err(e) => events.push(Event::Definitions(vec![e.message().to_owned()])),
        }
    }

    /// JSON-RPC errors for every request the server left unanswered, and forget them.
    pub(crate) fn abandon(&mut self, message: &str) -> Vec<Vec<u8>> {
        let error = serde_json::json!({"code": -32603, "message": message});
        self.pending
            .drain()
            .map(|(_, p)| format!("{{\"jsonrpc\":\"2.0\",\"id\":{},\"error\":{error}}}\n", p.id.get()).into_bytes())
            .collect()
    }
}

/// A line the envelope reader refused. When some reading of it is a `tools/call` and it
/// gives a member of the request or of its parameters more than once, which one the server
/// acts on depends on its JSON reader (most keep the last): it is not forwarded, but
/// answered (a call with no id, dropped). Anything else goes to the server as it came.
fn unreadable(text: &str, events: &mut Vec<Event>) -> ClientAction {
    if let Ok(batch) = serde_json::from_str::<Vec<&RawValue>>(text) {
        return batch_of(&batch, events);
    }
    let Some(top) = Members::parse(text) else { return ClientAction::Forward };
    if !is_call(&top) {
        return ClientAction::Forward;
    }
    let params: Vec<Members<'_>> = top.all("params").filter_map(|p| Members::parse(p.get())).collect();
    let Some(member) = top.repeated().or_else(|| params.iter().find_map(Members::repeated)) else {
        return ClientAction::Forward;
    };
    let message = toolfix::feedback::repeated_member(member);
    // The id a server would answer: the last one given.
    let id = top.all("id").last();
    events.push(Event::Warning(format!(
        "a tools/call giving `{member}` more than once was {} (not forwarded)",
        if id.is_some() { "answered with an error" } else { "dropped (it has no id)" }
    )));
    id.map_or(ClientAction::Drop, |id| ClientAction::Answer(tool_error(id, &message)))
}

/// Whether some reading of a message is a `tools/call` (any `method` it gives).
fn is_call(message: &Members<'_>) -> bool {
    message.all("method").any(|m| serde_json::from_str::<String>(m.get()).is_ok_and(|m| m == "tools/call"))
}

/// A JSON-RPC batch (a line holding an array; MCP dropped batches in its 2025-06-18
/// revision): relayed unread, unless it holds a `tools/call`, whose arguments would then
/// reach the server unchecked. Such a batch is not forwarded: each request in it is
/// answered with an error (in one batch answer), its notifications dropped.
fn batch_of(batch: &[&RawValue], events: &mut Vec<Event>) -> ClientAction {
    let messages: Vec<Members<'_>> = batch.iter().filter_map(|m| Members::parse(m.get())).collect();
    if !messages.iter().any(is_call) {
        return ClientAction::Forward;
    }
    let error = serde_json::json!({"code": -32600, "message": toolfix::feedback::batched_call()});
    let answers: Vec<String> = messages
        .iter()
        .filter(|m| m.all("method").next().is_some())
        .filter_map(|m| m.all("id").last())
        .map(|id| format!("{{\"jsonrpc\":\"2.0\",\"id\":{},\"error\":{error}}}", id.get()))
        .collect();
    events.push(Event::Warning(format!(
        "a batch holding a tools/call was not forwarded ({} of its requests answered with an error)",
        answers.len()
    )));
    if answers.is_empty() {
        ClientAction::Drop
    } else {
        ClientAction::Answer(format!("[{}]\n", answers.join(",")).into_bytes())
    }
}

/// A tool result that reports an error to the model: MCP's form for errors it should see.
fn tool_error(id: &RawValue, message: &str) -> Vec<u8> {
    let result = serde_json::json!({"content": [{"type": "text", "text": message}], "isError": true});
    format!("{{\"jsonrpc\":\"2.0\",\"id\":{},\"result\":{result}}}\n", id.get()).into_bytes()
}

/// `line` with the call's name and/or arguments replaced, every other byte as it came.
fn splice(
    line: &str,
    params: &RawValue,
    call: &CallParams<'_>,
    name: Option<&str>,
    arguments: Option<&str>,
) -> Option<Vec<u8>> {
    // (start, end, replacement), in line order.
    let mut edits: Vec<(usize, usize, String)> = Vec::with_capacity(2);
    if let Some(name) = name {
        let start = offset(line, call.name.get())?;
        edits.push((start, start + call.name.get().len(), Value::String(name.to_owned()).to_string()));
    }
    if let Some(arguments) = arguments {
        let text = one_line(arguments);
        if let Some(raw) = call.arguments {
            let start = offset(line, raw.get())?;
            edits.push((start, start + raw.get().len(), text));
        } else {
            // `params` is an object holding at least `name`: insert after its `{`.
            let start = offset(line, params.get())? + 1;
            edits.push((start, start, format!("\"arguments\":{text},")));
        }
    }
    edits.sort_by_key(|e| e.0);
    let mut out = Vec::with_capacity(line.len() + 64);
    let mut at = 0;
    for (start, end, text) in edits {
        out.extend_from_slice(line.get(at..start)?.as_bytes());
        out.extend_from_slice(text.as_bytes());
        at = end;
    }
    out.extend_from_slice(line.get(at..)?.as_bytes());
    if !out.ends_with(b"\n") {
        out.push(b'\n');
    }
    Some(out)
}

/// JSON text on one line: as written when it has no raw line break, else re-rendered.
fn one_line(text: &str) -> String {
    if !text.contains(['\n', '\r']) {
        return text.to_owned();
    }
    serde_json::from_str::<Value>(text).map_or_else(|_| text.replace(['\n', '\r'], " "), |v| v.to_string())
}

#[cfg(test)]
mod tests;
