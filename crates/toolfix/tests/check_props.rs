//! Properties of `check` on any JSON document: it never panics, lists problems errors
//! first, and every problem's pointer points at a place that exists in the document.

use proptest::prelude::*;
use serde_json::{Map, Value, json};

/// JSON values biased towards tool-definition shapes: schema keywords, typos of them,
/// type names right and wrong.
fn value() -> impl Strategy<Value = Value> {
    let key = prop::sample::select(vec![
        "name",
        "function",
        "parameters",
        "inputSchema",
        "type",
        "properties",
        "required",
        "items",
        "anyOf",
        "allOf",
        "$ref",
        "$defs",
        "enum",
        "x-toolfix",
        "requried",
        "propertes",
        "a",
        "b",
        "typ",
        "minimum",
        "examples",
        "additionalProperties",
        "policy",
        "aliases",
        "semantic",
    ]);
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-5i64..5).prop_map(Value::from),
        prop::sample::select(vec![
            "string",
            "strng",
            "integer",
            "int",
            "object",
            "array",
            "float",
            "null",
            "#/$defs/a",
            "#/nowhere",
            "a",
            "b",
            "lenient",
            "lenent",
            "path",
        ])
        .prop_map(|s| Value::String(s.to_owned())),
    ];
    leaf.prop_recursive(5, 64, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((key.clone(), inner), 0..5).prop_map(|members| Value::Object(
                members.into_iter().map(|(k, v)| (k.to_owned(), v)).collect::<Map<_, _>>()
            )),
        ]
    })
}

/// A tool definition in one of the three forms, around a schema of random properties.
fn tool() -> impl Strategy<Value = Value> {
    let name = prop::sample::select(vec!["search", "Search", "read_file", "readFile"]);
    let props = prop::collection::vec((prop::sample::select(vec!["a", "b", "c_d", "cD"]), value()), 0..4);
    (name, props, value(), 0..4u8).prop_map(|(name, props, extra, form)| {
        let properties: Map<String, Value> = props.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
        let mut schema = json!({"type": "object", "properties": properties, "required": ["a", "x"]});
        if let (Some(map), Value::Object(more)) = (schema.as_object_mut(), extra) {
            map.extend(more);
        }
        match form {
            0 => json!({"name": name, "parameters": schema}),
            1 => json!({"type": "function", "function": {"name": name, "parameters": schema}}),
            2 => json!({"name": name, "inputSchema": schema}),
            _ => schema,
        }
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn every_pointer_exists(tools in prop::collection::vec(prop_oneof![value(), tool(), tool()], 0..4), wrapped in any::<bool>()) {
        let document = if wrapped { json!({"tools": tools}) } else { Value::Array(tools) };
        let problems = toolfix::check::check_document(&document);
        for p in &problems {
            prop_assert!(document.pointer(&p.pointer).is_some(), "{} points at nothing in {document}", p.pointer);
            prop_assert!(!p.message.is_empty());
        }
        let errors = problems.iter().take_while(|p| p.is_error()).count();
        prop_assert!(problems.iter().skip(errors).all(|p| !p.is_error()), "errors first");
    }
}
