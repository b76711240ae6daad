//! The storm guard: stop a model that calls the same tool with the same arguments again
//! and again.
//!
//! A sliding window of recent calls (default 6), keyed by tool name and canonical
//! arguments (key order and whitespace ignored). A call is a storm when, with it, the same
//! key appears `threshold` times (default 3) in the window. A call to a tool that changes
//! the world (any [`Effect`] but read-only; a tool declared nothing is mutating) clears the
//! read-only calls before it: reading again after a write is fine. Exempt tools never trip
//! the guard. When results are known, repeats only count while they got the same result:
//! polling a status that changes is not a storm.
//!
//! The proxy keeps no state: [`StormGuard::from_history`] rebuilds the window from the
//! conversation (assistant `tool_calls` and `tool` results) that every request carries.
//!
//! ```
//! use toolfix::guard::{GuardConfig, StormGuard, Verdict};
//!
//! let mut guard = StormGuard::new(GuardConfig::default());
//! assert!(matches!(guard.check("ls", r#"{"path": "."}"#), Verdict::Allow));
//! assert!(matches!(guard.check("ls", r#"{ "path":"." }"#), Verdict::Allow));
//! match guard.check("ls", r#"{"path": "."}"#) {
//!     Verdict::Suppress(s) => assert!(s.message.contains("`ls`")),
//!     Verdict::Allow => unreachable!(),
//! }
//! ```

use crate::canonical::call_key;
use crate::schema::Effect;
use std::collections::{HashMap, HashSet, VecDeque};

/// Per-tool settings.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ToolPolicy {
    /// What the tool does, when the guard should not take it from the tool's declaration
    /// (`None`: the tool set's [`Effect`], and [`Effect::Mutating`] for a tool it does not
    /// know).
    pub effect: Option<Effect>,
    /// Never trips the guard (`sleep`, `wait_for_job`, ...).
    pub exempt: bool,
    /// This tool's window, when not the default.
    pub window: Option<usize>,
    /// This tool's threshold, when not the default.
    pub threshold: Option<usize>,
}

impl ToolPolicy {
    /// A policy with this effect and the default window and threshold.
    #[must_use]
    pub fn new(effect: Effect) -> Self {
        ToolPolicy { effect: Some(effect), ..ToolPolicy::default() }
    }

    /// A policy for a tool that never trips the guard.
    #[must_use]
    pub fn exempt() -> Self {
        ToolPolicy { exempt: true, ..ToolPolicy::default() }
    }

    /// This policy with its own window.
    #[must_use]
    pub fn with_window(mut self, window: usize) -> Self {
        self.window = Some(window);
        self
    }

    /// This policy with its own threshold.
    #[must_use]
    pub fn with_threshold(mut self, threshold: usize) -> Self {
        self.threshold = Some(threshold);
        self
    }
}

/// Guard settings.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct GuardConfig {
    /// How many recent calls are looked at (default 6).
    pub window: usize,
    /// How many identical calls in the window make a storm (default 3).
    pub threshold: usize,
    /// Per-tool settings by tool name.
    pub tools: HashMap<String, ToolPolicy>,
}

impl Default for GuardConfig {
    fn default() -> Self {
        GuardConfig { window: 6, threshold: 3, tools: HashMap::new() }
    }
}

impl GuardConfig {
    /// These settings with another window.
    #[must_use]
    pub fn with_window(mut self, window: usize) -> Self {
        self.window = window;
        self
    }

    /// These settings with another threshold.
    #[must_use]
    pub fn with_threshold(mut self, threshold: usize) -> Self {
        self.threshold = threshold;
        self
    }

    /// These settings with a policy for `tool`.
    #[must_use]
    pub fn with_tool(mut self, tool: impl Into<String>, policy: ToolPolicy) -> Self {
        self.tools.insert(tool.into(), policy);
        self
    }

    fn policy(&self, tool: &str) -> ToolPolicy {
        self.tools.get(tool).copied().unwrap_or_default()
    }

    fn window_of(&self, p: ToolPolicy) -> usize {
        p.window.unwrap_or(self.window)
    }

    fn threshold_of(&self, p: ToolPolicy) -> usize {
        p.threshold.unwrap_or(self.threshold).max(1)
    }

    fn capacity(&self) -> usize {
        self.tools.values().filter_map(|p| p.window).fold(self.window, usize::max)
    }
}

