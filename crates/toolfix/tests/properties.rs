//! Properties of the pipeline: valid arguments come back untouched, every accepted result
//! validates, repair is idempotent, and nothing panics on any schema or text.
#![expect(clippy::unwrap_used, reason = "tests")]

use proptest::prelude::*;
use serde_json::{Value, json};
use toolfix::ToolSet;

fn tools() -> ToolSet {
    ToolSet::new(&[json!({"name": "search", "parameters": {"type": "object", "properties": {
        "query": {"type": "string"},
        "limit": {"type": "integer", "minimum": 1, "maximum": 100},
        "ratio": {"type": "number"},
        "exact": {"type": "boolean"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "mode": {"enum": ["fast", "deep_scan"]},
        "filter": {"type": "object", "properties": {"since": {"type": ["string", "null"]}, "max_age": {"type": "integer"}}, "additionalProperties": false},
        "fileName": {"type": "string"}
    }, "required": ["query"], "additionalProperties": false}})])
    .unwrap()
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        (-1e6f64..1e6).prop_map(Value::from),
        "[a-zA-Z0-9_ .\\[\\]{}\"-]{0,12}".prop_map(Value::String),
        prop_oneof![
            Just("42"),
            Just("3.0"),
            Just("True"),
            Just("null"),
            Just("[\"a\"]"),
            Just("FAST"),
            Just("deep-scan")
        ]
        .prop_map(|s| Value::String(s.to_owned())),
    ];
    leaf.prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec(
                (
                    prop_oneof![
                        Just("query"),
                        Just("limit"),
                        Just("ratio"),
                        Just("exact"),
                        Just("tags"),
                        Just("mode"),
                        Just("filter"),
                        Just("file_name"),
                        Just("Query"),
                        Just("since"),
                        Just("max_age"),
                        Just("arguments"),
                        Just("x")
                    ],
                    inner
                ),
                0..5
            )
            .prop_map(|kv| Value::Object(kv.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())),
        ]
    })
}

fn valid_args() -> impl Strategy<Value = Value> {
    (
        "[a-z ]{0,10}",
        prop::option::of(1i64..=100),
        prop::option::of(prop::collection::vec("[a-z]{0,5}", 0..3)),
        prop::option::of(any::<bool>()),
        prop::option::of(prop_oneof![Just("fast"), Just("deep_scan")]),
    )
        .prop_map(|(q, limit, tags, exact, mode)| {
            let mut m = serde_json::Map::new();
            m.insert("query".into(), json!(q));
            if let Some(l) = limit {
                m.insert("limit".into(), json!(l));
            }
            if let Some(t) = tags {
                m.insert("tags".into(), json!(t));
            }
            if let Some(e) = exact {
                m.insert("exact".into(), json!(e));
            }
            if let Some(mo) = mode {
                m.insert("mode".into(), json!(mo));
            }
            Value::Object(m)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn valid_arguments_are_untouched(args in valid_args(), pretty in any::<bool>()) {
        let raw = if pretty { serde_json::to_string_pretty(&args).unwrap() } else { args.to_string() };
        let out = tools().repair_call("search", &raw);
        prop_assert_eq!(out.arguments_text(), Some(raw.as_str()));
        prop_assert!(out.repairs().is_empty());
    }

    #[test]
    fn accepted_results_validate_and_repair_is_idempotent(args in json_value()) {
        let tools = tools();
        let raw = args.to_string();
        let out = tools.repair_call("search", &raw);
        if let Some(text) = out.arguments_text() {
            let value: Value = serde_json::from_str(text).unwrap();
            prop_assert!(tools.tools()[0].is_valid(&value), "{} -> {}", raw, text);
            prop_assert_eq!(&value, out.arguments().unwrap());
            let again = tools.repair_call("search", text);
            prop_assert_eq!(again.arguments_text(), Some(text));
            prop_assert!(again.repairs().is_empty());
        }
    }

    #[test]
    fn no_panic_on_any_schema_and_text(schema in json_value(), text in ".{0,64}", args in json_value()) {
        if let Ok(tools) = ToolSet::new(&[json!({"name": "t", "parameters": schema})]) {
            let _ = tools.repair_call("t", &text);
            let out = tools.repair_call("t", &args.to_string());
            if let Some(v) = out.arguments() {
                prop_assert!(tools.tools()[0].is_valid(v));
            }
        }
    }
}
