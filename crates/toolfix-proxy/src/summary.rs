//! What the proxy did to one request, said three ways: the `x_toolfix` object in the
//! body, the short `x-toolfix` header, and the metrics.

use crate::adapter::history::Change;
use crate::metrics::Metrics;
use axum::http::HeaderValue;
use serde::Serialize;
use serde_json::{Value, json};
use toolfix::extract::Channel;
use toolfix::{CallStatus, FixedCall, FixedReply};

/// Why the proxy asked the upstream (again).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum AttemptKind {
    /// The client's request.
    Initial,
    /// The same request with a raised `max_tokens`, after a cut-off call.
    RetryLonger,
    /// A continuation of the cut-off reply.
    Continued,
    /// A corrective re-prompt after a refused or suppressed call.
    Reprompt,
}

/// One request the proxy sent upstream and what came of it.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Attempt {
    pub(crate) kind: AttemptKind,
    /// The reply's stop reason, as the upstream gave it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) finish_reason: Option<String>,
    /// `no_calls`, `usable`, `refused` over the reply's calls.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) outcome: Option<toolfix::ReplyOutcome>,
    /// Why the attempt failed (upstream error), when it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) error: Option<String>,
    /// The upstream's message, with detail on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) original: Option<Value>,
}

/// The outcome of a call in the answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Label {
    /// Valid as sent.
    Untouched,
    /// Moved out of the text and/or its arguments repaired.
    Repaired,
    /// Usable, from a later attempt (length retry, continuation or re-prompt).
    Reprompted,
    /// Still refused when the attempts ran out (or dropped by a later attempt).
    GaveUp,
    /// A storm repeat still there when the attempts ran out.
    Suppressed,
}

impl Label {
    /// The label of `call` in an answer; `later`: the answer is a later attempt's.
    pub(crate) fn of(call: &FixedCall, later: bool) -> Label {
        match call.status {
            CallStatus::Suppressed => Label::Suppressed,
            s if !s.is_usable() => Label::GaveUp,
            _ if later => Label::Reprompted,
            CallStatus::Untouched if call.channel == Channel::ToolCalls && call.written_name == call.name => {
                Label::Untouched
            }
            _ => Label::Repaired,
        }
    }

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Label::Untouched => "untouched",
            Label::Repaired => "repaired",
            Label::Reprompted => "reprompted",
            Label::GaveUp => "gave_up",
            Label::Suppressed => "suppressed",
        }
    }
}

/// Counts per outcome, for the header.
#[derive(Debug, Default)]
pub(crate) struct Counts {
    untouched: usize,
    repaired: usize,
    reprompted: usize,
    gave_up: usize,
    suppressed: usize,
}

impl Counts {
    fn add(&mut self, label: Label) {
        match label {
            Label::Untouched => self.untouched += 1,
            Label::Repaired => self.repaired += 1,
            Label::Reprompted => self.reprompted += 1,
            Label::GaveUp => self.gave_up += 1,
            Label::Suppressed => self.suppressed += 1,
        }
    }
}

/// One call's line in the report.
#[derive(Debug, Serialize)]
struct CallLine {
    choice: usize,
    id: String,
    name: String,
    outcome: Label,
    channel: &'static str,
    format: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    written_name: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    repairs: Vec<&'static str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    text_fixes: Vec<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    intent: Option<toolfix::extract::Intent>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    signals: Vec<toolfix::extract::Signal>,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<String>,
}

/// The header of an answer whose only calls are `n` untouched ones (index `n`), with one
/// attempt and no history change: what [`Summary::short`] writes for it (a test holds
/// them equal).
static UNTOUCHED_HEADERS: [HeaderValue; 5] = [
    HeaderValue::from_static("untouched=0 repaired=0 reprompted=0 gave_up=0 suppressed=0 attempts=1 history=0"),
    HeaderValue::from_static("untouched=1 repaired=0 reprompted=0 gave_up=0 suppressed=0 attempts=1 history=0"),
    HeaderValue::from_static("untouched=2 repaired=0 reprompted=0 gave_up=0 suppressed=0 attempts=1 history=0"),
    HeaderValue::from_static("untouched=3 repaired=0 reprompted=0 gave_up=0 suppressed=0 attempts=1 history=0"),
    HeaderValue::from_static("untouched=4 repaired=0 reprompted=0 gave_up=0 suppressed=0 attempts=1 history=0"),
];

