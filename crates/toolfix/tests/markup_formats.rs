//! Corpus rows of the markup-family formats through their parsers (one format at a time,
//! a minimal driver; the full corpus test through the real driver lives elsewhere).
//!
//! Arguments are compared as JSON values; numbers compare by value (`5.0` == `5`: toolfix
//! keeps the number text the model wrote). Rows where toolfix deliberately differs from
//! the upstream expectation are listed in `DIFFERENCES` with the reason.
#![expect(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use toolfix::extract::{Format, ToolLookup, parse_markup_for_tests};

/// Rows whose expected calls toolfix deliberately does not reproduce, and why.
const DIFFERENCES: &[(&str, &str)] = &[];

fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

#[test]
fn corpus_rows() {
    let data = include_str!("fixtures/formats/markup_cases.jsonl");
    let mut counts: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut failures = Vec::new();
    for line in data.lines().filter(|l| !l.trim().is_empty()) {
        let row: Value = serde_json::from_str(line).unwrap();
        let id = row["id"].as_str().unwrap();
        let format_name = row["format"].as_str().unwrap();
        assert!(Format::from_name(format_name).is_some(), "{format_name}");
        let tools: Option<HashMap<String, Value>> = row["tools"].as_array().map(|tools| {
            tools
                .iter()
                .map(|t| {
                    (
                        t["name"].as_str().unwrap().to_owned(),
                        t["parameters"].clone(),
                    )
                })
                .collect()
        });
        let lookup = tools.as_ref().map(|t| t as &dyn ToolLookup);
        let content = row["input"]["content"].as_str().unwrap_or("");
        let got: Vec<(String, String)> = parse_markup_for_tests(content, lookup)
            .into_iter()
            .map(|(_, name, args)| (name, args))
            .collect();
        let expected = row["expected"]["tool_calls"].as_array().unwrap();
        let ok = got.len() == expected.len()
            && got.iter().zip(expected).all(|((name, args), exp)| {
                let args: Option<Value> = serde_json::from_str(args).ok();
                name == exp["name"].as_str().unwrap()
                    && args.is_some_and(|a| same(&a, &exp["arguments"]))
            });
        let entry = counts.entry(format_name.to_owned()).or_default();
        entry.1 += 1;
        if ok {
            entry.0 += 1;
        }
        let listed = DIFFERENCES.iter().any(|(d, _)| *d == id);
        if ok == listed {
            failures.push(format!(
                "{id}: {}\n  got: {got:?}\n  expected: {expected:?}",
                if ok {
                    "passes but is listed in DIFFERENCES"
                } else {
                    "fails"
                }
            ));
        }
    }
    for (format, (pass, total)) in &counts {
        println!("{format:20} {pass:3}/{total:3}");
    }
    assert!(
        failures.is_empty(),
        "{} rows:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
