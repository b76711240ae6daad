//! What every request shares: settings, the upstream client, metrics, the fix options and
//! the compiled tool sets of recent requests.

use crate::config::Config;
use crate::metrics::Metrics;
use crate::upstream::Upstream;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use toolfix::guard::{GuardConfig, ToolPolicy};
use toolfix::{Effect, FixOptions, ToolSet};

/// The most bytes of tool definitions the cache keeps (the key is their text).
const TOOL_CACHE_BYTES: usize = 8 << 20;

#[derive(Debug)]
pub(crate) struct AppState {
    pub(crate) config: Config,
    pub(crate) upstream: Upstream,
    pub(crate) metrics: Metrics,
    pub(crate) options: FixOptions,
    /// The upstream refused a re-prompt that named a tool in `tool_choice` (400): later
    /// re-prompts do not name one.
    pub(crate) no_forced_tool: std::sync::atomic::AtomicBool,
    tools: Mutex<ToolCache>,
    /// The tool definitions' text of the last request with tools (its peek read it, so it
    /// is JSON): the next peek takes a `tools` member with the same bytes as read (see
    /// `Adapter::peek_known`); and the set compiled from that text, which the next
    /// request with the same text takes without hashing it and looking in the cache (the
    /// same text always compiles to the same set for one API: the configuration does not
    /// change), with the API it was compiled for.
    last_tools: Mutex<Option<Compiled>>,
}

/// What [`AppState::known_tools`] tells of the last request with tools.
#[derive(Debug)]
pub(crate) struct LastTools {
    pub(crate) text: Arc<str>,
    /// It came to the API asked about.
    pub(crate) here: bool,
    /// The set compiled from the text for the API it came to.
    pub(crate) set: ToolSet,
}

/// A request's tool definitions: their text, the API they came to, the set compiled from
/// them.
#[derive(Debug)]
struct Compiled {
    text: Arc<str>,
    api: &'static str,
    set: ToolSet,
}

/// Compiled tool sets by the API and the text of their definitions: found by a fast hash
/// of the text, taken only when the API and the whole text are the same (a collision never
/// picks another set). The API is part of the key because each reads the same text its own
/// way (a Messages tool's `input_schema`, a Responses tool's `parameters`).
#[derive(Debug, Default)]
struct ToolCache {
    sets: HashMap<u64, Vec<Compiled>>,
    bytes: usize,
}

impl ToolCache {
    /// The set compiled for `api` from exactly `raw` (`key`: its hash).
    fn get(&self, key: u64, api: &str, raw: &str) -> Option<&ToolSet> {
        self.sets.get(&key)?.iter().find(|c| c.api == api && *c.text == *raw).map(|c| &c.set)
    }
}

/// A fast, non-cryptographic hash of the text of tool definitions (the cache compares the
/// text itself on a hit, so a collision costs a compile, never a wrong set).
fn text_hash(text: &str) -> u64 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let bytes = text.as_bytes();
    let mut h = (bytes.len() as u64).wrapping_mul(K);
    let mut words = bytes.chunks_exact(8);
    for w in &mut words {
        let mut b = [0u8; 8];
        b.copy_from_slice(w);
        h = (h ^ u64::from_le_bytes(b)).wrapping_mul(K).rotate_left(29);
    }
    let mut last = [0u8; 8];
    for (d, s) in last.iter_mut().zip(words.remainder()) {
        *d = *s;
    }
    (h ^ u64::from_le_bytes(last)).wrapping_mul(K) ^ (h >> 32)
}

impl AppState {
    pub(crate) fn new(config: Config) -> Result<AppState, crate::Error> {
        let upstream = Upstream::new(&config)?;
        let guard = config.storm.enabled.then(|| {
            let mut g = GuardConfig::default().with_window(config.storm.window).with_threshold(config.storm.threshold);
            for (name, t) in &config.tools {
                if t.storm_exempt {
                    g = g.with_tool(name.clone(), ToolPolicy::exempt());
                }
            }
            g
        });
        let extract = FixOptions::default().extract.with_leaked_calls(config.leaked_calls);
        let options = FixOptions::default().with_limits(config.limits).with_guard(guard).with_extract(extract);
        Ok(AppState {
            config,
            upstream,
            metrics: Metrics::new(),
            options,
            no_forced_tool: std::sync::atomic::AtomicBool::new(false),
            tools: Mutex::new(ToolCache::default()),
            last_tools: Mutex::new(None),
        })
    }