/// Everything reported about one answered request.
#[derive(Debug, Default)]
pub(crate) struct Summary {
    pub(crate) attempts: Vec<Attempt>,
    pub(crate) history: Vec<Change>,
    /// Replies too large to fix, passed through.
    pub(crate) unfixed: Vec<String>,
    /// The streamed content turned out to be reasoning (it was sent as content).
    pub(crate) content_was_reasoning: bool,
    calls: Vec<CallLine>,
    /// Call markup the model only showed (left in the text), with the signals that said so.
    shown: Vec<Value>,
    counts: Counts,
}

impl Summary {
    pub(crate) fn new(history: Vec<Change>) -> Self {
        Summary { history, ..Summary::default() }
    }

    /// Record the calls of the answer's reply `choice`, and count them in the metrics.
    pub(crate) fn calls(
        &mut self,
        api: &str,
        choice: usize,
        fixed: &FixedReply,
        later: bool,
        metrics: &Metrics,
        model: &str,
    ) {
        for call in &fixed.calls {
            self.call(api, choice, call, Label::of(call, later), metrics, model);
        }
        for n in fixed.notes.iter().filter(|n| n.kind == toolfix::extract::NoteKind::ShownCall) {
            self.shown.push(json!({"choice": choice, "name": n.name, "signals": n.signals}));
        }
    }

    /// Count the calls of the answer's reply in the header's counts and the metrics only:
    /// for an answer that goes out as the upstream's bytes, whose body carries no report
    /// (what [`Summary::calls`] records besides is written only into a report).
    pub(crate) fn count_calls(&mut self, api: &str, fixed: &FixedReply, later: bool, metrics: &Metrics, model: &str) {
        for call in &fixed.calls {
            self.count(api, call, Label::of(call, later), metrics, model);
        }
    }

    /// Count one call with its label, in the header's counts and the metrics.
    fn count(&mut self, api: &str, call: &FixedCall, label: Label, metrics: &Metrics, model: &str) {
        self.counts.add(label);
        metrics.tool_call(api, label.as_str(), &call.name, model);
        let report = call.report();
        for r in &report.repairs {
            metrics.repair(r.kind.as_str());
        }
        for f in &report.text_fixes {
            metrics.repair(f.kind.as_str());
        }
        if call.channel != Channel::ToolCalls {
            metrics.repair(if call.channel == Channel::Reasoning {
                "moved_from_reasoning"
            } else {
                "moved_from_content"
            });
        }
    }

    /// Record one call with its label.
    pub(crate) fn call(
        &mut self,
        api: &str,
        choice: usize,
        call: &FixedCall,
        label: Label,
        metrics: &Metrics,
        model: &str,
    ) {
        self.count(api, call, label, metrics, model);
        let report = call.report();
        // The line is written only when the report is (`to_value`); the header needs none.
        let line = CallLine {
            choice,
            id: call.id.clone(),
            name: call.name.clone(),
            outcome: label,
            channel: channel_name(call.channel),
            format: call.format.as_str(),
            written_name: (call.written_name != call.name).then(|| call.written_name.clone()),
            repairs: report.repairs.iter().map(|r| r.kind.as_str()).collect(),
            text_fixes: report.text_fixes.iter().map(|f| f.kind.as_str()).collect(),
            intent: (call.intent != toolfix::extract::Intent::Call).then_some(call.intent),
            signals: call.signals.clone(),
            message: call.message().map(str::to_owned),
        };
        self.calls.push(line);
    }

    /// True when some call is labelled gave up.
    pub(crate) fn gave_up(&self) -> bool {
        self.counts.gave_up > 0
    }

    /// Count the history changes in the metrics.
    pub(crate) fn record_history(&self, metrics: &Metrics) {
        for c in &self.history {
            metrics.repair(&format!("history_{}", c.kind));
        }
    }

