//! Pipeline details the corpus does not pin: text kept as written around repairs, the CLI
//! contract line, typed binding, policies set through the API, stats.

#![expect(clippy::unwrap_used, reason = "tests")]

use serde::Deserialize;
use serde_json::json;
use toolfix::report::{Outcome, RepairKind, Stats};
use toolfix::{Policy, ToolSet};

fn tools() -> ToolSet {
    ToolSet::new(&[json!({"type": "function", "function": {"name": "release", "description": "", "parameters": {
        "type": "object",
        "properties": {"version": {"type": "string"}, "build": {"type": "integer"}, "ratio": {"type": "number"}, "notes": {"type": "string"}},
        "required": ["version"], "additionalProperties": false}}})])
    .unwrap()
}

#[test]
fn unchanged_numbers_keep_their_text_next_to_a_repair() {
    let out = tools()
        .repair_call("release", r#"{"Version": 1.10, "build": 12345678901234567890, "ratio": 1e3, "notes": "\u00e9"}"#);
    assert_eq!(
        out.arguments_text(),
        Some(r#"{"version": "1.10", "build": 12345678901234567890, "ratio": 1e3, "notes": "\u00e9"}"#)
    );
    let kinds: Vec<_> = out.repairs().iter().map(|r| r.kind).collect();
    assert_eq!(kinds, [RepairKind::FieldRenamed, RepairKind::CoercedScalar]);
    assert_eq!(out.repairs()[1].path, "/version");
    assert_eq!(out.repairs()[1].before, Some(json!(1.1)));
    assert_eq!(out.repairs()[1].after, Some(json!("1.10")));
}

#[test]
fn outcomes_serialize_with_the_raw_arguments() {
    let t = tools();
    let ok = t.repair_call("release", "{\n  \"version\": \"1\",\n  \"ratio\": 1.50\n}");
    assert_eq!(ok.outcome(), Outcome::Untouched);
    let line = serde_json::to_string(&ok).unwrap();
    assert!(
        line.starts_with(
            r#"{"name":"release","outcome":"untouched","arguments":{"version":"1","ratio":1.50},"report":"#
        ),
        "{line}"
    );
    let fixed = t.repair_call("release", r#"{"version": 2}"#);
    let line = serde_json::to_value(&fixed).unwrap();
    assert_eq!(line["arguments"], json!({"version": "2"}));
    assert_eq!(line["outcome"], "repaired");
    assert_eq!(line["report"]["repairs"][0]["kind"], "coerced_scalar");
    assert_eq!(line["report"]["repairs"][0]["path"], "/version");
    let bad = t.repair_call("release", r#"{"build": "x"}"#);
    let line = serde_json::to_value(&bad).unwrap();
    assert_eq!(line["outcome"], "rejected");
    assert!(line.get("arguments").is_none());
    let issues = line["error"]["issues"].as_array().unwrap();
    assert!(issues.iter().any(|i| i["path"] == "/build" && i["received"] == "\"x\""));
    assert!(issues.iter().any(|i| i["path"] == "/version" && i["received"].is_null()));
    assert!(line["error"]["message"].as_str().unwrap().contains("/version"));
}

#[test]
fn arguments_given_as_a_value() {
    let t = tools();
    assert_eq!(t.repair_value("release", &json!({"version": 3})).arguments(), Some(&json!({"version": "3"})));
    assert_eq!(t.repair_value("release", &json!("{\"version\": \"3\"}")).arguments(), Some(&json!({"version": "3"})));
}

#[test]
fn typed_binding() {
    #[derive(Deserialize, schemars::JsonSchema, Debug, PartialEq)]
    struct Move {
        from: String,
        to: String,
        overwrite: Option<bool>,
    }
    let tool = toolfix::bind::tool_for::<Move>("move_file", "Move a file.").unwrap();
    let tools = ToolSet::from_tools(vec![tool]).unwrap();
    let out = tools.repair_call("moveFile", r#"{"from": "a", "to": "b", "overwrite": "True"}"#);
    let m: Move = out.bind().unwrap();
    assert_eq!(m, Move { from: "a".into(), to: "b".into(), overwrite: Some(true) });
    assert!(tools.repair_call("move_file", r#"{"from": "a"}"#).bind::<Move>().is_err());
}

#[test]
fn policy_set_through_the_api() {
    let t = tools().with_policy("release", Policy::Strict).unwrap();
    assert!(!t.repair_call("release", r#"{"version": 2}"#).is_ok());
    let t = t.with_policy("release", Policy::Lenient).unwrap();
    let out = t.repair_call("release", r#"{"version": "2", "extra": 1}"#);
    assert_eq!(out.arguments(), Some(&json!({"version": "2"})));
    assert_eq!(out.notes().len(), 1);
}

#[test]
fn stats_count_outcomes_and_kinds() {
    let t = tools();
    let stats = Stats::default();
    for raw in [r#"{"version": "1"}"#, r#"{"version": 1}"#, "{}"] {
        stats.record(t.repair_call("release", raw).report());
    }
    assert_eq!(stats.calls(), 3);
    assert_eq!(stats.outcomes(Outcome::Untouched), 1);
    assert_eq!(stats.outcomes(Outcome::Repaired), 1);
    assert_eq!(stats.outcomes(Outcome::Rejected), 1);
    assert_eq!(stats.repairs(RepairKind::CoercedScalar), 1);
}

#[test]
fn mcp_and_bare_forms_and_shown_schema() {
    let t = ToolSet::new(&[
        json!({"name": "a", "inputSchema": {"type": "object", "properties": {"p": {"type": "string", "x-toolfix": {"semantic": "path"}}}}}),
        json!({"name": "b", "description": "d", "parameters": {"type": "object"}}),
        json!({"name": "c"}),
    ])
    .unwrap();
    assert_eq!(t.tools().len(), 3);
    assert_eq!(t.tools()[0].parameters_shown(), json!({"type": "object", "properties": {"p": {"type": "string"}}}));
    assert!(t.repair_call("c", "").is_ok());
}
