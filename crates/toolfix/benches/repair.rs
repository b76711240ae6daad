//! The schema stage: the full pipeline on valid calls against `serde_json` parse plus
//! `jsonschema` `is_valid` alone (target: within 1.3×), and on calls with type-level
//! damage (target: under 5 µs per call).
#![expect(clippy::unwrap_used, reason = "bench setup")]

use divan::{Bencher, black_box};
#[path = "inputs/pipeline.rs"]
mod pipeline_inputs;

use pipeline_inputs::{DAMAGED, VALID, schema};
use serde_json::{Value, json};
use toolfix::ToolSet;

fn main() {
    divan::main();
}

#[divan::bench]
fn baseline_parse_and_is_valid(bencher: Bencher) {
    let validator = jsonschema::options().with_draft(jsonschema::Draft::Draft202012).build(&schema()).unwrap();
    bencher.bench(|| {
        let v: Value = serde_json::from_str(black_box(VALID)).unwrap();
        validator.is_valid(&v)
    });
}

#[divan::bench]
fn pipeline_valid(bencher: Bencher) {
    let tools = ToolSet::new(&[json!({"name": "search", "parameters": schema()})]).unwrap();
    bencher.bench(|| tools.repair_call("search", black_box(VALID)).is_ok());
}

#[divan::bench(args = [0, 1, 2, 3, 4])]
fn pipeline_damaged(bencher: Bencher, which: usize) {
    let tools = ToolSet::new(&[json!({"name": "search", "parameters": schema()})]).unwrap();
    let text = DAMAGED[which];
    bencher.bench(|| {
        let out = tools.repair_call("search", black_box(text));
        assert!(out.is_ok());
        out
    });
}
