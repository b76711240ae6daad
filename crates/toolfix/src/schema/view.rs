//! Read-only navigation of a JSON Schema: local `$ref`, `anyOf` / `oneOf` / `allOf`,
//! the types a node allows, its properties and items. Used by repair and feedback.

use serde_json::Value;

/// How many `$ref` hops and combinator branches one lookup follows at most.
const MAX_HOPS: usize = 32;
const MAX_BRANCHES: usize = 64;

/// Up to this many keys, a schema node's keyword is found by comparing keys in order,
/// cheaper than hashing the keyword (schema nodes hold a handful of keywords).
const SCAN_KEYS: usize = 12;

/// The value of keyword `name` in an object node.
fn key<'a>(obj: &'a serde_json::Map<String, Value>, name: &str) -> Option<&'a Value> {
    if obj.len() <= SCAN_KEYS { obj.iter().find_map(|(k, v)| (k == name).then_some(v)) } else { obj.get(name) }
}

/// The value of keyword `name` in a node, when it is an object.
pub(crate) fn field<'a>(node: &'a Value, name: &str) -> Option<&'a Value> {
    key(node.as_object()?, name)
}

/// A set of JSON types, as bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) struct Types(u8);

impl Types {
    pub(crate) const NULL: Types = Types(1);
    pub(crate) const BOOLEAN: Types = Types(2);
    pub(crate) const INTEGER: Types = Types(4);
    pub(crate) const NUMBER: Types = Types(8);
    pub(crate) const STRING: Types = Types(16);
    pub(crate) const ARRAY: Types = Types(32);
    pub(crate) const OBJECT: Types = Types(64);
    pub(crate) const ANY: Types = Types(127);

    pub(crate) fn has(self, other: Types) -> bool {
        self.0 & other.0 != 0
    }

    pub(crate) fn union(self, other: Types) -> Types {
        Types(self.0 | other.0)
    }

    fn from_name(name: &str) -> Types {
        match name {
            "null" => Types::NULL,
            "boolean" => Types::BOOLEAN,
            "integer" => Types::INTEGER,
            // A number type accepts integers too.
            "number" => Types(Types::NUMBER.0 | Types::INTEGER.0),
            "string" => Types::STRING,
            "array" => Types::ARRAY,
            "object" => Types::OBJECT,
            _ => Types::default(),
        }
    }

    /// The type of a value (an integral number counts as integer and number).
    pub(crate) fn of(value: &Value) -> Types {
        match value {
            Value::Null => Types::NULL,
            Value::Bool(_) => Types::BOOLEAN,
            Value::Number(n) if n.is_f64() => Types::NUMBER,
            Value::Number(_) => Types::INTEGER,
            Value::String(_) => Types::STRING,
            Value::Array(_) => Types::ARRAY,
            Value::Object(_) => Types::OBJECT,
        }
    }

    /// True when a value of type `value` is accepted: integers are numbers, and an
    /// integral float (`3.0`) is an integer.
    pub(crate) fn accepts(self, value: &Value) -> bool {
        match value {
            Value::Number(n) => {
                self.has(Types::NUMBER)
                    || (self.has(Types::INTEGER) && (!n.is_f64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)))
            }
            other => self.has(Types::of(other)),
        }
    }

    /// Names of the types, for messages.
    pub(crate) fn names(self) -> Vec<&'static str> {
        let mut out = Vec::new();
        if self == Types::ANY {
            return out;
        }
        for (bit, name) in [
            (Types::STRING, "string"),
            (Types::INTEGER, "integer"),
            (Types::NUMBER, "number"),
            (Types::BOOLEAN, "boolean"),
            (Types::ARRAY, "array"),
            (Types::OBJECT, "object"),
            (Types::NULL, "null"),
        ] {
            if self.has(bit) && !(bit == Types::INTEGER && self.has(Types::NUMBER)) {
                out.push(name);
            }
        }
        out
    }
}

