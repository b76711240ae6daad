//! What every request shares: settings, the upstream client, metrics, the fix options and
//! the compiled tool sets of recent requests.

use crate::config::Config;
use crate::metrics::Metrics;
use crate::upstream::Upstream;
use std::collections::HashMap;
use std::sync::Mutex;
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
}

#[derive(Debug, Default)]
struct ToolCache {
    sets: HashMap<Box<str>, ToolSet>,
    bytes: usize,
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
        })
    }

    /// The tool set of a request (`raw`: the text of its tool definitions, the cache key),
    /// with the configured per-tool policies; compiled once while it stays in the cache
    /// (bounded by the bytes of the keys it holds).
    pub(crate) fn tool_set(&self, raw: &str, definitions: impl FnOnce() -> Vec<serde_json::Value>) -> ToolSet {
        if let Ok(cache) = self.tools.lock()
            && let Some(set) = cache.sets.get(raw)
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
            cache.bytes += raw.len();
            cache.sets.insert(raw.into(), set.clone());
        }
        set
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
