//! Extension points: each hook, the contract hint, and the uncertain mode, which is never
//! on by default and never gives an accepted call.

#![expect(clippy::unwrap_used, reason = "tests")]

use serde_json::{Value, json};
use toolfix::schema::Extensions;
use toolfix::{Outcome, ToolSet};

fn tools() -> ToolSet {
    ToolSet::new(&[json!({"name": "book", "description": "Book a room.", "parameters": {"type": "object",
        "properties": {
            "room": {"type": "string"},
            "date": {"type": "string", "format": "date", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"},
            "confirm": {"type": "boolean"}},
        "required": ["room", "date"], "additionalProperties": false}})])
    .unwrap()
}

fn kinds(outcome: &toolfix::CallOutcome) -> Vec<&'static str> {
    outcome.repairs().iter().map(|r| r.kind.as_str()).collect()
}

#[test]
fn valid_calls_never_reach_the_extensions() {
    let ext = Extensions::new()
        .with_field_matcher(|_, _| panic!("matcher called on a valid call"))
        .with_value_coercer(|_, _| panic!("coercer called on a valid call"));
    let tools = tools().with_extensions(ext);
    let raw = r#"{"room":  "A1", "date": "2025-01-02"}"#;
    let ok = tools.repair_call("book", raw);
    assert_eq!(ok.arguments_text(), Some(raw));
    assert_eq!(ok.outcome(), Outcome::Untouched);
}