/// What the guard says about a call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Run it.
    Allow,
    /// Do not run it; answer the model with the message instead.
    Suppress(Suppressed),
}

/// A call the guard stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Suppressed {
    /// The tool.
    pub tool: String,
    /// How many times the same call appears in the window, this one included.
    pub repeats: usize,
    /// The window looked at.
    pub window: usize,
    /// For the model: what repeated, and a question about what it is trying to achieve.
    pub message: String,
}

/// A call's result as the guard remembers it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    /// Not known (yet).
    Unknown,
    /// A hash of the result text.
    Known(u64),
    /// The guard suppressed it.
    Suppressed,
}

#[derive(Clone, Debug)]
struct Entry {
    tool: String,
    key: String,
    effect: Effect,
    outcome: Outcome,
    id: Option<String>,
}

/// The sliding window of recent calls.
#[derive(Clone, Debug)]
pub struct StormGuard {
    config: GuardConfig,
    recent: VecDeque<Entry>,
    /// Ids of history calls the guard would have stopped: their results are its own
    /// messages, known by id, never by their text.
    suppressed: HashSet<String>,
}

fn hash(text: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

impl StormGuard {
    /// An empty guard.
    #[must_use]
    pub fn new(config: GuardConfig) -> Self {
        StormGuard { config, recent: VecDeque::new(), suppressed: HashSet::new() }
    }

    /// A guard whose window holds the calls of an OpenAI message history: the
    /// `tool_calls` of assistant messages, with the results of the `tool` messages that
    /// answer them (by `tool_call_id`). A history call the guard would have stopped at its
    /// place counts as stopped, and its result as the guard's own message.
    #[must_use]
    pub fn from_history(config: GuardConfig, messages: &serde_json::Value) -> Self {
        StormGuard::from_history_with(config, messages, |_| Effect::default())
    }

    /// As [`from_history`](Self::from_history), each tool's effect given by `effect_of`
    /// unless the guard's own policy names one.
    pub(crate) fn from_history_with(
        config: GuardConfig,
        messages: &serde_json::Value,
        effect_of: impl Fn(&str) -> Effect,
    ) -> Self {
        let mut guard = StormGuard::new(config);
        let Some(messages) = messages.as_array() else {
            return guard;
        };
        for m in messages {
            match m.get("role").and_then(|r| r.as_str()) {
                Some("assistant") => {
                    for call in m.get("tool_calls").and_then(|c| c.as_array()).into_iter().flatten() {
                        let f = call.get("function").unwrap_or(call);
                        let Some(name) = f.get("name").and_then(|n| n.as_str()) else {
                            continue;
                        };
                        let key = match f.get("arguments") {
                            Some(serde_json::Value::String(s)) => call_key(name, s),
                            Some(v) => call_key(name, &v.to_string()),
                            None => call_key(name, "{}"),
                        };
                        let id = call.get("id").and_then(|i| i.as_str());
                        guard.replay(name, effect_of(name), key, id);
                    }
                }
                Some("tool") => {
                    let id = m.get("tool_call_id").and_then(|i| i.as_str());
                    let content = text_of(m.get("content"));
                    if let Some(id) = id {
                        guard.record_result(id, &content);
                    }
                }
                _ => {}
            }
        }
        guard
    }

    /// Look at a new call: `Allow` records it in the window; `Suppress` does not (it does
    /// not run). The tool's effect is its policy's, else mutating.
    pub fn check(&mut self, tool: &str, arguments: &str) -> Verdict {
        self.check_with_id(tool, arguments, None)
    }

    /// As [`check`](Self::check), remembering the call's id so a later
    /// [`record_result`](Self::record_result) can attach its result.
    pub fn check_with_id(&mut self, tool: &str, arguments: &str, id: Option<&str>) -> Verdict {
        self.check_key(tool, Effect::default(), call_key(tool, arguments), id)
    }

    /// Look at a call whose key is known (see `canonical`): `declared` is the tool's
    /// effect when the guard's policy does not name one.
    pub(crate) fn check_key(&mut self, tool: &str, declared: Effect, key: String, id: Option<&str>) -> Verdict {
        let policy = self.config.policy(tool);
        if policy.exempt {
            return Verdict::Allow;
        }
        let window = self.config.window_of(policy);
        let threshold = self.config.threshold_of(policy);
        let repeats = self.repeats(&key, window) + 1;
        if repeats >= threshold {
            let same_result = self.same_results_known(&key, window);
            let message = crate::feedback::storm(tool, repeats, window, same_result);
            return Verdict::Suppress(Suppressed { tool: tool.to_owned(), repeats, window, message });
        }
        self.push(tool, policy.effect.unwrap_or(declared), key, Outcome::Unknown, id.map(str::to_owned));
        Verdict::Allow
    }

    /// As [`check_key`](Self::check_key) for the last call this guard is shown (it is
    /// dropped next): the call is not remembered, and its key (`key`) is made only when
    /// the window holds calls to compare it with.
    pub(crate) fn check_last(
        &mut self,
        tool: &str,
        declared: Effect,
        key: impl FnOnce() -> String,
        id: Option<&str>,
    ) -> Verdict {
        if !self.recent.is_empty() {
            return self.check_key(tool, declared, key(), id);
        }
        let policy = self.config.policy(tool);
        if policy.exempt {
            return Verdict::Allow;
        }
        // An empty window: this call is the only one (no repeat, no result known).
        let window = self.config.window_of(policy);
        let repeats = 1;
        if repeats >= self.config.threshold_of(policy) {
            let message = crate::feedback::storm(tool, repeats, window, false);
            return Verdict::Suppress(Suppressed { tool: tool.to_owned(), repeats, window, message });
        }
        Verdict::Allow
    }

    /// A call of the history, in order: in the window either way, and remembered as
    /// stopped when the guard would have stopped it here.
    fn replay(&mut self, tool: &str, declared: Effect, key: String, id: Option<&str>) {
        let policy = self.config.policy(tool);
        if policy.exempt {
            return;
        }
        let window = self.config.window_of(policy);
        let stopped = self.repeats(&key, window) + 1 >= self.config.threshold_of(policy);
        let outcome = if stopped { Outcome::Suppressed } else { Outcome::Unknown };
        if stopped && let Some(id) = id {
            self.suppressed.insert(id.to_owned());
        }
        self.push(tool, policy.effect.unwrap_or(declared), key, outcome, id.map(str::to_owned));
    }

    /// Attach the result of the call with this id (a call the guard stopped keeps its mark).
    pub fn record_result(&mut self, id: &str, result: &str) {
        if self.suppressed.contains(id) {
            return;
        }
        if let Some(e) = self.recent.iter_mut().rev().find(|e| e.id.as_deref() == Some(id)) {
            e.outcome = Outcome::Known(hash(result));
        }
    }

    /// How many calls the window holds.
    #[must_use]
    pub fn len(&self) -> usize {
        self.recent.len()
    }

    /// True when the window is empty.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.recent.is_empty()
    }

    fn push(&mut self, tool: &str, effect: Effect, key: String, outcome: Outcome, id: Option<String>) {
        if effect.changes_things() {
            // The world changed: reading again is not a repeat.
            self.recent.retain(|e| e.effect.changes_things());
        }
        self.recent.push_back(Entry { tool: tool.to_owned(), key, effect, outcome, id });
        while self.recent.len() > self.config.capacity() {
            self.recent.pop_front();
        }
    }

    /// Same-key calls among the last `window`, counting only those whose result matches
    /// the latest known result of that key (unknown results and suppressions match all).
    fn repeats(&self, key: &str, window: usize) -> usize {
        let same: Vec<&Entry> = self.recent.iter().rev().take(window).filter(|e| e.key == key).collect();
        let latest = same.iter().find_map(|e| match e.outcome {
            Outcome::Known(h) => Some(h),
            _ => None,
        });
        same.iter()
            .filter(|e| match (e.outcome, latest) {
                (Outcome::Known(h), Some(l)) => h == l,
                _ => true,
            })
            .count()
    }

    /// True when at least two same-key calls have a known result, all equal.
    fn same_results_known(&self, key: &str, window: usize) -> bool {
        let known: Vec<u64> = self
            .recent
            .iter()
            .rev()
            .take(window)
            .filter(|e| e.key == key)
            .filter_map(|e| match e.outcome {
                Outcome::Known(h) => Some(h),
                _ => None,
            })
            .collect();
        known.len() >= 2 && known.windows(2).all(|w| w.first() == w.get(1))
    }

    /// The tools in the window, oldest first (for diagnostics).
    #[must_use]
    pub fn recent_tools(&self) -> Vec<&str> {
        self.recent.iter().map(|e| e.tool.as_str()).collect()
    }
}