/// Follow local `$ref`s (`#`, `#/$defs/x`, `#/definitions/x`) from `node`.
pub(crate) fn resolve<'a>(root: &'a Value, mut node: &'a Value) -> &'a Value {
    for _ in 0..MAX_HOPS {
        let Some(reference) = field(node, "$ref").and_then(Value::as_str) else {
            return node;
        };
        let Some(pointer) = reference.strip_prefix('#') else {
            return node;
        };
        match root.pointer(&percent_decode(pointer)) {
            Some(target) => node = target,
            None => return node,
        }
    }
    node
}

fn percent_decode(pointer: &str) -> String {
    if !pointer.contains('%') {
        return pointer.to_owned();
    }
    let bytes = pointer.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b == b'%'
            && let Some(hex) = pointer.get(i + 1..i + 3)
            && let Ok(v) = u8::from_str_radix(hex, 16)
        {
            out.push(v);
            i += 3;
            continue;
        }
        out.push(b);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The node and the branches reachable through `allOf` (all must hold) and, separately,
/// `anyOf` / `oneOf` (one must hold), `$ref`s resolved.
#[derive(Debug, Default)]
pub(crate) struct Branches<'a> {
    /// The node itself and its `allOf` parts.
    pub(crate) all: Vec<&'a Value>,
    /// `anyOf` / `oneOf` alternatives (flattened one level deep per hop).
    pub(crate) any: Vec<&'a Value>,
}

pub(crate) fn branches<'a>(root: &'a Value, node: &'a Value) -> Branches<'a> {
    let mut out = Branches::default();
    let mut todo = vec![(resolve(root, node), true)];
    let mut seen = 0;
    while let Some((n, is_all)) = todo.pop() {
        seen += 1;
        if seen > MAX_BRANCHES {
            break;
        }
        let Some(obj) = n.as_object() else {
            if is_all {
                out.all.push(n);
            } else {
                out.any.push(n);
            }
            continue;
        };
        // One pass over the node's own keys (few) instead of a hashed lookup per keyword.
        let (mut all_of, mut any_of, mut one_of) = (None, None, None);
        for (k, v) in obj {
            match k.as_str() {
                "allOf" => all_of = v.as_array(),
                "anyOf" => any_of = v.as_array(),
                "oneOf" => one_of = v.as_array(),
                _ => {}
            }
        }
        let has_alts = any_of.is_some() || one_of.is_some();
        if is_all {
            out.all.push(n);
        } else if !has_alts {
            out.any.push(n);
        }
        if let Some(parts) = all_of {
            for p in parts {
                todo.push((resolve(root, p), is_all));
            }
        }
        for parts in [any_of, one_of].into_iter().flatten() {
            for p in parts {
                todo.push((resolve(root, p), false));
            }
        }
    }
    out
}

fn own_types(node: &Value) -> Option<Types> {
    let obj = node.as_object()?;
    if let Some(t) = key(obj, "type") {
        return Some(match t {
            Value::String(s) => Types::from_name(s),
            Value::Array(list) => {
                list.iter().filter_map(Value::as_str).fold(Types::default(), |acc, s| acc.union(Types::from_name(s)))
            }
            _ => Types::ANY,
        });
    }
    match (key(obj, "enum"), key(obj, "const")) {
        (Some(Value::Array(list)), _) => Some(list.iter().fold(Types::default(), |acc, v| acc.union(Types::of(v)))),
        (_, Some(c)) => Some(Types::of(c)),
        _ => None,
    }
}

/// True when `node` is an object schema with no `$ref` and no `allOf` / `anyOf` / `oneOf`:
/// its branches are itself alone, found without building them.
fn is_plain(node: &Value) -> bool {
    node.as_object().is_some_and(|obj| {
        obj.len() <= SCAN_KEYS && !obj.keys().any(|k| matches!(k.as_str(), "$ref" | "allOf" | "anyOf" | "oneOf"))
    })
}