#[test]
fn field_matcher_renames_and_the_result_is_validated() {
    let tools = tools().with_extensions(
        Extensions::new().with_field_matcher(|given, _| (given == "where").then(|| "room".to_owned())),
    );
    let fixed = tools.repair_call("book", r#"{"where": "A1", "date": "2025-01-02"}"#);
    assert_eq!(fixed.arguments(), Some(&json!({"room": "A1", "date": "2025-01-02"})));
    assert_eq!(kinds(&fixed), ["extension_matched"]);
    assert_eq!(fixed.outcome(), Outcome::Repaired);
    // A name that is not declared, or already given, is not taken.
    let tools = tools.with_extensions(Extensions::new().with_field_matcher(|_, _| Some("nope".to_owned())));
    assert!(!tools.repair_call("book", r#"{"where": "A1", "date": "2025-01-02"}"#).is_ok());
}

#[test]
fn coercer_and_normaliser_fix_values_and_bad_ones_are_refused() {
    let ext = Extensions::new()
        .with_value_coercer(|v, node| match (v.as_str(), node.get("type").and_then(Value::as_str)) {
            (Some("yes"), Some("boolean")) => Some(json!(true)),
            (Some("maybe"), Some("boolean")) => Some(json!("still a string")),
            _ => None,
        })
        .with_format_normaliser("date", |s| {
            let parts: Vec<&str> = s.split('/').collect();
            (parts.len() == 3).then(|| format!("{}-{}-{}", parts[2], parts[1], parts[0]))
        });
    let tools = tools().with_extensions(ext);
    let fixed = tools.repair_call("book", r#"{"room": "A1", "date": "02/01/2025", "confirm": "yes"}"#);
    assert_eq!(fixed.arguments(), Some(&json!({"room": "A1", "date": "2025-01-02", "confirm": true})));
    let mut k = kinds(&fixed);
    k.sort_unstable();
    assert_eq!(k, ["extension_coerced", "format_normalised"]);
    // The coercer's answer does not validate: refused, never passed on.
    assert!(!tools.repair_call("book", r#"{"room": "A1", "date": "2025-01-02", "confirm": "maybe"}"#).is_ok());
    // A normaliser that cannot read the value: refused.
    assert!(!tools.repair_call("book", r#"{"room": "A1", "date": "next tuesday"}"#).is_ok());
}

#[test]
fn cut_off_output_is_left_to_the_model() {
    let tools = tools().with_extensions(Extensions::new().with_field_matcher(|_, _| Some("room".to_owned())));
    assert!(!tools.repair_call("book", r#"{"date": "2025-01-02", "where": "A"#).is_ok());
    // Only the last brace missing: the extensions never complete unclosed text, whether or
    // not the output hit the token limit.
    let unclosed = r#"{"where": "A1", "date": "2025-01-02""#;
    assert!(!tools.repair_call("book", unclosed).is_ok());
    let at_limit = toolfix::CallOptions::default().with_hit_token_limit(true);
    assert!(!tools.repair_call_with("book", unclosed, &at_limit).is_ok());
}

#[test]
fn a_key_given_twice_is_not_settled_by_an_extension() {
    let tools = tools().with_extensions(Extensions::new().with_field_matcher(|_, _| Some("room".to_owned())));
    let twice = r#"{"where": "A1", "date": "2025-01-02", "date": "2025-01-03"}"#;
    assert!(!tools.repair_call("book", twice).is_ok());
}

#[test]
fn contract_hints_reach_descriptions_and_refusals_and_the_renderer_writes_refusals() {
    let tools = tools().with_extensions(Extensions::new().with_contract("book", "dates are YYYY-MM-DD"));
    let tool = tools.tool("book").unwrap();
    assert_eq!(tool.contract(), Some("dates are YYYY-MM-DD"));
    assert_eq!(tool.description_for_model(), "Book a room.\n\nContract: dates are YYYY-MM-DD");
    let refused = tools.repair_call("book", r#"{"room": "A1"}"#);
    insta::assert_snapshot!(refused.refusal().unwrap().message);
    let tools = tools.with_extensions(
        Extensions::new()
            .with_contract("book", "rooms are A1 to A9")
            .with_refusal_renderer(|tool, r| format!("[{}] {} issue(s)\n{}", tool.name(), r.issues.len(), r.message)),
    );
    let message = tools.repair_call("book", "{}").refusal().unwrap().message.clone();
    assert!(message.starts_with("[book] 2 issue(s)\n"), "{message}");
    assert!(message.ends_with("Contract for `book`: rooms are A1 to A9\n"), "{message}");
    let huge = tools.with_extensions(Extensions::new().with_refusal_renderer(|_, _| "é".repeat(5000)));
    let message = huge.repair_call("book", "{}").refusal().unwrap().message.clone();
    assert!(message.len() <= toolfix::feedback::MAX_MESSAGE_BYTES);
}

#[test]
fn uncertain_matches_are_never_certain() {
    let typos = [r#"{"rom": "A1", "date": "2025-01-02"}"#, r#"{"room": "A1", "dtae": "2025-01-02"}"#];
    for set in [tools(), tools().with_extensions(Extensions::new().with_field_matcher(|_, _| None))] {
        for raw in typos {
            let plain = set.repair_call("book", raw);
            assert!(!plain.is_ok(), "{raw}: the default pipeline never matches fuzzily");
            let (outcome, uncertain) = set.repair_call_uncertain("book", raw);
            assert!(!outcome.is_ok(), "{raw}: the outcome stays a refusal");
            let uncertain = uncertain.unwrap();
            assert_eq!(uncertain.arguments(), &json!({"room": "A1", "date": "2025-01-02"}));
            assert!(uncertain.repairs().iter().any(|r| r.kind.as_str() == "uncertain_match"));
        }
    }
    // Two candidates as close: no guess, even uncertain.
    let two = ToolSet::new(&[json!({"name": "t", "parameters": {"type": "object",
        "properties": {"abcd": {"type": "string"}, "abce": {"type": "string"}}, "required": ["abcd", "abce"]}})])
    .unwrap();
    assert!(two.repair_call_uncertain("t", r#"{"abcf": "x"}"#).1.is_none());
    // A call the pipeline accepts has no uncertain part.
    assert!(tools().repair_call_uncertain("book", r#"{"room": "A1", "date": "2025-01-02"}"#).1.is_none());
}

#[test]
fn hostile_inputs_stay_bounded() {
    use std::fmt::Write as _;
    let tools = tools().with_extensions(Extensions::new().with_field_matcher(|_, _| Some("room".to_owned())));
    let mut raw = String::from("{");
    for i in 0..20_000 {
        let _ = write!(raw, "\"roomx{i}\": {i},");
    }
    raw.push_str("\"date\": \"2025-01-02\"}");
    assert!(!tools.repair_call("book", &raw).is_ok(), "every key claims `room`: no guess");
    let (outcome, uncertain) = tools.repair_call_uncertain("book", &raw);
    assert!(!outcome.is_ok());
    assert!(uncertain.is_none());
}
