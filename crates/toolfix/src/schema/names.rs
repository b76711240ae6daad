//! What repair asks of a schema's property names on every call, computed once when the tool
//! is compiled: each name normalised (case and separators dropped, as
//! [`view::normalise`](super::view::normalise)), and whether any property declares aliases.

use super::view;
use serde_json::Value;

/// The normalised form of every property name in one schema. A name is found by where its
/// text lives (the schema is never changed once compiled, so that never moves); a name
/// not found is normalised on the spot.
#[derive(Debug, Default)]
pub(crate) struct PropertyNames {
    /// (address, length) of each name's text, sorted, and its normalised form.
    normalised: Vec<((usize, usize), String)>,
    /// The address of each `properties` map, sorted, and its names normalised in the map's
    /// order (repair reads a plain node's properties this way, nothing gathered per call).
    objects: Vec<(usize, Vec<String>)>,
    /// Some node carries `aliases` under `x-toolfix` or `dirge-hints`.
    has_aliases: bool,
}

impl PropertyNames {
    /// Every name under a `properties` keyword of `schema` (explicit stack: no recursion).
    pub(crate) fn of(schema: &Value) -> PropertyNames {
        let mut out = PropertyNames::default();
        let mut stack = vec![schema];
        while let Some(node) = stack.pop() {
            match node {
                Value::Object(map) => {
                    for (k, v) in map {
                        match (k.as_str(), v) {
                            ("properties", Value::Object(props)) => {
                                let names: Vec<String> = props.keys().map(|name| view::normalise(name)).collect();
                                out.normalised
                                    .extend(props.keys().zip(&names).map(|(name, n)| (place(name), n.clone())));
                                out.objects.push((std::ptr::from_ref(props) as usize, names));
                            }
                            ("x-toolfix" | "dirge-hints", Value::Object(hints)) if hints.contains_key("aliases") => {
                                out.has_aliases = true;
                            }
                            _ => {}
                        }
                        stack.push(v);
                    }
                }
                Value::Array(list) => stack.extend(list),
                _ => {}
            }
        }
        out.normalised.sort_unstable_by_key(|(at, _)| *at);
        out.normalised.dedup_by_key(|(at, _)| *at);
        out.objects.sort_unstable_by_key(|(at, _)| *at);
        out.objects.dedup_by_key(|(at, _)| *at);
        out
    }

    /// The names of `properties` (a `properties` map of this schema) normalised, in its
    /// order; `None` for any other map.
    pub(crate) fn of_object(&self, properties: &serde_json::Map<String, Value>) -> Option<&[String]> {
        let at = std::ptr::from_ref(properties) as usize;
        let i = self.objects.binary_search_by_key(&at, |(p, _)| *p).ok()?;
        self.objects.get(i).map(|(_, names)| names.as_slice()).filter(|names| names.len() == properties.len())
    }

    /// `name` normalised: looked up when it is a property name of this schema.
    pub(crate) fn normalised<'s>(&'s self, name: &str) -> std::borrow::Cow<'s, str> {
        let at = place(name);
        match self.normalised.binary_search_by_key(&at, |(p, _)| *p) {
            Ok(i) if at.1 > 0 => self.normalised.get(i).map_or_else(|| view::normalise(name).into(), |(_, n)| n.into()),
            _ => view::normalise(name).into(),
        }
    }

    /// True when some node of the schema may declare property aliases.
    pub(crate) fn has_aliases(&self) -> bool {
        self.has_aliases
    }
}

/// Where a name's text lives: address and length.
fn place(name: &str) -> (usize, usize) {
    (name.as_ptr() as usize, name.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_of_the_schema_are_looked_up() {
        let schema = json!({"type": "object", "properties": {"maxResults": {}, "sub": {"type": "object",
            "properties": {"dry-run": {}}}}, "$defs": {"x": {"properties": {"Time_Zone": {}}}}});
        let names = PropertyNames::of(&schema);
        assert!(!names.has_aliases());
        let props = schema["properties"].as_object().unwrap();
        let (key, _) = props.iter().next().unwrap();
        assert!(matches!(names.normalised(key), std::borrow::Cow::Borrowed("maxresults")));
        let (sub, _) = schema["properties"]["sub"]["properties"].as_object().unwrap().iter().next().unwrap();
        assert_eq!(names.normalised(sub), "dryrun");
        let (def, _) = schema["$defs"]["x"]["properties"].as_object().unwrap().iter().next().unwrap();
        assert!(matches!(names.normalised(def), std::borrow::Cow::Borrowed("timezone")));
        // Any other text is normalised on the spot.
        assert!(matches!(names.normalised("Max_Results"), std::borrow::Cow::Owned(ref s) if s == "maxresults"));
        let aliased = json!({"properties": {"q": {"x-toolfix": {"aliases": ["query"]}}}});
        assert!(PropertyNames::of(&aliased).has_aliases());
    }
}
