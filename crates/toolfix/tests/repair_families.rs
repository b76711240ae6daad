//! Repair families beyond the corpus: each repair next to its refusal.
#![expect(clippy::unwrap_used, reason = "tests")]

use serde_json::{Value, json};
use toolfix::ToolSet;

fn run(parameters: &Value, raw: &str) -> (Option<Value>, Vec<&'static str>) {
    let tools = ToolSet::new(&[json!({"name": "t", "parameters": parameters})]).unwrap();
    let out = tools.repair_call("t", raw);
    (out.arguments().cloned(), out.repairs().iter().map(|r| r.kind.as_str()).collect())
}

#[test]
fn bare_string_number_wrapped_then_coerced() {
    let schema = json!({"type": "object", "properties": {"ids": {"type": "array", "items": {"type": "integer"}}}, "additionalProperties": false});
    let (args, kinds) = run(&schema, r#"{"ids": "5"}"#);
    assert_eq!(args, Some(json!({"ids": [5]})));
    assert_eq!(kinds, ["wrapped_in_array", "coerced_scalar"]);
    assert_eq!(run(&schema, r#"{"ids": "five"}"#).0, None);
}

#[test]
fn two_keys_for_one_property_are_refused() {
    let schema =
        json!({"type": "object", "properties": {"ticketId": {"type": "string"}}, "additionalProperties": false});
    assert_eq!(run(&schema, r#"{"ticket_id": "a"}"#).0, Some(json!({"ticketId": "a"})));
    assert_eq!(run(&schema, r#"{"ticket_id": "a", "TicketID": "b"}"#).0, None);
}

#[test]
fn rename_never_overwrites_a_given_property() {
    let schema =
        json!({"type": "object", "properties": {"ticketId": {"type": "string"}}, "additionalProperties": false});
    assert_eq!(run(&schema, r#"{"ticketId": "a", "ticket_id": "b"}"#).0, None);
}

#[test]
fn lenient_keeps_ambiguous_keys_and_refuses() {
    let schema = json!({"type": "object", "properties": {"start_date": {"type": "string"}, "startDate": {"type": "string"}},
        "additionalProperties": false, "x-toolfix": {"policy": "lenient"}});
    assert_eq!(run(&schema, r#"{"StartDate": "x"}"#).0, None);
}

#[test]
fn nested_objects_are_repaired_at_depth() {
    let schema = json!({"type": "object", "properties": {"filter": {"type": "object", "properties": {
        "max_age": {"type": "integer"}, "tags": {"type": "array", "items": {"enum": ["a_b", "c"]}}}, "additionalProperties": false}}});
    let (args, kinds) = run(&schema, r#"{"filter": {"maxAge": "7", "tags": ["A-B", "c"]}}"#);
    assert_eq!(args, Some(json!({"filter": {"max_age": 7, "tags": ["a_b", "c"]}})));
    let mut kinds = kinds;
    kinds.sort_unstable();
    assert_eq!(kinds, ["coerced_scalar", "enum_matched", "field_renamed"]);
}

#[test]
fn one_of_alternatives_are_not_merged() {
    // Two object alternatives: no rename is certain, so none is made.
    let schema = json!({"type": "object", "properties": {"target": {"oneOf": [
        {"type": "object", "properties": {"file_path": {"type": "string"}}, "required": ["file_path"], "additionalProperties": false},
        {"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"], "additionalProperties": false}
    ]}}});
    assert_eq!(run(&schema, r#"{"target": {"filePath": "a"}}"#).0, None);
}

#[test]
fn booleans_and_numbers_to_strings_only_where_strings_are_wanted() {
    let schema = json!({"type": "object", "properties": {"flag": {"type": "string"}, "n": {"type": "integer"}}});
    assert_eq!(run(&schema, r#"{"flag": true}"#).0, Some(json!({"flag": "true"})));
    assert_eq!(run(&schema, r#"{"n": true}"#).0, None);
}

#[test]
fn strict_tools_get_no_shape_repairs() {
    let schema = json!({"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string"}}, "n": {"type": "integer"}},
        "x-toolfix": {"policy": "strict"}});
    assert_eq!(run(&schema, r#"{"tags": "a"}"#).0, None);
    assert_eq!(run(&schema, r#"{"arguments": {"n": 1}}"#).0, Some(json!({"arguments": {"n": 1}})));
    assert_eq!(run(&schema, r#"{"n": null}"#).0, Some(json!({})));
}