    /// The tool set of a request to `api` (`raw`: the text of its tool definitions; the
    /// two are the cache key), with the configured per-tool policies; compiled once while
    /// it stays in the cache (bounded by the bytes of the keys it holds).
    pub(crate) fn tool_set(
        &self,
        api: &'static str,
        raw: &str,
        definitions: impl FnOnce() -> Vec<serde_json::Value>,
    ) -> ToolSet {
        if let Ok(last) = self.last_tools.lock()
            && let Some(l) = &*last
            && l.api == api
            && *l.text == *raw
        {
            return l.set.clone();
        }
        let key = text_hash(raw);
        if let Ok(cache) = self.tools.lock()
            && let Some(set) = cache.get(key, api, raw)
        {
            return set.clone();
        }
        let set = self.build(&definitions());
        if raw.len() <= TOOL_CACHE_BYTES
            && let Ok(mut cache) = self.tools.lock()
        {
            if cache.bytes + raw.len() > TOOL_CACHE_BYTES {
                cache.sets.clear();
                cache.bytes = 0;
            }
            let bucket = cache.sets.entry(key).or_default();
            if !bucket.iter().any(|c| c.api == api && *c.text == *raw) {
                bucket.push(Compiled { text: raw.into(), api, set: set.clone() });
                cache.bytes += raw.len();
            }
        }
        set
    }

    /// The last request with tools, for the next: its tool definitions' text (for the
    /// next peek), whether it came to `api` (see [`crate::adapter::Known`]), and the set
    /// compiled from them for that API (the set [`AppState::tool_set`] gives for the same
    /// text to it).
    pub(crate) fn known_tools(&self, api: &str) -> Option<LastTools> {
        let last = self.last_tools.lock().ok()?;
        let l = last.as_ref()?;
        Some(LastTools { text: Arc::clone(&l.text), here: l.api == api, set: l.set.clone() })
    }

    /// Remember `raw`, the tool definitions' text a peek of a request to `api` read
    /// (`known`: what it was told), and `set`, the tool set [`AppState::tool_set`] gave
    /// for it.
    pub(crate) fn remember_tools(&self, api: &'static str, raw: &str, known: Option<&str>, set: &ToolSet) {
        if raw.len() > TOOL_CACHE_BYTES {
            return;
        }
        let Ok(mut last) = self.last_tools.lock() else { return };
        if known == Some(raw) && last.as_ref().is_some_and(|l| l.api == api) {
            return;
        }
        *last = Some(Compiled { text: raw.into(), api, set: set.clone() });
    }

    fn build(&self, definitions: &[serde_json::Value]) -> ToolSet {
        // A definition that does not compile leaves the others usable; calls to it are
        // refused as the definition's fault.
        let (mut set, errors) = ToolSet::new_partial(definitions);
        for e in &errors {
            tracing::warn!(error = %e.message(), "a tool definition in a request is unusable");
        }
        for (name, t) in &self.config.tools {
            if let Some(ro) = t.read_only {
                let effect = if ro { Effect::ReadOnly } else { Effect::Mutating };
                set = set.clone().with_effect(name, effect).unwrap_or(set);
            }
            if let Some(p) = t.policy {
                set = set.clone().with_policy(name, p).unwrap_or(set);
            }
            if let Some(l) = t.leaked_calls {
                set = set.clone().with_leaked_calls(name, l).unwrap_or(set);
            }
        }
        set
    }
}

#[cfg(test)]
mod tests {
    use super::{Compiled, ToolCache, text_hash};
    use toolfix::ToolSet;