/// The types a node allows (`Types::ANY` when it does not say).
pub(crate) fn types(root: &Value, node: &Value) -> Types {
    if is_plain(node) {
        return own_types(node).unwrap_or(Types::ANY);
    }
    let b = branches(root, node);
    let mut t = Types::ANY;
    for n in &b.all {
        if n.as_bool() == Some(false) {
            return Types::default();
        }
        if let Some(own) = own_types(n) {
            t = Types(t.0 & own.0);
        }
    }
    if !b.any.is_empty() {
        let alts = b.any.iter().fold(Types::default(), |acc, n| match n {
            Value::Bool(true) => Types::ANY,
            other => acc.union(own_types(other).unwrap_or(Types::ANY)),
        });
        t = Types(t.0 & alts.0);
    }
    t
}

/// The `enum` (or `const`) values a node allows, when it lists them.
pub(crate) fn enum_values<'a>(root: &'a Value, node: &'a Value) -> Option<Vec<&'a Value>> {
    if is_plain(node) {
        // Its branches are itself alone.
        return match (field(node, "enum"), field(node, "const")) {
            (Some(Value::Array(list)), _) => Some(list.iter().collect()),
            (_, Some(c)) => Some(vec![c]),
            _ => None,
        };
    }
    let b = branches(root, node);
    let mut out: Option<Vec<&Value>> = None;
    for n in b.all.iter().chain(b.any.iter()) {
        if let Some(list) = field(n, "enum").and_then(Value::as_array) {
            out.get_or_insert_with(Vec::new).extend(list.iter());
        } else if let Some(c) = field(n, "const") {
            out.get_or_insert_with(Vec::new).push(c);
        } else if !b.any.is_empty() && b.any.iter().any(|x| std::ptr::eq(*x, *n)) {
            // An alternative without an enum allows other values: only report the enum
            // when every alternative that admits strings has one.
            if own_types(n).is_none_or(|t| t.has(Types::STRING)) {
                return None;
            }
        }
    }
    out
}

/// What a node says about an object: properties, required names, extra properties.
///
/// A plain node (the common case) is read in place, nothing copied: its `properties` map
/// and `required` list are borrowed. A node with parts has them merged into lists.
#[derive(Debug, Default)]
pub(crate) struct ObjectView<'a> {
    /// A plain node's `properties`.
    own_properties: Option<&'a serde_json::Map<String, Value>>,
    /// A plain node's `required`.
    own_required: &'a [Value],
    /// The merged properties of a node with parts (names unique, first part first).
    merged_properties: Vec<(&'a str, &'a Value)>,
    merged_required: Vec<&'a str>,
    /// False when extra properties are forbidden.
    pub(crate) additional_allowed: bool,
}

impl<'a> ObjectView<'a> {
    /// The properties, in order: each name once.
    pub(crate) fn properties(&self) -> impl DoubleEndedIterator<Item = (&'a str, &'a Value)> + Clone + use<'a, '_> {
        self.own_properties
            .into_iter()
            .flat_map(|m| m.iter().map(|(k, v)| (k.as_str(), v)))
            .chain(self.merged_properties.iter().copied())
    }

    /// A plain node's `properties` map, when the view is that map alone.
    pub(crate) fn own_properties(&self) -> Option<&'a serde_json::Map<String, Value>> {
        self.own_properties.filter(|_| self.merged_properties.is_empty())
    }

    /// True when the node names any property.
    pub(crate) fn has_properties(&self) -> bool {
        self.own_properties.is_some_and(|m| !m.is_empty()) || !self.merged_properties.is_empty()
    }

    /// The required names, in order.
    pub(crate) fn required(&self) -> impl Iterator<Item = &'a str> + Clone + use<'a, '_> {
        self.own_required.iter().filter_map(Value::as_str).chain(self.merged_required.iter().copied())
    }

    pub(crate) fn property(&self, name: &str) -> Option<&'a Value> {
        match self.own_properties {
            Some(m) if m.len() <= SCAN_KEYS => m.iter().find_map(|(k, v)| (k == name).then_some(v)),
            Some(m) => m.get(name),
            None => self.merged_properties.iter().find(|(k, _)| *k == name).map(|(_, v)| *v),
        }
    }

    pub(crate) fn is_required(&self, name: &str) -> bool {
        self.required().any(|r| r == name)
    }
}

