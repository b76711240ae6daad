//! Strict JSON text seen through its index as `jsonschema` instances ([`IndexJson`]): a
//! call the schema accepts as written is validated without building its `Value` (its map,
//! its hashes, its strings), by `jsonschema` itself, over the text.
//!
//! Every accessor answers what the same accessor answers on the `Value` `serde_json` reads
//! from the text: strings decoded, numbers as `serde_json::Number` (so integers, `i64`,
//! `u64` and `f64` as `serde_json` tells them), members in text order. The view is made
//! only over text [`index_strict`](super::index_strict) read with no key given twice. A
//! read that cannot be made here (none is expected: the text was read before) marks the
//! view broken, and its answer is not used ([`StrictView::is_broken`]).
//!
//! `tests` run `jsonschema`'s conformance check on it and compare its answers with the
//! `Value`'s on generated schemas and instances.

use super::strict::{children, key_str};
use super::{Key, Node as IndexNode, NodeId, Nodes};
use jsonschema::json::{Array, Json, Node, NodeIdentity, Object};
use jsonschema::types::JsonType;
use serde_json::{Number, Value};
use std::borrow::Cow;
use std::cell::Cell;

/// Strict JSON text and its index, as instances for a validator built for [`IndexJson`].
#[derive(Debug)]
pub(crate) struct StrictView<'t> {
    text: &'t str,
    nodes: &'t [IndexNode],
    decoded: &'t [String],
    broken: Cell<bool>,
}

impl<'t> StrictView<'t> {
    /// The view of `text`, indexed as `nodes` by [`index_strict`](super::index_strict)
    /// with no key given twice.
    pub(crate) fn new(text: &'t str, nodes: &'t Nodes) -> StrictView<'t> {
        StrictView { text, nodes: &nodes.nodes, decoded: &nodes.decoded, broken: Cell::new(false) }
    }

    /// The whole value.
    pub(crate) fn root(&self) -> ViewNode<'_> {
        ViewNode::At(self, 0)
    }

    /// True when a read failed (then the validator's answer says nothing).
    pub(crate) fn is_broken(&self) -> bool {
        self.broken.get()
    }

    fn node(&self, id: NodeId) -> Option<&'t IndexNode> {
        self.nodes.get(id)
    }

    fn first_byte(&self, id: NodeId) -> Option<u8> {
        self.node(id).and_then(|n| self.text.as_bytes().get(n.start)).copied()
    }

    /// The text of node `id`.
    fn text_of(&self, id: NodeId) -> &'t str {
        self.node(id).and_then(|n| self.text.get(n.start..n.end)).unwrap_or_default()
    }

    fn break_it(&self) {
        self.broken.set(true);
    }
}

/// The representation: nodes of a [`StrictView`].
pub(crate) struct IndexJson;

impl Json for IndexJson {
    type Node<'a> = ViewNode<'a>;
    type PreparedKey = String;
    type StringBuffer = ();

    /// A lookup walks the members: a pass over them replaces lookups early.
    const KEYS_PER_LOOKUP: usize = 16;

    fn prepare_key(key: &str) -> String {
        key.to_owned()
    }

    fn with_string_node<T>(_buffer: &mut (), string: &str, f: impl FnOnce(ViewNode<'_>) -> T) -> T {
        f(ViewNode::Name(string))
    }
}

/// One value: a node of the text, or a string standing alone (a property name that
/// `propertyNames` validates).
#[derive(Clone, Copy, Debug)]
pub(crate) enum ViewNode<'a> {
    At(&'a StrictView<'a>, NodeId),
    Name(&'a str),
}

/// An object of the text.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ViewObject<'a> {
    view: &'a StrictView<'a>,
    id: NodeId,
}

/// An array of the text.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ViewArray<'a> {
    view: &'a StrictView<'a>,
    id: NodeId,
}

impl<'a> ViewObject<'a> {
    fn after(&self) -> NodeId {
        self.view.node(self.id).map_or(self.id, |n| n.after)
    }