    /// The `x_toolfix` object.
    pub(crate) fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// The `x_toolfix` object as JSON text, the bytes `serde_json::to_string` writes of it
    /// (written by hand: serde's map and enum machinery was most of its cost; the parts
    /// seldom there go through serde_json).
    pub(crate) fn to_json(&self) -> String {
        let mut out = Vec::with_capacity(256 + 160 * self.calls.len());
        out.extend_from_slice(b"{\"summary\":");
        push_json_str(&mut out, &self.short());
        out.extend_from_slice(b",\"calls\":[");
        for (i, call) in self.calls.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            call.write_json(&mut out);
        }
        out.extend_from_slice(b"],\"attempts\":[");
        for (i, attempt) in self.attempts.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            attempt.write_json(&mut out);
        }
        out.push(b']');
        if !self.history.is_empty() {
            out.extend_from_slice(b",\"history\":");
            push_serialized(&mut out, &self.history);
        }
        if !self.unfixed.is_empty() {
            out.extend_from_slice(b",\"unfixed\":");
            push_serialized(&mut out, &self.unfixed);
        }
        if self.content_was_reasoning {
            out.extend_from_slice(b",\"content_was_reasoning\":true");
        }
        if !self.shown.is_empty() {
            out.extend_from_slice(b",\"shown_calls\":");
            push_serialized(&mut out, &self.shown);
        }
        out.push(b'}');
        String::from_utf8(out).unwrap_or_else(|_| "null".to_owned())
    }

    /// The one-line summary (also the `x-toolfix` header).
    pub(crate) fn short(&self) -> String {
        let c = &self.counts;
        let fields = [
            ("untouched=", c.untouched),
            (" repaired=", c.repaired),
            (" reprompted=", c.reprompted),
            (" gave_up=", c.gave_up),
            (" suppressed=", c.suppressed),
            (" attempts=", self.attempts.len().max(1)),
            (" history=", self.history.len()),
        ];
        // Written by hand: on every answer, `format!` was a good part of the report's cost.
        let mut out = String::with_capacity(96);
        for (name, n) in fields {
            out.push_str(name);
            push_number(&mut out, n);
        }
        out
    }

    pub(crate) fn header(&self) -> HeaderValue {
        // The usual answer (every call untouched, one attempt, no history change) takes a
        // value made once: no text written, checked and copied per answer.
        let c = &self.counts;
        if c.repaired + c.reprompted + c.gave_up + c.suppressed == 0
            && self.attempts.len() <= 1
            && self.history.is_empty()
            && let Some(value) = UNTOUCHED_HEADERS.get(c.untouched)
        {
            return value.clone();
        }
        HeaderValue::from_str(&self.short()).unwrap_or(HeaderValue::from_static("ok"))
    }
}

impl Serialize for Summary {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap as _;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("summary", &self.short())?;
        map.serialize_entry("calls", &self.calls)?;
        map.serialize_entry("attempts", &self.attempts)?;
        if !self.history.is_empty() {
            map.serialize_entry("history", &self.history)?;
        }
        if !self.unfixed.is_empty() {
            map.serialize_entry("unfixed", &self.unfixed)?;
        }
        if self.content_was_reasoning {
            map.serialize_entry("content_was_reasoning", &true)?;
        }
        if !self.shown.is_empty() {
            map.serialize_entry("shown_calls", &self.shown)?;
        }
        map.end()
    }
}

