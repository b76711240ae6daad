//! Snapshots of the refusal messages models read, one per refused repair case, plus the
//! sensitive-tool and 4 KiB cap behaviour.

use serde_json::{Value, json};
use toolfix::ToolSet;

const CASES: &str = include_str!("fixtures/repair/cases.jsonl");

#[test]
fn refusal_messages() {
    for line in CASES.lines().filter(|l| !l.trim().is_empty()) {
        let case: Value = serde_json::from_str(line).unwrap();
        if case["expected"]["ok"] == json!(true) {
            continue;
        }
        let tool = &case["tool"];
        let tools = ToolSet::new(std::slice::from_ref(tool)).unwrap();
        let out = tools.repair_call(tool["name"].as_str().unwrap(), case["arguments"].as_str().unwrap());
        let Some(refusal) = out.refusal() else {
            continue;
        };
        let name = case["id"].as_str().unwrap().replace('/', "__");
        insta::assert_snapshot!(
            name,
            format!("{}\n---\n{}", refusal.message, serde_json::to_string_pretty(&refusal.issues).unwrap())
        );
    }
}

#[test]
fn sensitive_tools_do_not_echo_values() {
    let tools = ToolSet::new(&[json!({"name": "pay", "parameters": {"type": "object",
        "properties": {"card": {"type": "integer"}}, "required": ["card"],
        "x-toolfix": {"sensitive": true}}})])
    .unwrap();
    let out = tools.repair_call("pay", r#"{"card": "4111-1111-1111-1111"}"#);
    let refusal = out.refusal().unwrap();
    assert!(!refusal.message.contains("4111"), "{}", refusal.message);
    assert!(refusal.issues.iter().all(|i| i.received.is_none()));
}

#[test]
fn messages_are_capped() {
    let props: serde_json::Map<String, Value> =
        (0..400).map(|i| (format!("field_{i}_with_a_long_name"), json!({"type": "integer"}))).collect();
    let names: Vec<String> = props.keys().cloned().collect();
    let tools = ToolSet::new(&[
        json!({"name": "wide", "parameters": {"type": "object", "properties": props, "required": names}}),
    ])
    .unwrap();
    let out = tools.repair_call("wide", "{}");
    let refusal = out.refusal().unwrap();
    assert!(refusal.message.len() <= 4096);
    assert_eq!(refusal.issues.len(), 400);
}

#[test]
fn unknown_and_ambiguous_tools() {
    let tools = ToolSet::new(&[json!({"name": "read_file"}), json!({"name": "readFile"})]).unwrap();
    let out = tools.repair_call("ReadFile", "{}");
    insta::assert_snapshot!("ambiguous_tool", out.refusal().unwrap().message);
    let out = tools.repair_call("write_file", "{}");
    insta::assert_snapshot!("unknown_tool", out.refusal().unwrap().message);
}

#[test]
fn unknown_tool_suggests_the_closest_names() {
    let tools =
        ToolSet::new(&[json!({"name": "get_weather"}), json!({"name": "get_forecast"}), json!({"name": "read_file"})])
            .unwrap();
    let out = tools.repair_call("get_wether", "{}");
    assert_eq!(out.name(), "get_wether", "an unresolved name is reported as sent");
    insta::assert_snapshot!("unknown_tool_did_you_mean", out.refusal().unwrap().message);
    let none = tools.repair_call("launch_rocket", "{}");
    assert!(!none.refusal().unwrap().message.contains("did you mean"));
    let empty = ToolSet::new(&[]).unwrap().repair_call("anything", "{}");
    assert!(empty.refusal().unwrap().message.contains("no tools are offered"), "{}", empty.refusal().unwrap().message);
}

#[test]
fn over_the_limits_is_said_so_never_not_json() {
    let tools = ToolSet::new(&[json!({"name": "save", "parameters": {"type": "object"}})]).unwrap();
    let limits = toolfix::Limits::default().with_max_input_bytes(64);
    let big = format!(r#"{{"text": "{}"}}"#, "a".repeat(100));
    let out = tools.tool("save").unwrap().repair_call_with(&big, &toolfix::CallOptions::from(limits));
    let message = &out.refusal().unwrap().message;
    assert!(message.contains("too large (112 bytes, limit 64, raise `--max-input-bytes`)"), "{message}");
    assert!(!message.contains("not JSON"), "{message}");
    assert!(!message.contains("aaaa"), "the text is not echoed: {message}");
    insta::assert_snapshot!("too_large", message);

    let deep = format!(r#"{{"a": {}1{}}}"#, "[".repeat(300), "]".repeat(300));
    let out = tools.repair_call("save", &deep);
    let message = &out.refusal().unwrap().message;
    assert!(message.contains("nest too deeply (more than 128 levels"), "{message}");
    assert!(!message.contains("not JSON"), "{message}");

    let prose = tools.repair_call("save", "I will save it now.");
    assert!(prose.refusal().unwrap().message.contains("not JSON"));
}

/// A string that never closes, read as ending before `, key:` inside it, may as well be
/// cut there: a tool that may change things refuses it as cut off, and a read-only tool
/// too, since the members after it may not be the model's (no member can be dropped to
/// leave only what was written).
#[test]
fn a_string_read_as_split_before_a_key_is_refused() {
    let tools = ToolSet::new(&[
        json!({"name": "write_note", "parameters": {"type": "object", "properties": {"text": {"type": "string"}, "n": {"type": "integer"}}}}),
        json!({"name": "search", "parameters": {"type": "object", "properties": {"q": {"type": "string"}, "n": {"type": "integer"}}, "x-toolfix": {"read_only": true}}}),
    ])
    .unwrap();
    let write = tools.repair_call("write_note", r#"{"text": "first, n: 1}"#);
    insta::assert_snapshot!("split_string_may_change_things", write.refusal().unwrap().message);
    let read = tools.repair_call("search", r#"{"q": "rust, n: 1}"#);
    insta::assert_snapshot!("split_string_read_only", read.refusal().unwrap().message);
}