    #[test]
    fn a_hash_collision_never_picks_another_tool_set() {
        let def = |name: &str| serde_json::json!([{"name": name, "parameters": {"type": "object"}}]);
        let a = ToolSet::new(def("a").as_array().unwrap()).unwrap();
        let mut cache = ToolCache::default();
        // The text "b" filed under the hash of "a": a lookup of "a" finds nothing.
        cache.sets.entry(text_hash("a")).or_default().push(Compiled { text: "b".into(), api: "chat", set: a.clone() });
        assert!(cache.get(text_hash("a"), "chat", "a").is_none());
        assert!(cache.get(text_hash("a"), "chat", "b").is_some());
        // The same text for another API is another set.
        assert!(cache.get(text_hash("a"), "messages", "b").is_none());
        assert_ne!(text_hash("[1]"), text_hash("[2]"));
        assert_ne!(text_hash("12345678"), text_hash("123456789"));
    }

    /// The last request's set is taken only for the very same text; another text gets its
    /// own set (from the cache, or compiled), and becomes the last one once remembered.
    #[test]
    fn the_last_tool_set_is_taken_only_for_the_same_text() {
        let state = super::AppState::new(crate::Config::new("http://127.0.0.1:9").unwrap()).unwrap();
        let def = |name: &str| serde_json::json!([{"name": name, "parameters": {"type": "object"}}]);
        let names = |set: &ToolSet| set.tools().iter().map(|t| t.name().to_owned()).collect::<Vec<_>>();
        let (text_a, text_b) = (def("a").to_string(), def("b").to_string());
        let a = state.tool_set("chat", &text_a, || def("a").as_array().unwrap().clone());
        state.remember_tools("chat", &text_a, None, &a);
        let known = |api| state.known_tools(api).map(|k| (k.text.to_string(), k.here, names(&k.set)));
        assert_eq!(known("chat"), Some((text_a.clone(), true, vec!["a".to_owned()])));
        // The same text: the last set, nothing compiled.
        let again = state.tool_set("chat", &text_a, || panic!("the last set is taken"));
        assert_eq!(names(&again), ["a"]);
        // The same text with a byte more, and another text: their own sets.
        let b = state.tool_set("chat", &text_b, || def("b").as_array().unwrap().clone());
        assert_eq!(names(&b), ["b"]);
        let spaced = format!("{text_a} ");
        let c = state.tool_set("chat", &spaced, || def("c").as_array().unwrap().clone());
        assert_eq!(names(&c), ["c"]);
        state.remember_tools("chat", &text_b, Some(&text_a), &b);
        assert_eq!(known("chat"), Some((text_b.clone(), true, vec!["b".to_owned()])));
        assert_eq!(names(&state.tool_set("chat", &text_b, || panic!("the last set is taken"))), ["b"]);
        // The first text is still in the cache.
        assert_eq!(names(&state.tool_set("chat", &text_a, || panic!("cached"))), ["a"]);
    }

    /// Each API reads the same tool definitions' text its own way: a set compiled for one
    /// is never taken for another, from the last request or from the cache.
    #[test]
    fn the_same_text_for_another_api_is_another_tool_set() {
        let state = super::AppState::new(crate::Config::new("http://127.0.0.1:9").unwrap()).unwrap();
        let def = |name: &str| serde_json::json!([{"name": name, "parameters": {"type": "object"}}]);
        let names = |set: &ToolSet| set.tools().iter().map(|t| t.name().to_owned()).collect::<Vec<_>>();
        let text = def("a").to_string();
        let a = state.tool_set("messages", &text, || def("a").as_array().unwrap().clone());
        state.remember_tools("messages", &text, None, &a);
        // Told to a peek of another API as text it did not take itself.
        assert!(state.known_tools("chat").is_some_and(|k| *k.text == *text && !k.here && names(&k.set) == ["a"]));
        // The same text to another API (told the known text, as its peek is): compiled for it.
        let b = state.tool_set("chat", &text, || def("b").as_array().unwrap().clone());
        assert_eq!(names(&b), ["b"]);
        state.remember_tools("chat", &text, Some(&text), &b);
        assert_eq!(names(&state.tool_set("chat", &text, || panic!("the last set is taken"))), ["b"]);
        assert_eq!(names(&state.tool_set("messages", &text, || panic!("cached"))), ["a"]);
    }
}