/// The text of a message `content`: a string, or the text parts of an array.
fn text_of(content: Option<&serde_json::Value>) -> String {
    match content {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(serde_json::Value::Array(parts)) => {
            parts.iter().filter_map(|p| p.get("text").and_then(|t| t.as_str())).collect::<Vec<_>>().join("")
        }
        Some(other) => other.to_string(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn allow(v: &Verdict) -> bool {
        matches!(v, Verdict::Allow)
    }

    #[test]
    fn third_identical_call_is_a_storm() {
        let mut g = StormGuard::new(GuardConfig::default());
        assert!(allow(&g.check("read", r#"{"p": 1, "q": 2}"#)));
        assert!(allow(&g.check("read", r#"{"q": 2, "p": 1}"#)));
        assert!(allow(&g.check("read", r#"{"p": 2}"#)));
        let Verdict::Suppress(s) = g.check("read", r#"{"p":1,"q":2}"#) else { panic!("not suppressed") };
        assert_eq!(s.repeats, 3);
        insta::assert_snapshot!(s.message);
    }

    #[test]
    fn window_slides() {
        let mut g = StormGuard::new(GuardConfig::default().with_window(3));
        assert!(allow(&g.check("a", "{}")));
        assert!(allow(&g.check("b", "{}")));
        assert!(allow(&g.check("c", "{}")));
        assert!(allow(&g.check("a", "{}")));
        assert!(allow(&g.check("d", "{}")));
        assert!(allow(&g.check("e", "{}")));
        assert!(allow(&g.check("a", "{}")));
    }

    #[test]
    fn mutating_call_clears_reads() {
        let cfg = GuardConfig::default()
            .with_tool("read", ToolPolicy::new(Effect::ReadOnly))
            .with_tool("write", ToolPolicy::new(Effect::Mutating));
        let mut g = StormGuard::new(cfg);
        assert!(allow(&g.check("read", "{}")));
        assert!(allow(&g.check("read", "{}")));
        assert!(allow(&g.check("write", r#"{"x": 1}"#)));
        assert!(allow(&g.check("read", "{}")));
        assert!(allow(&g.check("read", "{}")));
        assert!(!allow(&g.check("read", "{}")));
        // Writes repeat too.
        assert!(allow(&g.check("write", r#"{"x": 1}"#)));
        assert!(!allow(&g.check("write", r#"{"x": 1}"#)));
    }

    #[test]
    fn exempt_and_per_tool_threshold() {
        let cfg = GuardConfig::default()
            .with_tool("sleep", ToolPolicy::exempt())
            .with_tool("deploy", ToolPolicy::new(Effect::Mutating).with_threshold(2));
        let mut g = StormGuard::new(cfg);
        for _ in 0..10 {
            assert!(allow(&g.check("sleep", r#"{"s": 1}"#)));
        }
        assert!(allow(&g.check("deploy", "{}")));
        assert!(!allow(&g.check("deploy", "{}")));
    }

    #[test]
    fn different_results_are_not_a_storm() {
        let mut g = StormGuard::new(GuardConfig::default());
        assert!(allow(&g.check_with_id("status", "{}", Some("1"))));
        g.record_result("1", "running");
        assert!(allow(&g.check_with_id("status", "{}", Some("2"))));
        g.record_result("2", "done");
        assert!(allow(&g.check_with_id("status", "{}", Some("3"))));
        g.record_result("3", "done");
        // Two with the latest result ("done") plus this one.
        assert!(!allow(&g.check("status", "{}")));
    }

    #[test]
    fn rebuilt_from_history() {
        let history = json!([
            {"role": "user", "content": "list files"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "ls", "arguments": "{\"path\": \".\"}"}}]},
            {"role": "tool", "tool_call_id": "a", "content": "x.txt"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "b", "type": "function", "function": {"name": "ls", "arguments": "{\"path\":\".\"}"}}]},
            {"role": "tool", "tool_call_id": "b", "content": [{"type": "text", "text": "x.txt"}]}
        ]);
        let mut g = StormGuard::from_history(GuardConfig::default(), &history);
        assert_eq!(g.len(), 2);
        let Verdict::Suppress(s) = g.check("ls", r#"{"path": "."}"#) else { panic!("not suppressed") };
        assert!(s.message.contains("same result"));
        assert!(allow(&g.check("ls", r#"{"path": "src"}"#)));
    }
}
