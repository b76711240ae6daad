//! The per-call entry, [`CallFixer`]: for front ends that meet calls one at a time (the MCP
//! wrapper's `tools/call`, an agent's dispatcher), with the semantics of a whole reply —
//! the name resolved, the arguments repaired, the tool's side effects from the
//! [`ToolSet`], the cut-off rule, an id, and the storm guard over the session's calls.
//! [`fix_reply`](super::fix_reply) and [`ReplyStream`](super::ReplyStream) are built on it.
//!
//! ```
//! use serde_json::json;
//! use toolfix::{CallFixer, CallStatus, FixOptions, ToolSet};
//!
//! let tools = ToolSet::new(&[json!({"name": "create_ticket", "parameters": {"type": "object",
//!     "properties": {"title": {"type": "string"}}, "required": ["title"]}})]).unwrap();
//! let mut fixer = CallFixer::new(Some(&tools), None, &FixOptions::default());
//! let call = fixer.fix("createTicket", r#"{"title": "a", "title": "b"}"#, Some("7"), false);
//! assert_eq!(call.status, CallStatus::Refused); // which title? never guessed
//! assert_eq!(call.id, "7");
//! for _ in 0..2 {
//!     let ok = fixer.fix("create_ticket", r#"{"title": "a"}"#, None, false);
//!     assert_eq!(ok.status, CallStatus::Untouched);
//! }
//! let third = fixer.fix("create_ticket", r#"{"title":"a"}"#, None, false);
//! assert_eq!(third.status, CallStatus::Suppressed); // the same call a third time
//! ```

use super::{CallStatus, FixOptions, FixedCall};
use crate::canonical::call_key;
use crate::extract::{Channel, Format, Intent, Signal};
use crate::guard::{StormGuard, Verdict};
use crate::limits::Limits;
use crate::pipeline::{CallOptions, CallOutcome};
use crate::report::Outcome;
use crate::salvage::TextFix;
use crate::schema::Effect;
use crate::schema::{Tool, ToolSet};
use serde_json::Value;
use std::borrow::Cow;
use std::cell::OnceCell;
use std::collections::HashMap;

/// Fixes calls one at a time, as a reply would: see the [module](self) documentation.
#[derive(Debug)]
pub struct CallFixer {
    tools: Option<ToolSet>,
    limits: Limits,
    guard: Option<StormGuard>,
    /// Mixed into fresh ids, so a call repeated in a later turn gets another id.
    salt: u64,
    /// Calls given an id so far (each fresh id also hashes its ordinal).
    issued: u64,
    /// Without tools: one schema-less tool per name (salvage and the cut-off rule only).
    loose: HashMap<String, Tool>,
}

/// A call found and repaired, not yet given its id nor shown to the storm guard (the
/// whole-reply layer drops repeats between the two).
#[derive(Debug)]
pub(crate) struct Prepared<'a> {
    pub(crate) outcome: CallOutcome,
    pub(crate) written_name: Cow<'a, str>,
    pub(crate) written_arguments: Cow<'a, str>,
    pub(crate) id: Option<Cow<'a, str>>,
    pub(crate) format: Format,
    pub(crate) channel: Channel,
    pub(crate) envelope: Vec<TextFix>,
    /// What the markup was meant as (a call written in text), and the signals read.
    pub(crate) intent: Intent,
    pub(crate) signals: Vec<Signal>,
    /// Where the call was found in its channel.
    pub(crate) span: crate::span::Span,
    /// The canonical key of a refused call (its arguments as written), made when first
    /// asked for: see [`Prepared::key`].
    pub(crate) written_key: OnceCell<String>,
}

impl Prepared<'_> {
    /// The canonical key: the accepted call's (made from its value), or the arguments as
    /// written for a refused one. Made only when something compares it (a repeat across
    /// channels, the storm guard with calls in its window, a fresh id), once.
    pub(crate) fn key(&self) -> &str {
        match self.outcome.canonical_key() {
            Some(k) => k,
            None => self.written_key.get_or_init(|| call_key(self.outcome.name(), &self.written_arguments)),
        }
    }
}

