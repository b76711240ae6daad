//! Issue 9 §1 as a property: a valid call cut at any byte never reaches a tool that may
//! change things with a value other than the one the model wrote, and a read-only tool
//! only ever gets members the model wrote in full.
#![expect(clippy::unwrap_used, reason = "tests")]

use proptest::prelude::*;
use serde_json::{Map, Value, json};

use toolfix::{CallOptions, ToolSet};

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        (-1e6f64..1e6).prop_map(Value::from),
        "\\PC{0,10}".prop_map(Value::String),
        "[a-z\"\\\\/\n{}\\[\\]:,' ]{0,10}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec(("[a-z_]{1,6}", inner), 0..4).prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

/// A call's arguments (an object with distinct keys), rendered compact or pretty.
fn call() -> impl Strategy<Value = (Map<String, Value>, String)> {
    (prop::collection::vec(("[a-z_]{1,6}", json_value()), 1..5), any::<bool>()).prop_map(|(kv, pretty)| {
        let map: Map<String, Value> = kv.into_iter().collect();
        let v = Value::Object(map.clone());
        let text = if pretty { serde_json::to_string_pretty(&v).unwrap() } else { serde_json::to_string(&v).unwrap() };
        (map, text)
    })
}

fn tools() -> ToolSet {
    ToolSet::new(&[
        json!({"name": "write", "parameters": {"type": "object"}}),
        json!({"name": "read", "parameters": {"type": "object", "x-toolfix": {"read_only": true}}}),
    ])
    .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn a_cut_call_is_refused_or_exactly_the_original((map, text) in call(), hit in any::<bool>()) {
        let tools = tools();
        let options = CallOptions::default().with_hit_token_limit(hit);
        for cut in (1..text.len()).filter(|&i| text.is_char_boundary(i)) {
            let prefix = &text[..cut];
            let write = tools.repair_call_with("write", prefix, &options);
            if let Some(args) = write.arguments() {
                // Only the last brace was missing: every member is as written.
                prop_assert!(!hit, "accepted with the token limit hit: {prefix:?}");
                let Some(args) = args.as_object() else { return Err(TestCaseError::fail("not an object")) };
                for (k, v) in args {
                    prop_assert_eq!(Some(v), map.get(k), "cut at {}: {:?}", cut, prefix);
                }
            }
            let read = tools.repair_call_with("read", prefix, &options);
            if let Some(Value::Object(args)) = read.arguments() {
                for (k, v) in args {
                    prop_assert_eq!(Some(v), map.get(k), "read-only got a member not as written: {:?}", prefix);
                }
            }
        }
        // The whole text is valid: untouched.
        let whole = tools.repair_call_with("write", &text, &options);
        prop_assert_eq!(whole.arguments_text(), Some(text.as_str()));
    }
}