    fn children(&self) -> impl Iterator<Item = NodeId> + 'a {
        children(self.view.nodes, self.id, self.after())
    }

    fn key(&self, id: NodeId) -> &'a str {
        let view = self.view;
        let key = view.node(id).and_then(|n| key_str(view.text, view.decoded, n));
        key.unwrap_or_else(|| {
            view.break_it();
            ""
        })
    }
}

impl<'a> Node<'a, IndexJson> for ViewNode<'a> {
    type Object = ViewObject<'a>;
    type Array = ViewArray<'a>;
    type Number = Number;

    fn as_object(&self) -> Option<ViewObject<'a>> {
        match *self {
            ViewNode::At(view, id) if view.first_byte(id) == Some(b'{') => Some(ViewObject { view, id }),
            _ => None,
        }
    }

    fn as_array(&self) -> Option<ViewArray<'a>> {
        match *self {
            ViewNode::At(view, id) if view.first_byte(id) == Some(b'[') => Some(ViewArray { view, id }),
            _ => None,
        }
    }

    fn as_string(&self) -> Option<Cow<'a, str>> {
        match *self {
            ViewNode::Name(s) => Some(Cow::Borrowed(s)),
            ViewNode::At(view, id) if view.first_byte(id) == Some(b'"') => {
                let quoted = view.text_of(id);
                let escaped = view.node(id).is_some_and(|n| n.escaped);
                let read = if escaped {
                    serde_json::from_str::<String>(quoted).ok().map(Cow::Owned)
                } else {
                    quoted.get(1..quoted.len().saturating_sub(1)).map(Cow::Borrowed)
                };
                Some(read.unwrap_or_else(|| {
                    view.break_it();
                    Cow::Borrowed("")
                }))
            }
            ViewNode::At(..) => None,
        }
    }

    fn as_number(&self) -> Option<Number> {
        let ViewNode::At(view, id) = *self else { return None };
        if !matches!(view.first_byte(id), Some(b'-' | b'0'..=b'9')) {
            return None;
        }
        Some(read_number(view.text_of(id)).unwrap_or_else(|| {
            view.break_it();
            Number::from(0)
        }))
    }

    fn is_number(&self) -> bool {
        self.json_type() == JsonType::Number
    }

    fn as_boolean(&self) -> Option<bool> {
        match *self {
            ViewNode::At(view, id) => match view.first_byte(id) {
                Some(b't') => Some(true),
                Some(b'f') => Some(false),
                _ => None,
            },
            ViewNode::Name(_) => None,
        }
    }

    fn is_null(&self) -> bool {
        matches!(*self, ViewNode::At(view, id) if view.first_byte(id) == Some(b'n'))
    }

    fn json_type(&self) -> JsonType {
        match *self {
            ViewNode::Name(_) => JsonType::String,
            ViewNode::At(view, id) => match view.first_byte(id) {
                Some(b'{') => JsonType::Object,
                Some(b'[') => JsonType::Array,
                Some(b'"') => JsonType::String,
                Some(b't' | b'f') => JsonType::Boolean,
                Some(b'n') => JsonType::Null,
                Some(b'-' | b'0'..=b'9') => JsonType::Number,
                _ => {
                    view.break_it();
                    JsonType::Null
                }
            },
        }
    }

    fn equals_value(&self, expected: &Value) -> bool {
        match self.json_type() {
            // Scalars compare without a value built for them (strings most: `enum`).
            JsonType::String => match expected {
                Value::String(e) => self.as_string().is_some_and(|s| *s == **e),
                _ => false,
            },
            JsonType::Null => expected.is_null(),
            JsonType::Boolean => expected.as_bool() == self.as_boolean(),
            JsonType::Number => {
                self.as_number().is_some_and(|n| jsonschema::json::cmp::equal(&Value::Number(n), expected))
            }
            _ => jsonschema::json::cmp::equal(&self.to_value(), expected),
        }
    }

    fn to_value(&self) -> Cow<'a, Value> {
        match *self {
            ViewNode::Name(s) => Cow::Owned(Value::String(s.to_owned())),
            ViewNode::At(view, id) => Cow::Owned(serde_json::from_str(view.text_of(id)).unwrap_or_else(|_| {
                view.break_it();
                Value::Null
            })),
        }
    }

    fn identity(&self) -> Option<NodeIdentity> {
        match *self {
            // The node's place in the index: one per node, the same for every handle.
            ViewNode::At(view, id) => view.node(id).map(|n| NodeIdentity::new(std::ptr::from_ref(n) as usize)),
            ViewNode::Name(_) => None,
        }
    }
}