impl CallFixer {
    /// A fixer for the tools offered (none: salvage and the cut-off rule only), the
    /// conversation so far (`messages`, for the storm guard: no state is kept between
    /// requests) and the options (limits, the guard's settings).
    #[must_use]
    pub fn new(tools: Option<&ToolSet>, history: Option<&Value>, options: &FixOptions) -> CallFixer {
        let effect_of = |name: &str| tools.and_then(|t| t.tool(name).ok()).map_or(Effect::default(), Tool::effect);
        let guard = options.guard.as_ref().map(|config| match history {
            Some(h) => StormGuard::from_history_with(config.clone(), h, effect_of),
            None => StormGuard::new(config.clone()),
        });
        CallFixer {
            tools: tools.cloned(),
            limits: options.limits,
            guard,
            salt: history.and_then(Value::as_array).map_or(0, |m| m.len() as u64),
            issued: 0,
            loose: HashMap::new(),
        }
    }

    /// Fix one call: `name` and `arguments` as the model wrote them, its `id` when it has
    /// one (kept; otherwise a fresh one, unique in the conversation and the same for the
    /// same request), and `at_cut` when the model's output may have been cut by the token
    /// limit inside this call (a tool that may change things then gets no unclosed call).
    pub fn fix(&mut self, name: &str, arguments: &str, id: Option<&str>, at_cut: bool) -> FixedCall {
        let (name, arguments, id) = (Cow::Borrowed(name), Cow::Borrowed(arguments), id.map(Cow::Borrowed));
        let prepared = self.prepare(name, arguments, id, at_cut, Format::Native, Channel::ToolCalls);
        self.admit(prepared, false)
    }

    /// Tell the storm guard the result of the call with this id: repeats only count while
    /// they get the same result (polling a status that changes is not a storm).
    pub fn record_result(&mut self, id: &str, result: &str) {
        if let Some(guard) = self.guard.as_mut() {
            guard.record_result(id, result);
        }
    }

    /// Use another tool set from now on (an MCP server's listing changed); the storm
    /// guard's window is kept.
    pub fn set_tools(&mut self, tools: Option<&ToolSet>) {
        self.tools = tools.cloned();
    }

    /// The tool set in use.
    #[must_use]
    pub fn tools(&self) -> Option<&ToolSet> {
        self.tools.as_ref()
    }

