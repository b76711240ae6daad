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

    /// The `x_toolfix` object as JSON text (written without building a value).
    pub(crate) fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| "null".to_owned())
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

/// `n` in decimal, appended.
fn push_number(out: &mut String, n: usize) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut n = n;
    loop {
        at -= 1;
        // A digit: `n % 10` is below 10.
        if let (Some(d), Ok(v)) = (digits.get_mut(at), u8::try_from(n % 10)) {
            *d = b'0' + v;
        }
        n /= 10;
        if n == 0 || at == 0 {
            break;
        }
    }
    out.extend(digits.get(at..).unwrap_or_default().iter().map(|&d| char::from(d)));
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
    use super::push_number;

    #[test]
    fn numbers_are_written_as_format_writes_them() {
        for n in [0, 1, 9, 10, 99, 100, 12_345, usize::MAX] {
            let mut s = String::new();
            push_number(&mut s, n);
            assert_eq!(s, n.to_string());
        }
    }
}
