//! A tool schema made only of `type`, `properties`, `required`, `additionalProperties`
//! (a boolean), `items` (one schema) and string `enum`s (annotations and `x-` keys beside
//! them), compiled once into a tree that says where a value fails it.
//!
//! Repair asks only where validation failed. `jsonschema`'s `iter_errors` answers with a
//! full error per failure (instance and schema locations, the instance itself), most of the
//! cost of a repaired call; for these schemas the places are found here by one walk, the
//! same places `iter_errors` names (`tests` check both on the bench schemas and generated
//! ones). Acceptance is never decided here: the compiled `jsonschema` validator still
//! validates every value before and after repair.

use super::view::Types;
use crate::pointer;
use serde_json::{Map, Value};
use std::borrow::Cow;

/// Schema nesting followed at most; a deeper schema is left to `jsonschema`.
const MAX_DEPTH: usize = 32;

/// Room for the pointers of most arguments, so the path the walk extends does not grow.
const PATH_CAPACITY: usize = 64;

/// Keywords that never fail a value (annotations): skipped when compiling.
const ANNOTATIONS: [&str; 8] =
    ["title", "description", "default", "examples", "$comment", "deprecated", "readOnly", "writeOnly"];

/// What failed at a place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Failure {
    /// `type` (the value's type is not allowed).
    Type,
    /// `enum` (the value is none of the listed strings).
    Enum,
    /// `required`: the place is the missing property's.
    Missing,
    /// `additionalProperties: false`: the place is the unexpected property's.
    Unexpected,
}

/// A compiled plain schema (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct Plain {
    nodes: Vec<Node>,
}

#[derive(Debug, Default)]
struct Node {
    /// `None`: any type.
    types: Option<Types>,
    /// Each property: its name, its pointer segment (`/` and the escaped name) and node.
    properties: Vec<(String, String, usize)>,
    /// Each required name, with the position of the property of that name among the
    /// first 64 (then a member seen settles it).
    required: Vec<(String, Option<u32>)>,
    additional_false: bool,
    items: Option<usize>,
    /// `None`: no `enum`.
    strings: Option<Vec<String>>,
}

impl Plain {
    /// `schema` compiled, when it is plain (and validated under draft 2020-12, as a schema
    /// without `$schema` is).
    pub(crate) fn compile(schema: &Value) -> Option<Plain> {
        let mut plain = Plain::default();
        plain.node(schema, 0)?;
        Some(plain)
    }

    /// Compile `schema` as a node; its id.
    fn node(&mut self, schema: &Value, depth: usize) -> Option<usize> {
        if depth > MAX_DEPTH {
            return None;
        }
        let obj = schema.as_object()?;
        let id = self.nodes.len();
        self.nodes.push(Node::default());
        let mut node = Node::default();
        let mut required = Vec::new();
        for (k, v) in obj {
            match k.as_str() {
                "type" => node.types = Some(types(v)?),
                "properties" => {
                    for (name, sub) in v.as_object()? {
                        let child = self.node(sub, depth + 1)?;
                        node.properties.push((name.clone(), pointer::join("", name), child));
                    }
                }
                "required" => {
                    for name in v.as_array()? {
                        required.push(name.as_str()?);
                    }
                }
                "additionalProperties" => node.additional_false = !v.as_bool()?,
                "items" => node.items = Some(self.node(v, depth + 1)?),
                "enum" => node.strings = Some(strings(v)?),
                k if ANNOTATIONS.contains(&k) || k.starts_with("x-") || k == "dirge-hints" => {}
                _ => return None,
            }
        }
        for name in required {
            let at = node
                .properties
                .iter()
                .position(|p| p.0 == name)
                .and_then(|i| u32::try_from(i).ok())
                .filter(|i| *i < 64);
            node.required.push((name.to_owned(), at));
        }
        *self.nodes.get_mut(id)? = node;
        Some(id)
    }

    /// Every place where `value` fails the schema, with what failed there, in the order of
    /// the walk (no place and kind twice), each made into a `T` by `make` as it is found
    /// (no list of pairs to convert afterwards). A place that is a top-level property's
    /// pointer is borrowed from the schema (no string made for it).
    pub(crate) fn failures_as<'p, T>(&'p self, value: &Value, make: &impl Fn(Cow<'p, str>, Failure) -> T) -> Vec<T> {
        let mut out = Vec::new();
        let mut path = String::with_capacity(PATH_CAPACITY);
        self.walk(0, value, &mut path, Some(""), &mut out, make);
        out
    }