    /// Repair a call (the pipeline, with the cut-off rule), not yet admitted: what the
    /// model wrote is kept as given (copied only when the call is admitted, and its
    /// arguments only when they are not the accepted text).
    pub(crate) fn prepare<'a>(
        &mut self,
        name: Cow<'a, str>,
        arguments: Cow<'a, str>,
        id: Option<Cow<'a, str>>,
        at_cut: bool,
        format: Format,
        channel: Channel,
    ) -> Prepared<'a> {
        let outcome = self.repair(&name, &arguments, at_cut);
        Prepared {
            outcome,
            written_name: name,
            written_arguments: arguments,
            id,
            format,
            channel,
            envelope: Vec::new(),
            intent: Intent::Call,
            signals: Vec::new(),
            span: crate::span::Span::default(),
            written_key: OnceCell::new(),
        }
    }

    /// Admit a prepared call: its id, its status (a call moved out of a reply's text is
    /// repaired: its bytes moved, or its envelope was fixed), and the storm guard's verdict.
    /// `last`: no call is admitted after this one (the fixer is dropped next), so the
    /// storm guard need not remember it.
    pub(crate) fn admit(&mut self, prepared: Prepared<'_>, last: bool) -> FixedCall {
        // The id given is kept (moved, not copied) unless it is one the extractor made up.
        let made = prepared
            .id
            .as_deref()
            .is_none_or(is_fresh_id)
            .then(|| self.fresh_id(prepared.outcome.name(), prepared.key()));
        let Prepared {
            id: given,
            mut outcome,
            written_name,
            written_arguments,
            format,
            channel,
            envelope,
            intent,
            signals,
            ..
        } = prepared;
        let id = made.or_else(|| given.map(Cow::into_owned)).unwrap_or_default();
        self.issued += 1;
        let mut status = match outcome.outcome() {
            Outcome::Untouched if channel == Channel::ToolCalls => CallStatus::Untouched,
            Outcome::Untouched | Outcome::Repaired => CallStatus::Repaired,
            _ => CallStatus::Refused,
        };
        if channel != Channel::ToolCalls {
            let report = outcome.report_mut();
            report.envelope_fixes = envelope;
            if report.outcome == Outcome::Untouched {
                report.outcome = Outcome::Repaired;
            }
        }
        let effect =
            self.tools.as_ref().and_then(|t| t.tool(outcome.name()).ok()).map_or(Effect::default(), Tool::effect);
        // Markup that reads as shown as much as made never runs a tool that may change things.
        if intent == Intent::Uncertain && status.is_usable() && effect.changes_things() {
            let refusal = crate::feedback::uncertain_call(outcome.name(), &signals);
            outcome = outcome.into_refused(refusal);
            status = CallStatus::Refused;
        }
        let mut suppressed = None;
        if status.is_usable()
            && let Some(guard) = self.guard.as_mut()
        {
            let key = || match outcome.canonical_key() {
                Some(k) => k.to_owned(),
                None => call_key(outcome.name(), &written_arguments),
            };
            let verdict = if last {
                guard.check_last(outcome.name(), effect, key, Some(&id))
            } else {
                guard.check_key(outcome.name(), effect, key(), Some(&id))
            };
            if let Verdict::Suppress(s) = verdict {
                status = CallStatus::Suppressed;
                suppressed = Some(s);
            }
        }
        // Arguments accepted as written are not kept twice.
        let written_arguments =
            (outcome.arguments_text() != Some(&*written_arguments)).then(|| written_arguments.into_owned());
        FixedCall {
            id,
            name: outcome.name().to_owned(),
            written_name: written_name.into_owned(),
            format,
            channel,
            status,
            intent,
            signals,
            written_arguments,
            outcome,
            suppressed,
        }
    }

    fn repair(&mut self, name: &str, arguments: &str, at_cut: bool) -> CallOutcome {
        // The token limit cut the output inside this call: unclosed counts as truncated.
        // The reply's callers mostly pass accepted text on: its value is made when asked.
        let options = CallOptions::from(self.limits).with_hit_token_limit(at_cut).with_value_on_demand();
        if let Some(tools) = &self.tools {
            return tools.repair_call_with(name, arguments, &options);
        }
        if !self.loose.contains_key(name) {
            // A schema that accepts anything: salvage, and the cut-off rule, still apply.
            if let Ok(tool) = Tool::from_parts(name, "", serde_json::json!({})) {
                self.loose.insert(name.to_owned(), tool);
            }
        }
        match self.loose.get(name) {
            Some(tool) => tool.repair_call_with(arguments, &options),
            None => ToolSet::default().repair_call_with(name, arguments, &options),
        }
    }

    /// A fresh id: deterministic for the same request (replicas agree, streaming and
    /// whole-reply agree), different for the same call in a later turn.
    fn fresh_id(&self, name: &str, key: &str) -> String {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ self.salt.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        for b in name.bytes().chain([0]).chain(key.bytes()).chain(self.issued.to_le_bytes()) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        format!("call_{h:016x}")
    }
}

/// True for an id the extractor made up (`call_` and 16 hex digits), which the reply gets
/// anew; ids the model or the server wrote are kept.
fn is_fresh_id(id: &str) -> bool {
    id.strip_prefix("call_").is_some_and(|h| h.len() == 16 && h.bytes().all(|b| b.is_ascii_hexdigit()))
}