/// True when member node `n` has key `key` (a raw key compared as bytes: its span lies
/// between quotes, no char boundary to check).
fn key_is(view: &StrictView<'_>, n: &IndexNode, key: &str) -> bool {
    match n.key {
        Key::Raw(s, e) => view.text.as_bytes().get(s..e) == Some(key.as_bytes()),
        _ => key_str(view.text, view.decoded, n) == Some(key),
    }
}

/// A number token as `serde_json` reads it: a plain integer of up to 18 digits here, any
/// other by `serde_json`.
fn read_number(token: &str) -> Option<Number> {
    let (negative, digits) = match token.strip_prefix('-') {
        Some(d) => (true, d.as_bytes()),
        None => (false, token.as_bytes()),
    };
    let plain = !digits.is_empty()
        && digits.len() <= 18
        && digits.iter().all(u8::is_ascii_digit)
        && (digits.len() == 1 || digits.first() != Some(&b'0'))
        && !(negative && digits == b"0");
    if !plain {
        return serde_json::from_str::<Number>(token).ok();
    }
    let n = digits.iter().fold(0u64, |n, d| n * 10 + u64::from(d - b'0'));
    // At most 18 digits: fits an i64.
    Some(if negative { Number::from(-(n.cast_signed())) } else { Number::from(n) })
}

/// The members of an object, in text order.
pub(crate) struct Members<'a> {
    object: ViewObject<'a>,
    elements: Elements<'a>,
}

impl<'a> Iterator for Members<'a> {
    type Item = (&'a str, ViewNode<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        let node = self.elements.next()?;
        let ViewNode::At(view, id) = node else { return None };
        Some((self.object.key(id), ViewNode::At(view, id)))
    }
}

impl<'a> Object<'a, IndexJson> for ViewObject<'a> {
    type Node = ViewNode<'a>;
    type MemberName = &'a str;
    type MembersIter = Members<'a>;

    fn len(&self) -> usize {
        self.children().count()
    }

    fn get(&self, key: &String) -> Option<ViewNode<'a>> {
        // Keys are not given twice in a view: the first match is the only one.
        let view = self.view;
        self.children().find(|&c| view.node(c).is_some_and(|n| key_is(view, n, key))).map(|c| ViewNode::At(view, c))
    }

    fn members(&self) -> Members<'a> {
        Members { object: *self, elements: Elements { view: self.view, next: self.id + 1, after: self.after() } }
    }
}

impl<'a> Array<'a, IndexJson> for ViewArray<'a> {
    type Node = ViewNode<'a>;
    type ElementsIter = Elements<'a>;

    fn len(&self) -> usize {
        self.elements().count()
    }

    fn elements(&self) -> Elements<'a> {
        let after = self.view.node(self.id).map_or(self.id, |n| n.after);
        Elements { view: self.view, next: self.id + 1, after }
    }
}

/// The elements of an array, in order.
pub(crate) struct Elements<'a> {
    view: &'a StrictView<'a>,
    next: NodeId,
    after: NodeId,
}

impl<'a> Iterator for Elements<'a> {
    type Item = ViewNode<'a>;

