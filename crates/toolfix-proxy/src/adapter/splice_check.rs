//! The test harness of the splices (`Read::edits`), shared by the adapters that make them:
//! a body through the splice and through the value path (`apply`, then the report), both
//! read as values; a tally over many bodies; the library's corpus rows.

use crate::adapter::{Adapter, Unusable, spliced};
use serde_json::{Value, json};
use toolfix::{FixOptions, ToolSet};

/// What one body gives: the spliced body (when the splice is taken) and the value path's
/// (`apply`, then the report), both as values; `None` when nothing changes.
pub(crate) fn both_ways<A: Adapter>(body: &str, tools: &ToolSet) -> Option<(Option<Value>, Value)> {
    let options = FixOptions::default();
    let lazy = A::fix_body(body.as_bytes(), &mut |r| toolfix::fix_reply(r, Some(tools), None, &options).ok())
        .expect("a body of the API");
    if !lazy.read.changed {
        assert!(lazy.read.edits.is_none(), "{body}");
        return None;
    }
    let report = json!({"summary": "s", "calls": [{"outcome": "repaired"}]});
    let spliced = lazy.read.edits.map(|edits| {
        let bytes = spliced(body.as_bytes(), edits, &report.to_string()).expect("the body ends its object");
        serde_json::from_slice::<Value>(&bytes).expect("a spliced body is JSON")
    });
    let mut value: Value = serde_json::from_str(body).unwrap();
    if let Some(f) = &lazy.replies[0] {
        A::apply(&mut value, 0, f, Unusable::Explain);
    }
    A::report(&mut value, report);
    Some((spliced, value))
}

/// The tally of a run over many bodies.
#[derive(Default, Debug)]
pub(crate) struct Tally {
    pub(crate) unchanged: usize,
    pub(crate) spliced: usize,
    pub(crate) built: usize,
}

impl Tally {
    /// Check `body` compact and pretty-printed: a splice, when taken, reads as the value
    /// path's response.
    pub(crate) fn check<A: Adapter>(&mut self, body: &Value, tools: &ToolSet) {
        for text in [body.to_string(), serde_json::to_string_pretty(body).unwrap()] {
            match both_ways::<A>(&text, tools) {
                None => self.unchanged += 1,
                Some((Some(s), v)) => {
                    assert_eq!(s, v, "{text}");
                    self.spliced += 1;
                }
                Some((None, _)) => self.built += 1,
            }
        }
    }
}

/// The rows of a corpus file of the library's fixtures (`formats/cases.jsonl`, ...).
pub(crate) fn rows(path: &str) -> Vec<Value> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../toolfix/tests/fixtures/");
    let text = std::fs::read_to_string(format!("{dir}{path}")).unwrap();
    text.lines().filter(|l| !l.trim().is_empty()).map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// Every format case of the library's corpus (as `tests/formats.rs` sends it): its
/// reasoning, its text, its server calls (id, name, arguments as text) and the tools it
/// is read with (its own, one per expected call it lacks, and a tool of no use).
pub(crate) fn for_each_format_case(mut f: impl FnMut(Option<&str>, &str, &[(&str, &str, &str)], &ToolSet)) {
    for file in ["formats/cases.jsonl", "formats/own_cases.jsonl", "formats/own_markup_cases.jsonl"] {
        for row in rows(file) {
            let input = &row["input"];
            let calls: Vec<(String, String, String)> = input["tool_calls"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|c| {
                    let f = &c["function"];
                    let arguments = f["arguments"].as_str().map_or_else(|| f["arguments"].to_string(), str::to_owned);
                    (c["id"].as_str().unwrap_or("").to_owned(), f["name"].as_str().unwrap_or("").to_owned(), arguments)
                })
                .collect();
            let calls: Vec<(&str, &str, &str)> =
                calls.iter().map(|(i, n, a)| (i.as_str(), n.as_str(), a.as_str())).collect();
            let mut tools: Vec<Value> = row["tools"].as_array().cloned().unwrap_or_default();
            for c in row["expected"]["tool_calls"].as_array().into_iter().flatten() {
                let name = c["name"].as_str().unwrap_or("unnamed");
                if !tools.iter().any(|t| t["function"]["name"] == name || t["name"] == name) {
                    tools.push(json!({"name": name, "parameters": {"type": "object"}}));
                }
            }
            tools.push(json!({"name": "toolfix_noop", "parameters": {"type": "object"}}));
            let (tools, _) = ToolSet::new_partial(&tools);
            f(input["reasoning_content"].as_str(), input["content"].as_str().unwrap_or(""), &calls, &tools);
        }
    }
}