    /// The failures of `value` under node `id`. Recursion follows the schema's nesting,
    /// which compiling capped at [`MAX_DEPTH`], never the value's.
    /// `here`: `path` itself, borrowed from the schema, when it is the root's or a top-level
    /// property's.
    fn walk<'p, T>(
        &'p self,
        id: usize,
        value: &Value,
        path: &mut String,
        here: Option<&'p str>,
        out: &mut Vec<T>,
        make: &impl Fn(Cow<'p, str>, Failure) -> T,
    ) {
        let Some(node) = self.nodes.get(id) else { return };
        let at = |path: &String| here.map_or_else(|| Cow::Owned(path.clone()), Cow::Borrowed);
        if node.types.is_some_and(|t| !t.accepts(value)) {
            out.push(make(at(path), Failure::Type));
        }
        if let Some(strings) = &node.strings
            && !value.as_str().is_some_and(|s| strings.iter().any(|e| e == s))
        {
            out.push(make(at(path), Failure::Enum));
        }
        match value {
            Value::Object(map) => self.object(node, map, path, out, make),
            Value::Array(list) => {
                if let Some(items) = node.items {
                    let len = path.len();
                    for (i, item) in list.iter().enumerate() {
                        pointer::push_index(path, i);
                        self.walk(items, item, path, None, out, make);
                        path.truncate(len);
                    }
                }
            }
            _ => {}
        }
    }

    fn object<'p, T>(
        &'p self,
        node: &'p Node,
        map: &Map<String, Value>,
        path: &mut String,
        out: &mut Vec<T>,
        make: &impl Fn(Cow<'p, str>, Failure) -> T,
    ) {
        let len = path.len();
        // At the root, a property's pointer is its segment.
        let top = len == 0;
        // Members mostly come in the order the properties are declared: the next property
        // is tried first.
        let mut next = 0;
        // The properties given, by position (the first 64).
        let mut given: u64 = 0;
        for (k, v) in map {
            let found = match node.properties.get(next) {
                Some(p) if p.0 == *k => Some((next, p)),
                _ => node.properties.iter().enumerate().find(|(_, p)| p.0 == *k),
            };
            match found {
                Some((at, (_, segment, child))) => {
                    next = at + 1;
                    given |= 1u64.checked_shl(u32::try_from(at).unwrap_or(u32::MAX)).unwrap_or(0);
                    if v.is_object() || v.is_array() {
                        path.push_str(segment);
                        self.walk(*child, v, path, top.then_some(segment.as_str()), out, make);
                        path.truncate(len);
                    } else {
                        // A scalar: its type and enum are all a walk asks of it (no call
                        // for it). At the top its place is its segment; below, its path
                        // is written only for a failure.
                        if let Some(child) = self.nodes.get(*child) {
                            let parent: &str = path;
                            let place = || {
                                if top {
                                    Cow::Borrowed(segment.as_str())
                                } else {
                                    let mut at = String::with_capacity(len + segment.len());
                                    at.push_str(parent);
                                    at.push_str(segment);
                                    Cow::Owned(at)
                                }
                            };
                            if child.types.is_some_and(|t| !t.accepts(v)) {
                                out.push(make(place(), Failure::Type));
                            }
                            if let Some(strings) = &child.strings
                                && !v.as_str().is_some_and(|s| strings.iter().any(|e| e == s))
                            {
                                out.push(make(place(), Failure::Enum));
                            }
                        }
                    }
                }
                None if node.additional_false => {
                    out.push(make(Cow::Owned(pointer::join(path, k)), Failure::Unexpected));
                }
                None => {}
            }
        }
        for (name, at) in &node.required {
            let present = match at {
                Some(i) => given & (1 << i) != 0,
                None if map.len() <= 12 => map.keys().any(|k| k == name),
                None => map.contains_key(name),
            };
            if !present {
                let segment = at.and_then(|i| node.properties.get(i as usize)).map(|p| p.1.as_str());
                let place = match segment {
                    Some(segment) if top => Cow::Borrowed(segment),
                    _ => Cow::Owned(pointer::join(path, name)),
                };
                out.push(make(place, Failure::Missing));
            }
        }
    }
}