/// The object view of a node: its own keywords merged with its `allOf` parts, plus the one
/// object alternative of an `anyOf` / `oneOf` when there is exactly one.
pub(crate) fn object_view<'a>(root: &'a Value, node: &'a Value) -> ObjectView<'a> {
    let mut view = ObjectView { additional_allowed: true, ..ObjectView::default() };
    if is_plain(node) {
        view.read_plain(node);
        return view;
    }
    let b = branches(root, node);
    let object_alts: Vec<&Value> = b.any.iter().copied().filter(|n| field(n, "properties").is_some()).collect();
    let mut parts = b.all;
    if object_alts.len() == 1 {
        parts.extend(object_alts);
    }
    let one_part = parts.len() == 1;
    for n in parts {
        view.add_part(n, one_part);
    }
    view
}

impl<'a> ObjectView<'a> {
    /// What a plain node says, borrowed (as [`ObjectView::add_part`] of its one part).
    fn read_plain(&mut self, n: &'a Value) {
        let Some(obj) = n.as_object() else { return };
        let mut pattern = false;
        for (k, v) in obj {
            match k.as_str() {
                "properties" => self.own_properties = v.as_object(),
                "required" => self.own_required = v.as_array().map_or(&[], Vec::as_slice),
                "additionalProperties" | "unevaluatedProperties" if v.as_bool() == Some(false) => {
                    self.additional_allowed = false;
                }
                "patternProperties" => pattern = true,
                _ => {}
            }
        }
        if pattern {
            self.additional_allowed = true;
        }
    }

    /// Merge what one part (`n`, the node or one of its `allOf` parts) says; `one_part`:
    /// it is the only part, so its property names are unique already.
    fn add_part(&mut self, n: &'a Value, one_part: bool) {
        let view = self;
        let Some(obj) = n.as_object() else { return };
        let mut pattern = false;
        for (k, v) in obj {
            match k.as_str() {
                "properties" => {
                    if let Some(props) = v.as_object() {
                        view.merged_properties.reserve(props.len());
                        for (name, schema) in props {
                            // One part: names are unique already.
                            if one_part || view.property(name).is_none() {
                                view.merged_properties.push((name.as_str(), schema));
                            }
                        }
                    }
                }
                "required" => {
                    if let Some(req) = v.as_array() {
                        view.merged_required.extend(req.iter().filter_map(Value::as_str));
                    }
                }
                "additionalProperties" | "unevaluatedProperties" if v.as_bool() == Some(false) => {
                    view.additional_allowed = false;
                }
                "patternProperties" => pattern = true,
                _ => {}
            }
        }
        if pattern {
            view.additional_allowed = true;
        }
    }
}

/// The items schema of an array node.
pub(crate) fn items<'a>(root: &'a Value, node: &'a Value) -> Option<&'a Value> {
    if is_plain(node) {
        return field(node, "items").filter(|i| i.is_object() || i.is_boolean());
    }
    let b = branches(root, node);
    b.all.iter().chain(b.any.iter()).find_map(|n| field(n, "items")).filter(|i| i.is_object() || i.is_boolean())
}

/// A property's hint under `x-toolfix` or `dirge-hints`.
pub(crate) fn prop_hint<'a>(root: &'a Value, node: &'a Value, key: &str) -> Option<&'a Value> {
    let n = resolve(root, node);
    for holder in [node, n] {
        for ns in ["x-toolfix", "dirge-hints"] {
            if let Some(v) = field(holder, ns).and_then(|h| field(h, key)) {
                return Some(v);
            }
        }
    }
    None
}

/// True when a property is tagged as a path or URL.
pub(crate) fn is_path_or_url(root: &Value, node: &Value) -> bool {
    prop_hint(root, node, "semantic")
        .and_then(Value::as_str)
        .is_some_and(|s| matches!(s, "path" | "url" | "uri" | "absolute_path" | "relative_path" | "file_path"))
}

