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
use std::collections::HashSet;
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
    /// The tool names and the model names seen as label values.
    seen: Mutex<[HashSet<String>; 2]>,
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
            seen: Mutex::new([HashSet::new(), HashSet::new()]),
        }
    }

    /// Request-given names as label values (a tool's and a model's): each itself while
    /// few distinct ones were seen, else `other`. Looked up without building a key.
    fn labels(&self, tool: &str, model: &str) -> (String, String) {
        let Ok(mut seen) = self.seen.lock() else { return ("other".to_owned(), "other".to_owned()) };
        let mut one = |set: usize, value: &str| {
            if seen[set].contains(value) {
                return value.to_owned();
            }
            if seen[0].len() + seen[1].len() >= 2 * MAX_LABEL_VALUES {
                return "other".to_owned();
            }
            seen[set].insert(value.to_owned());
            value.to_owned()
        };
        (one(0, tool), one(1, model))
    }

    pub(crate) fn tool_call(&self, api: &str, outcome: &str, tool: &str, model: &str) {
        let (tool, model) = self.labels(tool, model);
        let labels = [("api", api.to_owned()), ("outcome", outcome.to_owned()), ("tool", tool), ("model", model)];
        self.tool_calls.get_or_create(&labels).inc();
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

    pub(crate) fn added_latency(&self, api: &str, d: Duration) {
        self.added_latency.get_or_create(&[("api", api.to_owned())]).observe(d.as_secs_f64());
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
