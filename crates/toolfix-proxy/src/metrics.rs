//! Prometheus metrics, served at `GET /metrics` in the text format.
//!
//! Label values that come from requests (tool and model names) are capped: past
//! [`MAX_LABEL_VALUES`] distinct values a label reads `other`, so a client cannot grow the
//! registry without bound.

use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Mutex;
use std::time::Duration;

/// Distinct tool or model names kept as label values.
pub(crate) const MAX_LABEL_VALUES: usize = 256;

type Labels1 = [(&'static str, String); 1];
type Labels2 = [(&'static str, String); 2];
type Labels4 = [(&'static str, String); 4];
type Latency = Family<Labels1, Histogram, fn() -> Histogram>;

fn latency_histogram() -> Histogram {
    // 25 µs .. ~0.4 s.
    Histogram::new(exponential_buckets(25e-6, 2.0, 15))
}

/// Every metric the proxy keeps.
#[derive(Debug)]
pub(crate) struct Metrics {
    registry: Registry,
    tool_calls: Family<Labels4, Counter>,
    repairs: Family<Labels1, Counter>,
    reprompts: Family<Labels2, Counter>,
    length_recoveries: Family<Labels2, Counter>,
    upstream_errors: Family<Labels2, Counter>,
    added_latency: Latency,
    /// The tool names and the model names seen as label values, and the tool-call
    /// counters made so far.
    seen: Mutex<Seen>,
}

#[derive(Debug, Default)]
struct Seen {
    names: [HashSet<String>; 2],
    /// `toolfix_tool_calls` counters by a hash of their label values (each with its
    /// labels: a hash shared by two sets finds the right one): counting a call builds no
    /// label set once its counter exists. As many as the family holds.
    counters: HashMap<u64, Vec<(Labels4, Counter)>, BuildHasherDefault<Prehashed>>,
    /// Where the counter counted last is (its labels' hash, its place in that bucket;
    /// buckets only grow): the next call is most often of the same tool, model and
    /// outcome, and is then counted without hashing its labels.
    last: Option<(u64, usize)>,
    /// The `toolfix_added_latency_seconds` histogram of each API seen (a handful).
    latency: Vec<(&'static str, Histogram)>,
}

/// The hasher of a map whose keys are hashes already ([`labels_hash`]): the key is its
/// own hash.
#[derive(Debug, Default)]
struct Prehashed(u64);

impl Hasher for Prehashed {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Not called for a `u64` key; mixed in all the same.
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

impl Seen {
    /// A request-given name as a label value (see [`Metrics::tool_call`]).
    fn capped<'v>(&mut self, set: usize, value: &'v str) -> &'v str {
        if self.names[set].contains(value) {
            return value;
        }
        if self.names[0].len() + self.names[1].len() >= 2 * MAX_LABEL_VALUES {
            return "other";
        }
        self.names[set].insert(value.to_owned());
        value
    }
}

/// True when `labels` hold these values.
fn same(labels: &Labels4, values: [&str; 4]) -> bool {
    labels.iter().map(|(_, v)| v.as_str()).eq(values)
}

/// The hash of four label values (FNV-1a, each followed by a NUL).
fn labels_hash(values: [&str; 4]) -> u64 {
    // Plain loops: a `flat_map` over chained byte iterators cost several times more per
    // byte (on every counted call).
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for v in values {
        for &b in v.as_bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

impl Metrics {
    pub(crate) fn new() -> Self {
        let mut registry = Registry::default();
        let tool_calls = Family::<Labels4, Counter>::default();
        let repairs = Family::<Labels1, Counter>::default();
        let reprompts = Family::<Labels2, Counter>::default();
        let length_recoveries = Family::<Labels2, Counter>::default();
        let upstream_errors = Family::<Labels2, Counter>::default();
        let added_latency: Latency = Family::new_with_constructor(latency_histogram);
        registry.register(
            "toolfix_tool_calls",
            "Tool calls answered, by API, outcome (untouched, repaired, reprompted, gave_up, suppressed), tool and model",
            tool_calls.clone(),
        );
        registry.register("toolfix_repairs", "Repairs made, by kind", repairs.clone());
        registry.register(
            "toolfix_reprompts",
            "Corrective re-prompts sent upstream, by API and result (fixed, failed, no_calls, error)",
            reprompts.clone(),
        );
        registry.register(
            "toolfix_length_recoveries",
            "Cut-off calls retried or continued upstream, by API and result",
            length_recoveries.clone(),
        );
        registry.register(
            "toolfix_upstream_errors",
            "Upstream failures, by API and HTTP status or kind (unreachable, timeout, stream_broken, bad_response)",
            upstream_errors.clone(),
        );
        registry.register(
            "toolfix_added_latency_seconds",
            "Time the proxy itself added to an answer, by API (upstream waits excluded)",
            added_latency.clone(),
        );
        Metrics {
            registry,
            tool_calls,
            repairs,
            reprompts,
            length_recoveries,
            upstream_errors,
            added_latency,
            seen: Mutex::new(Seen::default()),
        }
    }

    /// Count a tool call. Request-given names (a tool's and a model's) are label values
    /// while few distinct ones were seen, else `other`; looked up without building a key.
    pub(crate) fn tool_call(&self, api: &str, outcome: &str, tool: &str, model: &str) {
        let Ok(mut seen) = self.seen.lock() else {
            let labels = [
                ("api", api.to_owned()),
                ("outcome", outcome.to_owned()),
                ("tool", "other".to_owned()),
                ("model", "other".to_owned()),
            ];
            self.tool_calls.get_or_create(&labels).inc();
            return;
        };
        let seen = &mut *seen;
        // A counter with these very values: the names were taken as label values before
        // (capping them again would give them back unchanged), so it is the one.
        let values = [api, outcome, tool, model];
        if let Some((hash, i)) = seen.last
            && let Some((labels, counter)) = seen.counters.get(&hash).and_then(|b| b.get(i))
            && same(labels, values)
        {
            counter.inc();
            return;
        }
        let hash = labels_hash(values);
        if let Some((i, (_, counter))) =
            seen.counters.get(&hash).and_then(|b| b.iter().enumerate().find(|(_, (l, _))| same(l, values)))
        {
            counter.inc();
            seen.last = Some((hash, i));
            return;
        }
        let tool = seen.capped(0, tool);
        let model = seen.capped(1, model);
        let values = [api, outcome, tool, model];
        let hash = labels_hash(values);
        let bucket = seen.counters.entry(hash).or_default();
        if let Some((i, (_, counter))) = bucket.iter().enumerate().find(|(_, (l, _))| same(l, values)) {
            counter.inc();
            seen.last = Some((hash, i));
            return;
        }
        let labels = [
            ("api", api.to_owned()),
            ("outcome", outcome.to_owned()),
            ("tool", tool.to_owned()),
            ("model", model.to_owned()),
        ];
        let counter = self.tool_calls.get_or_create(&labels).clone();
        counter.inc();
        seen.last = Some((hash, bucket.len()));
        bucket.push((labels, counter));
    }

    pub(crate) fn repair(&self, kind: &str) {
        self.repairs.get_or_create(&[("kind", kind.to_owned())]).inc();
    }

    pub(crate) fn reprompt(&self, api: &str, result: &str) {
        self.reprompts.get_or_create(&[("api", api.to_owned()), ("result", result.to_owned())]).inc();
    }

    pub(crate) fn length_recovery(&self, api: &str, result: &str) {
        self.length_recoveries.get_or_create(&[("api", api.to_owned()), ("result", result.to_owned())]).inc();
    }

    pub(crate) fn upstream_error(&self, api: &str, status: &str) {
        self.upstream_errors.get_or_create(&[("api", api.to_owned()), ("status", status.to_owned())]).inc();
    }

    /// Observe the time the proxy added to an answer of `api` (its histogram looked up
    /// without building a label set once it exists).
    pub(crate) fn added_latency(&self, api: &'static str, d: Duration) {
        let seconds = d.as_secs_f64();
        let Ok(mut seen) = self.seen.lock() else {
            self.added_latency.get_or_create(&[("api", api.to_owned())]).observe(seconds);
            return;
        };
        if let Some((_, h)) = seen.latency.iter().find(|(a, _)| *a == api) {
            h.observe(seconds);
            return;
        }
        let h = self.added_latency.get_or_create(&[("api", api.to_owned())]).clone();
        h.observe(seconds);
        seen.latency.push((api, h));
    }

    /// The text exposition.
    pub(crate) fn render(&self) -> String {
        let mut out = String::new();
        if encode(&mut out, &self.registry).is_err() {
            out.clear();
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::Metrics;

    /// Calls counted in any order land on their own counters: the same labels again (the
    /// counter found last), others between them (found by their hash), a new set.
    #[test]
    fn each_call_is_counted_on_its_labels() {
        let m = Metrics::new();
        let calls = [
            ("chat", "untouched", "a", "m"),
            ("chat", "untouched", "a", "m"),
            ("chat", "untouched", "b", "m"),
            ("chat", "untouched", "a", "m"),
            ("chat", "repaired", "a", "m"),
            ("messages", "untouched", "a", "m"),
            ("chat", "untouched", "b", "m"),
            ("chat", "untouched", "a", "n"),
            ("chat", "untouched", "a", "m"),
        ];
        for (api, outcome, tool, model) in calls {
            m.tool_call(api, outcome, tool, model);
        }
        let text = m.render();
        for (labels, n) in [
            (r#"api="chat",outcome="untouched",tool="a",model="m""#, 4),
            (r#"api="chat",outcome="untouched",tool="b",model="m""#, 2),
            (r#"api="chat",outcome="repaired",tool="a",model="m""#, 1),
            (r#"api="messages",outcome="untouched",tool="a",model="m""#, 1),
            (r#"api="chat",outcome="untouched",tool="a",model="n""#, 1),
        ] {
            let line = format!("toolfix_tool_calls_total{{{labels}}} {n}\n");
            assert!(text.contains(&line), "{line} not in\n{text}");
        }
    }
}