/// A `type` keyword's types.
fn types(v: &Value) -> Option<Types> {
    let one = |name: &Value| match name.as_str()? {
        "null" => Some(Types::NULL),
        "boolean" => Some(Types::BOOLEAN),
        "integer" => Some(Types::INTEGER),
        // A number type accepts integers too.
        "number" => Some(Types::NUMBER.union(Types::INTEGER)),
        "string" => Some(Types::STRING),
        "array" => Some(Types::ARRAY),
        "object" => Some(Types::OBJECT),
        _ => None,
    };
    match v {
        Value::Array(names) if !names.is_empty() => {
            names.iter().try_fold(Types::default(), |t, name| Some(t.union(one(name)?)))
        }
        Value::Array(_) => None,
        name => one(name),
    }
}

/// An `enum` of strings only.
fn strings(v: &Value) -> Option<Vec<String>> {
    let list = v.as_array()?;
    if list.is_empty() {
        return None;
    }
    list.iter().map(|e| e.as_str().map(str::to_owned)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::validate::{Detail, Violation, violations_with};
    use proptest::prelude::*;
    use serde_json::json;

    /// The places and kinds, in a fixed order.
    fn sorted(found: Vec<Violation>) -> Vec<(String, crate::validate::ViolationKind)> {
        let mut out: Vec<_> = found.into_iter().map(|v| (v.path.into_owned(), v.kind)).collect();
        out.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| format!("{:?}", a.1).cmp(&format!("{:?}", b.1))));
        out.dedup();
        out
    }

    /// The places alone, in order, each once.
    fn places(found: &[(String, crate::validate::ViolationKind)]) -> Vec<&str> {
        let mut out: Vec<&str> = found.iter().map(|(p, _)| p.as_str()).collect();
        out.dedup();
        out
    }

    /// The plain walk names the places `jsonschema` names (what repair asks), and the same
    /// kinds there when `kinds` is set. (Not always: `jsonschema` also calls a required
    /// member that `additionalProperties: false` refuses missing.)
    fn same_as_jsonschema(schema: &Value, value: &Value, kinds: bool) -> Result<(), TestCaseError> {
        let tool =
            crate::schema::Tool::from_parts("t", "", schema.clone()).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert!(tool.plain().is_some(), "not plain: {schema}");
        let walked = sorted(crate::validate::violations_found(&tool, value, Detail::Paths));
        let reference = sorted(violations_with(tool.validator(), value, Detail::Paths));
        prop_assert_eq!(places(&walked), places(&reference), "schema {} value {}", schema, value);
        prop_assert!(!walked.iter().any(|(_, k)| k.is_coarse()));
        if kinds {
            prop_assert_eq!(walked, reference, "schema {} value {}", schema, value);
        }
        Ok(())
    }

    /// The six schemas of `scripts/bench/gen_inputs.py` (three of them), and the kinds of
    /// damage its workload holds.
    #[test]
    fn bench_schemas_fail_where_jsonschema_says() {
        let weather = json!({"type": "object", "properties": {"location": {"type": "string"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}, "days": {"type": "integer"},
            "alerts": {"type": ["boolean", "null"]},
            "fields": {"type": "array", "items": {"type": "string", "enum": ["temp", "wind"]}}},
            "required": ["location", "unit", "days", "alerts", "fields"], "additionalProperties": false});
        let search = json!({"type": "object", "properties": {"query": {"type": "string"},
            "filters": {"type": "object", "properties": {"site": {"type": "string"}, "recent": {"type": "boolean"}},
                "required": ["site", "recent"], "additionalProperties": false},
            "timeout_s": {"type": "number"}, "params": {"type": "array", "items": {"type": ["integer", "string", "null"]}}},
            "required": ["query", "filters"], "additionalProperties": false});
        for (schema, value) in [
            (
                &weather,
                json!({"location": "Lagos", "unit": "Celsius", "days": "7", "alerts": null, "fields": ["wind", "x", 3]}),
            ),
            (&weather, json!({"location": 1, "Unit": "celsius", "days": 2.0, "alerts": true, "fields": "wind"})),
            (&weather, json!([1, 2])),
            (&weather, json!("x")),
            (
                &search,
                json!({"query": "q", "filters": {"site": "a", "recent": "true", "x~/y": 1}, "timeout_s": 2.5, "params": [1, "a", null, 1.5, true]}),
            ),
            (&search, json!({"query": "q", "filters": "{}", "maxResults": 3, "params": [1.0]})),
            (&search, json!({})),
        ] {
            same_as_jsonschema(schema, &value, true).unwrap();
        }
    }

    #[test]
    fn only_plain_schemas_compile() {
        for schema in [
            json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/a"}}, "$defs": {"a": {"type": "string"}}}),
            json!({"anyOf": [{"type": "string"}, {"type": "null"}]}),
            json!({"type": "object", "properties": {"a": {"type": "string", "minLength": 2}}}),
            json!({"type": "object", "properties": {"a": {"type": "string", "format": "date"}}}),
            json!({"type": "object", "properties": {"a": {"enum": [1, "a"]}}}),
            json!({"type": "object", "properties": {"a": true}}),
            json!({"type": "object", "additionalProperties": {"type": "string"}}),
            json!({"type": "object", "patternProperties": {"^a": {"type": "string"}}}),
            json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"}),
            json!({"type": "array", "items": [{"type": "string"}]}),
        ] {
            assert!(Plain::compile(&schema).is_none(), "{schema}");
        }
        let annotated = json!({"type": "object", "title": "t", "description": "d", "x-toolfix": {"policy": "strict"},
            "properties": {"a": {"type": "string", "default": "x", "examples": ["y"]}}});
        assert!(Plain::compile(&annotated).is_some());
    }

    /// A plain schema over keys `a`, `b`, `c~/`.
    fn arb_schema() -> impl Strategy<Value = Value> {
        let types = prop_oneof![
            Just(json!("string")),
            Just(json!("integer")),
            Just(json!("number")),
            Just(json!("boolean")),
            Just(json!("null")),
            Just(json!(["string", "null"])),
            Just(json!(["integer", "string"])),
        ];
        let leaf = prop_oneof![
            types.prop_map(|t| json!({"type": t})),
            Just(json!({"type": "string", "enum": ["a", "b"]})),
            Just(json!({"enum": ["", "c~/"]})),
            Just(json!({})),
        ];
        leaf.prop_recursive(3, 16, 3, |inner| {
            prop_oneof![
                (
                    proptest::collection::vec(("[abc~/]{1,2}", inner.clone()), 0..3),
                    proptest::collection::vec("[abc]", 0..3),
                    any::<Option<bool>>(),
                    any::<bool>()
                )
                    .prop_map(|(props, required, additional, typed)| {
                        let mut s = Map::new();
                        if typed {
                            s.insert("type".into(), json!("object"));
                        }
                        s.insert("properties".into(), Value::Object(props.into_iter().collect()));
                        let mut required: Vec<String> = required;
                        required.sort();
                        required.dedup();
                        s.insert("required".into(), json!(required));
                        if let Some(a) = additional {
                            s.insert("additionalProperties".into(), json!(a));
                        }
                        Value::Object(s)
                    }),
                (inner, any::<bool>()).prop_map(|(items, typed)| if typed {
                    json!({"type": "array", "items": items})
                } else {
                    json!({"items": items})
                }),
            ]
        })
    }

    /// A value over the keys the generated schemas name.
    fn arb_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            (-3i64..3).prop_map(Value::from),
            prop_oneof![Just(2.0f64), Just(-0.5), Just(1e300)].prop_map(Value::from),
            prop_oneof![Just(""), Just("a"), Just("b"), Just("c~/"), Just("A")]
                .prop_map(|s| Value::String(s.to_owned())),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                proptest::collection::vec(("[abc~/]{1,2}", inner), 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]
        /// On generated plain schemas and values, the walk names the places and kinds
        /// `jsonschema` names.
        #[test]
        fn walk_names_what_jsonschema_names(schema in arb_schema(), value in arb_value()) {
            same_as_jsonschema(&schema, &value, false)?;
        }
    }
}
