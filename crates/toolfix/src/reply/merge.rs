//! Putting a reply's calls together, shared by the whole-reply and the streaming paths so
//! they agree by construction: drop a call that repeats one of another channel, give ids,
//! repair each call, and run the storm guard, in the order calls are offered.

use super::{CallStatus, FixOptions, FixedCall};
use crate::canonical::call_key;
use crate::extract::{Channel, ExtractedCall, Note, NoteKind, ReasoningCalls};
use crate::guard::{Effect, GuardConfig, StormGuard, ToolPolicy, Verdict};
use crate::pipeline::{CallOptions, CallOutcome};
use crate::{Limits, Tool, ToolSet};
use serde_json::Value;
use std::collections::HashMap;

pub(crate) struct Merge<'t> {
    tools: Option<&'t ToolSet>,
    limits: Limits,
    guard: Option<StormGuard>,
    reasoning_calls: ReasoningCalls,
    /// Mixed into fresh ids, so a call repeated in a later turn gets another id.
    salt: u64,
    keys: Vec<(String, Channel)>,
    calls: Vec<FixedCall>,
    notes: Vec<Note>,
    /// Without tools: one schema-less tool per name (salvage and the cut-off rule only).
    loose: HashMap<String, Tool>,
}

impl<'t> Merge<'t> {
    pub(crate) fn new(tools: Option<&'t ToolSet>, options: &FixOptions, history: Option<&Value>) -> Self {
        let guard = options.guard.as_ref().map(|config| {
            let config = with_effects(config.clone(), tools);
            match history {
                Some(h) => StormGuard::from_history(config, h),
                None => StormGuard::new(config),
            }
        });
        Merge {
            tools,
            limits: options.limits,
            guard,
            reasoning_calls: options.extract.reasoning_calls,
            salt: history.and_then(Value::as_array).map_or(0, |m| m.len() as u64),
            keys: Vec::new(),
            calls: Vec::new(),
            notes: Vec::new(),
            loose: HashMap::new(),
        }
    }

    /// Offer the calls found in reasoning, once every other channel is known: they are
    /// used as the options say (by default only when no other channel had a call).
    pub(crate) fn offer_reasoning(&mut self, calls: Vec<ExtractedCall<'_>>, hit_token_limit: bool) -> Vec<FixedCall> {
        let use_them = match self.reasoning_calls {
            ReasoningCalls::WhenNoOther => self.calls.is_empty(),
            ReasoningCalls::Always => true,
            _ => false,
        };
        if !use_them {
            if let Some(first) = calls.first() {
                self.notes.push(Note {
                    kind: NoteKind::ReasoningCallsIgnored,
                    span: first.span,
                    name: Some(first.name.to_string()),
                });
            }
            return Vec::new();
        }
        calls.into_iter().filter_map(|c| self.offer(c, hit_token_limit).cloned()).collect()
    }

    pub(crate) fn finish(self) -> (Vec<FixedCall>, Vec<Note>) {
        (self.calls, self.notes)
    }

    /// Offer the next call, in reply order; `at_cut` when the output may have been cut by
    /// the token limit inside it. Returns the call unless it repeats one of another channel.
    pub(crate) fn offer(&mut self, call: ExtractedCall<'_>, at_cut: bool) -> Option<&FixedCall> {
        let key = call_key(&call.name, &call.arguments);
        if self.keys.iter().any(|(k, ch)| *k == key && *ch != call.channel) {
            self.notes.push(Note { kind: NoteKind::Duplicate, span: call.span, name: Some(call.name.to_string()) });
            return None;
        }
        self.keys.push((key, call.channel));
        let id = match call.id.as_deref() {
            Some(id) if !is_fresh_id(id) => id.to_owned(),
            _ => self.fresh_id(&call.name, &call.arguments),
        };
        let outcome = self.repair(&call.name, &call.arguments, at_cut);
        let mut status = match outcome.outcome() {
            crate::Outcome::Untouched => CallStatus::Untouched,
            crate::Outcome::Repaired => CallStatus::Repaired,
            _ => CallStatus::Refused,
        };
        let mut suppressed = None;
        if let (Some(guard), Some(text)) = (self.guard.as_mut(), outcome.arguments_text())
            && let Verdict::Suppress(s) = guard.check_with_id(outcome.name(), text, Some(&id))
        {
            status = CallStatus::Suppressed;
            suppressed = Some(s);
        }
        self.calls.push(FixedCall {
            id,
            name: outcome.name().to_owned(),
            written_name: call.name.into_owned(),
            format: call.format,
            channel: call.channel,
            status,
            outcome,
            suppressed,
        });
        self.calls.last()
    }

    fn repair(&mut self, name: &str, arguments: &str, at_cut: bool) -> CallOutcome {
        // The token limit cut the output inside this call: unclosed counts as truncated.
        let options = CallOptions::from(self.limits).with_hit_token_limit(at_cut);
        if let Some(tools) = self.tools {
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
    fn fresh_id(&self, name: &str, arguments: &str) -> String {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ self.salt.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let ordinal = self.calls.len() as u64;
        for b in name.bytes().chain([0]).chain(arguments.bytes()).chain(ordinal.to_le_bytes()) {
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

/// The guard settings with an effect for every tool that has no policy of its own: a tool
/// not declared read-only may change the world.
fn with_effects(mut config: GuardConfig, tools: Option<&ToolSet>) -> GuardConfig {
    for tool in tools.map(ToolSet::tools).unwrap_or_default() {
        if !config.tools.contains_key(tool.name()) {
            let effect = if tool.is_read_only() { Effect::ReadOnly } else { Effect::Mutating };
            config.tools.insert(tool.name().to_owned(), ToolPolicy::new(effect));
        }
    }
    config
}