    fn next(&mut self) -> Option<Self::Item> {
        let at = self.next;
        if at >= self.after {
            return None;
        }
        self.next = self.view.node(at).map_or(self.after, |n| n.after);
        Some(ViewNode::At(self.view, at))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::pointer::{Scratch, index_strict};
    use proptest::prelude::*;
    use serde_json::json;

    /// `jsonschema`'s answer over the view and over the value `serde_json` reads, for
    /// strict `text` with no key given twice (other text is not viewed).
    fn both(schema: &Value, text: &str) -> Option<(bool, bool)> {
        let Ok(indexed) = index_strict(text, &mut Scratch::default()) else { return None };
        if indexed.dupes {
            return None;
        }
        let value: Value = serde_json::from_str(text).ok()?;
        let by_value = jsonschema::options().build(schema).ok()?.is_valid(&value);
        let strict = jsonschema::options_for::<IndexJson>().build(schema).ok()?;
        let view = StrictView::new(text, &indexed.nodes);
        let by_view = strict.is_valid(view.root());
        assert!(!view.is_broken(), "{text}");
        Some((by_view, by_value))
    }

    #[test]
    fn keeps_the_contract_jsonschema_relies_on() {
        for text in [
            jsonschema::json::conformance::document().to_string(),
            serde_json::to_string_pretty(&jsonschema::json::conformance::document()).unwrap_or_default(),
        ] {
            let indexed = index_strict(&text, &mut Scratch::default()).expect("strict");
            let view = StrictView::new(&text, &indexed.nodes);
            jsonschema::json::conformance::assert_conformance::<IndexJson>(&view.root());
            assert!(!view.is_broken());
        }
    }

    #[test]
    fn answers_as_the_value_does() {
        let schema = json!({"type": "object", "properties": {"city": {"type": "string", "minLength": 2},
            "days": {"type": "integer", "minimum": 1}, "unit": {"enum": ["c", "f", 1.0]}},
            "required": ["city"], "additionalProperties": false});
        for text in [
            r#"{"city": "Paris", "days": 3}"#,
            r#"{"city": "P", "days": 3}"#,
            r#"{"city": "Paris", "days": 3.0}"#,
            r#"{"city": "Paris", "days": 1e0}"#,
            r#"{"city": "Paris", "days": -0}"#,
            r#"{"city": "Paris", "days": 12345678901234567890}"#,
            r#"{"city": "Paris", "unit": 1}"#,
            r#"{"city": "Paris", "unit": "c"}"#,
            r#"{"city": "Paris", "unit": "\u0063"}"#,
            r#"{"\u0063ity": "Paris"}"#,
            r#"{"city": "\u00e9\u00e9"}"#,
            r#"{"city": "é"}"#,
            r#"{"days": 3}"#,
            r#"{"city": "Paris", "x": 1}"#,
            "[]",
        ] {
            let (by_view, by_value) = both(&schema, text).expect("strict");
            assert_eq!(by_view, by_value, "{text}");
        }
    }

    /// Number spellings `serde_json` reads apart (`u64`, `i64`, `f64`, `-0`).
    fn arb_number() -> impl Strategy<Value = &'static str> {
        prop::sample::select(vec![
            "0",
            "-0",
            "1",
            "1.0",
            "1e2",
            "1E-2",
            "-5",
            "2.5",
            "3.0",
            "-3.5",
            "0.1",
            "1e300",
            "12345678901234567890",
            "-9223372036854775808",
            "-9223372036854775809",
            "123456789012345678",
        ])
    }