impl CallLine {
    /// `serde_json::to_writer`'s bytes of the line.
    fn write_json(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"{\"choice\":");
        push_number_bytes(out, self.choice);
        out.extend_from_slice(b",\"id\":");
        push_json_str(out, &self.id);
        out.extend_from_slice(b",\"name\":");
        push_json_str(out, &self.name);
        out.extend_from_slice(b",\"outcome\":");
        push_json_str(out, self.outcome.as_str());
        out.extend_from_slice(b",\"channel\":");
        push_json_str(out, self.channel);
        out.extend_from_slice(b",\"format\":");
        push_json_str(out, self.format);
        if let Some(w) = &self.written_name {
            out.extend_from_slice(b",\"written_name\":");
            push_json_str(out, w);
        }
        for (key, list) in [(&b",\"repairs\":["[..], &self.repairs), (&b",\"text_fixes\":["[..], &self.text_fixes)] {
            if !list.is_empty() {
                out.extend_from_slice(key);
                for (i, item) in list.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    push_json_str(out, item);
                }
                out.push(b']');
            }
        }
        if let Some(intent) = &self.intent {
            out.extend_from_slice(b",\"intent\":");
            push_serialized(out, intent);
        }
        if !self.signals.is_empty() {
            out.extend_from_slice(b",\"signals\":");
            push_serialized(out, &self.signals);
        }
        if let Some(m) = &self.message {
            out.extend_from_slice(b",\"message\":");
            push_json_str(out, m);
        }
        out.push(b'}');
    }
}

impl Attempt {
    /// `serde_json::to_writer`'s bytes of the attempt.
    fn write_json(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"{\"kind\":");
        push_json_str(out, self.kind.as_str());
        if let Some(f) = &self.finish_reason {
            out.extend_from_slice(b",\"finish_reason\":");
            push_json_str(out, f);
        }
        if let Some(o) = &self.outcome {
            out.extend_from_slice(b",\"outcome\":");
            match o {
                toolfix::ReplyOutcome::NoCalls => push_json_str(out, "no_calls"),
                toolfix::ReplyOutcome::Usable => push_json_str(out, "usable"),
                toolfix::ReplyOutcome::Refused => push_json_str(out, "refused"),
                other => push_serialized(out, other),
            }
        }
        if let Some(e) = &self.error {
            out.extend_from_slice(b",\"error\":");
            push_json_str(out, e);
        }
        if let Some(o) = &self.original {
            out.extend_from_slice(b",\"original\":");
            push_serialized(out, o);
        }
        out.push(b'}');
    }
}

impl AttemptKind {
    fn as_str(self) -> &'static str {
        match self {
            AttemptKind::Initial => "initial",
            AttemptKind::RetryLonger => "retry_longer",
            AttemptKind::Continued => "continued",
            AttemptKind::Reprompt => "reprompt",
        }
    }
}

/// `s` as a JSON string, the bytes serde_json writes: it escapes only `"`, `\` and the
/// control characters, so a string without them is written as it is.
pub(crate) fn push_json_str(out: &mut Vec<u8>, s: &str) {
    // Vectorised: `memchr2` for the two, a running minimum for the control characters.
    if memchr::memchr2(b'"', b'\\', s.as_bytes()).is_none() && !crate::adapter::view::has_control(s.as_bytes()) {
        out.reserve(s.len() + 2);
        out.push(b'"');
        out.extend_from_slice(s.as_bytes());
        out.push(b'"');
    } else {
        push_serialized(out, s);
    }
}

/// `value` as serde_json writes it (into a `Vec`: the types written here do not fail;
/// `null` if one did).
fn push_serialized<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) {
    let at = out.len();
    if serde_json::to_writer(&mut *out, value).is_err() {
        out.truncate(at);
        out.extend_from_slice(b"null");
    }
}

/// `n` in decimal, appended.
fn push_number(out: &mut String, n: usize) {
    out.push_str(itoa::Buffer::new().format(n));
}

/// `n` in decimal, appended.
fn push_number_bytes(out: &mut Vec<u8>, n: usize) {
    out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
}

fn channel_name(channel: Channel) -> &'static str {
    match channel {
        Channel::Content => "content",
        Channel::Reasoning => "reasoning",
        _ => "tool_calls",
    }
}

#[cfg(test)]
mod tests {
    use super::{Attempt, AttemptKind, Summary, push_number};
    use crate::adapter::history::Change;
    use crate::metrics::Metrics;
    use serde_json::json;
    use toolfix::{FixOptions, NativeCall, Reply, ToolSet};

