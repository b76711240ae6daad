//! Loading and judging format cases (shared by the corpus and streaming tests).

#![allow(dead_code, reason = "each test binary uses part of this")]
#![expect(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

use serde_json::Value;
use std::collections::HashMap;
use toolfix::extract::{Extraction, Message, extract};

/// One row of a cases file.
#[derive(Debug, Clone)]
pub(crate) struct Case {
    pub(crate) id: String,
    pub(crate) format: String,
    pub(crate) content: String,
    pub(crate) reasoning: Option<String>,
    pub(crate) tool_calls: Option<Value>,
    pub(crate) tools: Option<HashMap<String, Value>>,
    pub(crate) expected_calls: Vec<Value>,
    pub(crate) expected_content: Option<String>,
    pub(crate) expected_reasoning: Option<String>,
    pub(crate) content_asserted: bool,
    pub(crate) partial_args: bool,
}

pub(crate) fn load_cases(path: &str) -> Vec<Case> {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            let tools = v.get("tools").and_then(Value::as_array).map(|ts| {
                ts.iter()
                    .map(|t| {
                        let f = t.get("function").unwrap_or(t);
                        let name = f["name"].as_str().unwrap().to_owned();
                        let params = f.get("parameters").cloned().unwrap_or(Value::Null);
                        (name, params)
                    })
                    .collect()
            });
            Case {
                id: v["id"].as_str().unwrap().to_owned(),
                format: v["format"].as_str().unwrap().to_owned(),
                content: v["input"]["content"].as_str().unwrap_or("").to_owned(),
                reasoning: v["input"]["reasoning_content"].as_str().map(str::to_owned),
                tool_calls: v["input"].get("tool_calls").cloned(),
                tools,
                expected_calls: v["expected"]["tool_calls"].as_array().cloned().unwrap_or_default(),
                expected_content: v["expected"]["content"].as_str().map(str::to_owned),
                expected_reasoning: v["expected"].get("reasoning_content").map(|r| r.as_str().unwrap_or("").to_owned()),
                content_asserted: v["source"]["content_asserted"].as_bool().unwrap_or(false),
                partial_args: v["source"]["args_asserted"].as_str() == Some("partial"),
            }
        })
        .collect()
}

/// `id -> reason` from `intended_differences.txt`.
pub(crate) fn intended_differences() -> HashMap<String, String> {
    listed("tests/fixtures/formats/intended_differences.txt")
}

/// `id -> what is missing` from `known_gaps.txt`.
pub(crate) fn known_gaps() -> HashMap<String, String> {
    listed("tests/fixtures/formats/known_gaps.txt")
}

fn listed(path: &str) -> HashMap<String, String> {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (id, reason) = l.split_once('\t').expect("id<TAB>reason");
            assert!(!reason.trim().is_empty(), "no reason for {id}");
            (id.to_owned(), reason.to_owned())
        })
        .collect()
}

pub(crate) fn message(case: &Case) -> Message<'_> {
    let mut m = Message::new(&case.content);
    if let Some(r) = &case.reasoning {
        m = m.with_reasoning_content(r);
    }
    if let Some(t) = &case.tool_calls {
        m = m.with_tool_calls(t);
    }
    m
}

pub(crate) fn run_case(case: &Case) -> Value {
    let tools = case.tools.as_ref().map(|t| t as &dyn toolfix::extract::ToolLookup);
    output(&extract(&message(case), tools))
}

/// The extraction as the CLI would print it: arguments salvaged to a value when possible.
pub(crate) fn output(x: &Extraction<'_>) -> Value {
    let calls: Vec<Value> = x
        .calls
        .iter()
        .map(|c| {
            let args = toolfix::salvage::salvage(&c.arguments)
                .ok()
                .and_then(|s| s.to_value().ok())
                .unwrap_or_else(|| Value::String(c.arguments.to_string()));
            serde_json::json!({"name": c.name, "arguments": args, "format": c.format.as_str()})
        })
        .collect();
    serde_json::json!({"tool_calls": calls, "content": x.content, "reasoning_content": x.reasoning_content})
}

pub(crate) enum Outcome {
    Pass,
    Fail(&'static str),
}

/// JSON equality as the scorer has it: objects unordered, `2 == 2.0`, `true != 1`.
pub(crate) fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(i), Some(j)) => i == j,
            _ => x.as_f64() == y.as_f64(),
        },
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_equal(p, q)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| json_equal(v, w)))
        }
        _ => a == b,
    }
}

fn call_matches(exp: &Value, got: &Value, partial: bool) -> bool {
    if got["name"] != exp["name"] {
        return false;
    }
    let (ga, ea) = (&got["arguments"], &exp["arguments"]);
    if partial && let (Some(e), Some(g)) = (ea.as_object(), ga.as_object()) {
        return e.iter().all(|(k, v)| g.get(k).is_some_and(|w| json_equal(v, w)));
    }
    json_equal(ga, ea)
}

fn augment(i: usize, adj: &[Vec<usize>], seen: &mut [bool], match_of: &mut [usize]) -> bool {
    for &j in &adj[i] {
        if seen[j] {
            continue;
        }
        seen[j] = true;
        if match_of[j] == usize::MAX || augment(match_of[j], adj, seen, match_of) {
            match_of[j] = i;
            return true;
        }
    }
    false
}

fn multiset_match(expected: &[Value], got: &[Value], partial: bool) -> bool {
    if expected.len() != got.len() {
        return false;
    }
    // Small lists: augmenting paths.
    let n = expected.len();
    let adj: Vec<Vec<usize>> =
        (0..n).map(|i| (0..n).filter(|&j| call_matches(&expected[i], &got[j], partial)).collect()).collect();
    let mut match_of = vec![usize::MAX; n];
    (0..n).all(|i| augment(i, &adj, &mut vec![false; n], &mut match_of))
}

pub(crate) fn norm_ws(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

pub(crate) fn judge(case: &Case, out: &Value) -> Outcome {
    let got = out["tool_calls"].as_array().unwrap();
    if !multiset_match(&case.expected_calls, got, case.partial_args) {
        return Outcome::Fail("calls_mismatch");
    }
    if case.content_asserted
        && norm_ws(out["content"].as_str().unwrap_or("")) != norm_ws(case.expected_content.as_deref().unwrap_or(""))
    {
        return Outcome::Fail("content_mismatch");
    }
    Outcome::Pass
}