    /// A strict text: a generated value, compact or pretty, or numbers spelled every way.
    pub(crate) fn arb_text() -> impl Strategy<Value = String> {
        prop_oneof![
            (crate::pointer::tests::arb_value(), any::<bool>()).prop_map(|(v, pretty)| {
                let text = if pretty { serde_json::to_string_pretty(&v) } else { serde_json::to_string(&v) };
                text.unwrap_or_default()
            }),
            (arb_number(), arb_number(), arb_number())
                .prop_map(|(a, b, c)| format!(r#"{{"a": {a}, "b": [{b}, {c}], "c": {{"a": {c}}}}}"#)),
            (arb_number(), "[abc]{0,2}").prop_map(|(n, s)| format!(r#"{{"a": "{s}", "b": {n}}}"#)),
        ]
    }

    /// Schemas made of the keywords tool parameters use, and then some.
    pub(crate) fn arb_schema() -> impl Strategy<Value = Value> {
        let pool = || {
            prop::sample::select(vec![
                json!("a"),
                json!(""),
                json!(1),
                json!(1.0),
                json!(-0.0),
                json!(2.5),
                json!(null),
                json!(true),
                json!({"a": 1}),
                json!([1]),
                json!([]),
                json!({}),
            ])
        };
        let leaf = prop_oneof![
            prop::sample::select(vec!["string", "integer", "number", "object", "array", "boolean", "null"])
                .prop_map(|t| json!({"type": t})),
            prop::collection::vec(pool(), 1..4).prop_map(|e| json!({"enum": e})),
            pool().prop_map(|c| json!({"const": c})),
            (0u64..3).prop_map(|n| json!({"minLength": n})),
            (0u64..3).prop_map(|n| json!({"maxLength": n})),
            Just(json!({"pattern": "^a"})),
            (-2i64..3).prop_map(|n| json!({"minimum": n})),
            Just(json!({"exclusiveMaximum": 1.5})),
            prop::sample::select(vec![0.5, 2.0, 3.0]).prop_map(|m| json!({"multipleOf": m})),
            (0u64..3).prop_map(|n| json!({"minItems": n})),
            (0u64..3).prop_map(|n| json!({"maxProperties": n})),
            Just(json!({"uniqueItems": true})),
            Just(json!({"required": ["a"]})),
            Just(json!({"required": ["a", "b"]})),
            Just(json!({"dependentRequired": {"a": ["b"]}})),
            Just(json!({"propertyNames": {"maxLength": 1}})),
            Just(json!(true)),
            Just(json!(false)),
        ];
        leaf.prop_recursive(3, 16, 3, |inner| {
            prop_oneof![
                (inner.clone(), inner.clone(), inner.clone())
                    .prop_map(|(a, b, rest)| json!({"properties": {"a": a, "b": b}, "additionalProperties": rest})),
                inner.clone().prop_map(|s| json!({"items": s})),
                (inner.clone(), inner.clone()).prop_map(|(p, s)| json!({"prefixItems": [p], "items": s})),
                inner.clone().prop_map(|s| json!({"contains": s})),
                (inner.clone(), inner.clone()).prop_map(|(a, b)| json!({"anyOf": [a, b]})),
                (inner.clone(), inner.clone()).prop_map(|(a, b)| json!({"oneOf": [a, b]})),
                (inner.clone(), inner.clone()).prop_map(|(a, b)| json!({"allOf": [a, b]})),
                inner.clone().prop_map(|s| json!({"not": s})),
                inner.clone().prop_map(|s| json!({"patternProperties": {"^a": s}})),
                (inner.clone(), inner.clone(), inner.clone()).prop_map(|(i, t, e)| json!({"if": i, "then": t, "else": e})),
                inner.clone().prop_map(|s| json!({"dependentSchemas": {"a": s}})),
                inner.clone().prop_map(|s| json!({"allOf": [{"properties": {"a": s}}], "unevaluatedProperties": false})),
                inner.clone().prop_map(|s| json!({"$defs": {"n": s}, "anyOf": [{"$ref": "#/$defs/n"}, {"type": "object", "properties": {"a": {"$ref": "#"}}}]})),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2048))]
        #[test]
        fn answers_as_the_value_does_on_any_schema(schema in arb_schema(), text in arb_text()) {
            if let Some((by_view, by_value)) = both(&schema, &text) {
                prop_assert_eq!(by_view, by_value, "{} against {}", text, schema);
            }
        }
    }
}
