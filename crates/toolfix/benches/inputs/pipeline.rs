//! The tool and the calls of the pipeline benchmark, shared by `benches/repair.rs` and
//! `examples/workload.rs` through `#[path]`, so both measure the same calls.

use serde_json::{Value, json};

/// The `parameters` schema of the benchmarked tool.
pub(crate) fn schema() -> Value {
    json!({"type": "object", "properties": {
        "query": {"type": "string"},
        "limit": {"type": "integer", "minimum": 1, "maximum": 100},
        "tags": {"type": "array", "items": {"type": "string"}},
        "exact": {"type": "boolean"},
        "mode": {"enum": ["fast", "deep_scan"]},
        "ticketId": {"type": "string"}
    }, "required": ["query"], "additionalProperties": false})
}

/// A valid call: returned untouched.
pub(crate) const VALID: &str =
    r#"{"query": "rust error handling", "limit": 25, "tags": ["cli", "json"], "exact": true, "mode": "fast"}"#;

/// Calls with type-level damage, one repair family each.
pub(crate) const DAMAGED: &[&str] = &[
    r#"{"query": "rust", "limit": "25"}"#,
    r#"{"query": "rust", "tags": "[\"cli\", \"json\"]"}"#,
    r#"{"query": "rust", "exact": "True", "mode": "FAST"}"#,
    r#"{"query": "rust", "ticket_id": "T-1", "limit": null}"#,
    r#"{"arguments": {"query": "rust", "limit": 5}}"#,
];