/// The declared aliases of a property.
pub(crate) fn aliases<'a>(root: &'a Value, node: &'a Value) -> Vec<&'a str> {
    match field(node, "x-toolfix").and_then(|h| field(h, "aliases")).or_else(|| prop_hint(root, node, "aliases")) {
        Some(Value::Array(list)) => list.iter().filter_map(Value::as_str).collect(),
        Some(Value::String(s)) => vec![s.as_str()],
        _ => Vec::new(),
    }
}

/// True when `node` allows `null`.
pub(crate) fn allows_null(root: &Value, node: &Value) -> bool {
    types(root, node).has(Types::NULL)
}

/// Normalise a name: lowercase, without `_`, `-`, spaces and dots.
/// The schema node for an instance path (a JSON pointer), following properties and items,
/// `$ref`s resolved.
pub(crate) fn node_at<'a>(root: &'a Value, path: &str) -> Option<&'a Value> {
    let mut node = root;
    for seg in path.split('/').skip(1) {
        let seg = seg.replace("~1", "/").replace("~0", "~");
        let resolved = resolve(root, node);
        node = match object_view(root, resolved).property(&seg) {
            Some(p) => p,
            None => items(root, resolved)?,
        };
    }
    Some(resolve(root, node))
}

/// `normalise(name)` written into `buf`, for an ASCII `name` that fits (no string made);
/// `None` otherwise.
pub(crate) fn normalise_into<'b>(name: &str, buf: &'b mut [u8]) -> Option<&'b [u8]> {
    if !name.is_ascii() || name.len() > buf.len() {
        return None;
    }
    let mut n = 0;
    for (slot, b) in buf.iter_mut().zip(kept_ascii(name)) {
        *slot = b;
        n += 1;
    }
    buf.get(..n)
}

/// The bytes of ASCII `name` normalised.
fn kept_ascii(name: &str) -> impl Iterator<Item = u8> + '_ {
    name.bytes().filter(|b| !matches!(b, b'_' | b'-' | b' ')).map(|b| b.to_ascii_lowercase())
}

/// True when `normalise(a) == normalise(b)`, told in place (no string made) when both are
/// ASCII.
pub(crate) fn same_normalised(a: &str, b: &str) -> bool {
    if !(a.is_ascii() && b.is_ascii()) {
        return normalise(a) == normalise(b);
    }
    kept_ascii(a).eq(kept_ascii(b))
}

pub(crate) fn normalise(name: &str) -> String {
    if name.is_ascii() {
        // The same, byte by byte (an ASCII letter lowercases to one ASCII letter), written
        // as bytes: ASCII in, ASCII out.
        let mut out = Vec::with_capacity(name.len());
        out.extend(name.bytes().filter(|b| !matches!(b, b'_' | b'-' | b' ')).map(|b| b.to_ascii_lowercase()));
        return String::from_utf8(out).unwrap_or_default();
    }
    name.chars().filter(|c| !matches!(c, '_' | '-' | ' ')).flat_map(char::to_lowercase).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn types_through_anyof_and_ref() {
        let root = json!({"$defs": {"n": {"type": "integer"}}, "properties": {
            "a": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
            "b": {"$ref": "#/$defs/n"},
            "c": {"type": ["string", "null"]}
        }});
        let p = |k: &str| root.pointer(&format!("/properties/{k}")).unwrap();
        assert!(types(&root, p("a")).has(Types::NULL));
        assert!(types(&root, p("a")).has(Types::INTEGER));
        assert!(!types(&root, p("a")).has(Types::STRING));
        assert_eq!(types(&root, p("b")), Types::INTEGER);
        assert!(types(&root, p("c")).has(Types::STRING));
    }

    #[test]
    fn normalise_names() {
        assert_eq!(normalise("read_file"), normalise("ReadFile"));
        assert_eq!(normalise("max-results"), normalise("max_results"));
        assert_eq!(normalise("file path"), "filepath");
        for name in ["Max_Results", "dry-run", "A b_C-d", "ÄÖ_ü", "İstanbul", "x\u{212A}"] {
            let slow: String =
                name.chars().filter(|c| !matches!(c, '_' | '-' | ' ')).flat_map(char::to_lowercase).collect();
            assert_eq!(normalise(name), slow, "{name}");
        }
    }
}