    /// The header made once for an untouched answer is the one `short` writes, for every
    /// count the table holds and the cases around it.
    #[test]
    fn an_untouched_answers_header_is_what_short_writes() {
        for untouched in 0..8 {
            for attempts in 0..3 {
                for (repaired, history) in [(0, 0), (1, 0), (0, 1)] {
                    let mut summary = Summary::default();
                    summary.counts.untouched = untouched;
                    summary.counts.repaired = repaired;
                    for _ in 0..attempts {
                        summary.attempts.push(Attempt {
                            kind: AttemptKind::Initial,
                            finish_reason: None,
                            outcome: None,
                            error: None,
                            original: None,
                        });
                    }
                    for _ in 0..history {
                        summary.history.push(Change { kind: "k", message: 0, call: None, tool_call_id: None });
                    }
                    assert_eq!(
                        summary.header(),
                        summary.short().as_str(),
                        "{untouched} {attempts} {repaired} {history}"
                    );
                }
            }
        }
    }

    /// The report written by hand is the bytes serde_json writes of it: calls untouched,
    /// repaired, renamed, moved out of the text, given up (with a message), shown only;
    /// every kind of attempt, with an error and an original; history changes, unfixed
    /// replies, shown calls; strings that need escapes.
    #[test]
    fn the_report_is_written_as_serde_json_writes_it() {
        let tools = ToolSet::new(&[json!({"name": "get_weather", "parameters": {"type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}, "required": ["city"]}})])
        .unwrap();
        let options = FixOptions::default();
        let metrics = Metrics::new();
        let natives = [
            NativeCall::new("get_weather", "{\"city\": \"Paris\", \"days\": 3}").with_id("call_1"),
            NativeCall::new("get_weather", "{\"city\": \"Paris\", \"days\": \"3\"}").with_id("call_\"2\"\n"),
            NativeCall::new("Get-Weather", "{\"city\": \"Rome\"}").with_id("c\"3\"\n"),
            NativeCall::new("get_weather", "{\"days\": 2}").with_id("c4"),
        ];
        let replies = [
            Reply::new("Sure. \u{e9}").with_native_calls(&natives),
            Reply::new(
                "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\", \"days\": \"1\"}}</tool_call>",
            ),
            Reply::new(
                "You could call it like this:\n```json\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}\n```",
            ),
            Reply::new("no calls"),
        ];
        let mut summary = Summary::new(vec![Change {
            kind: "arguments_salvaged",
            message: 2,
            call: Some(0),
            tool_call_id: Some("a\tb".to_owned()),
        }]);
        for later in [false, true] {
            for (i, reply) in replies.iter().enumerate() {
                let fixed = toolfix::fix_reply(reply, Some(&tools), None, &options).unwrap();
                summary.calls("chat", i, &fixed, later, &metrics, "m");
                summary.attempts.push(Attempt {
                    kind: [
                        AttemptKind::Initial,
                        AttemptKind::RetryLonger,
                        AttemptKind::Continued,
                        AttemptKind::Reprompt,
                    ][i],
                    finish_reason: (i % 2 == 0).then(|| "tool_calls".to_owned()),
                    outcome: Some(fixed.outcome()),
                    error: (i == 3).then(|| "upstream \"said\" no\u{1}".to_owned()),
                    original: (i == 2).then(|| json!({"content": "x", "n": 1.5e300, "z": [null, true]})),
                });
            }
        }
        assert!(summary.calls.len() >= 6, "{}", summary.calls.len());
        assert!(summary.gave_up());
        assert!(summary.calls.iter().any(|c| c.id.contains('"')));
        summary.shown.push(json!({"choice": 1, "name": "get_weather", "signals": ["example"]}));
        let check = |s: &Summary| assert_eq!(s.to_json(), serde_json::to_string(s).unwrap());
        check(&summary);
        summary.unfixed = vec!["reply 1: too large".to_owned()];
        summary.content_was_reasoning = true;
        check(&summary);
        check(&Summary::default());
        check(&Summary::new(Vec::new()));
    }

    #[test]
    fn numbers_are_written_as_format_writes_them() {
        for n in [0, 1, 9, 10, 99, 100, 12_345, usize::MAX] {
            let mut s = String::new();
            push_number(&mut s, n);
            assert_eq!(s, n.to_string());
        }
    }
}
