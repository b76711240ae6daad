//! The server's own `tool_calls`, read the same way whole and streamed: a call with an
//! empty name gets the one declared tool its arguments fit (when exactly one does), and
//! arguments holding two parallel calls' objects back to back (`{…}{…}`) become one call
//! each, when every object is a complete call for that tool.

use super::json::scan::{End, value_end};
use super::{Channel, ExtractedCall, Format, ToolLookup};
use crate::Span;
use serde_json::Value;
use std::borrow::Cow;

/// Most calls one `arguments` text is split into.
const MAX_PARTS: usize = 64;

/// The calls one server-parsed call (`index` in the reply's list) stands for.
pub(crate) fn calls<'a>(
    name: Cow<'a, str>,
    arguments: Cow<'a, str>,
    id: Option<Cow<'a, str>>,
    index: usize,
    tools: Option<&dyn ToolLookup>,
) -> Vec<ExtractedCall<'a>> {
    let name = if name.trim().is_empty() {
        match tools.and_then(|t| infer_name(t, &arguments)) {
            Some(n) => Cow::Owned(n),
            None => name,
        }
    } else {
        name
    };
    let one = |name: Cow<'a, str>, arguments: Cow<'a, str>, id: Option<Cow<'a, str>>| ExtractedCall {
        name,
        arguments,
        id,
        format: Format::Native,
        channel: Channel::ToolCalls,
        span: Span::at(index),
        envelope: Vec::new(),
    };
    match tools.and_then(|t| split(t, &name, &arguments)) {
        Some(parts) => {
            // The first part keeps the server's id; the others get fresh ones later.
            let mut id = id;
            parts.into_iter().map(|p| one(name.clone(), Cow::Owned(p), id.take())).collect()
        }
        None => vec![one(name, arguments, id)],
    }
}

/// The tool a call without a name must mean: the only tool offered, or the only one whose
/// schema has every argument key. `None` when that is not unique (no guess).
pub(crate) fn infer_name(tools: &dyn ToolLookup, arguments: &str) -> Option<String> {
    let names = tools.names();
    if let [only] = names.as_slice() {
        return Some((*only).to_owned());
    }
    let value = crate::salvage::salvage(arguments).ok()?.to_value().ok()?;
    let keys: Vec<&String> = value.as_object()?.keys().collect();
    if keys.is_empty() {
        return None;
    }
    let mut fits = names.iter().filter(|name| {
        let props = tools.parameters(name).and_then(|s| s.get("properties")).and_then(Value::as_object);
        props.is_some_and(|props| keys.iter().all(|k| props.contains_key(k.as_str())))
    });
    let first = fits.next()?;
    fits.next().is_none().then(|| (*first).to_owned())
}

/// `{…}{…}` (or `{…}, {…}`): the objects, when there are two or more, nothing else is
/// there, and each is a complete call for tool `name` (its keys are parameters of the
/// tool, its required parameters are all given).
fn split(tools: &dyn ToolLookup, name: &str, arguments: &str) -> Option<Vec<String>> {
    let text = arguments.trim();
    let schema = tools.parameters(name)?;
    let props = schema.get("properties").and_then(Value::as_object)?;
    let required: Vec<&str> =
        schema.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
    let mut parts = Vec::new();
    let mut i = 0;
    while i < text.len() {
        if parts.len() >= MAX_PARTS || text.as_bytes().get(i) != Some(&b'{') {
            return None;
        }
        let Some(End::Closed(e)) = value_end(text, i) else { return None };
        let part = text.get(i..e)?;
        let value: Value = serde_json::from_str(part).ok()?;
        let object = value.as_object()?;
        if !object.keys().all(|k| props.contains_key(k)) || !required.iter().all(|r| object.contains_key(*r)) {
            return None;
        }
        parts.push(part.to_owned());
        i = super::text::skip_ws(text, e);
        if text.as_bytes().get(i) == Some(&b',') {
            i = super::text::skip_ws(text, i + 1);
        }
    }
    (parts.len() >= 2).then_some(parts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::collections::HashMap;

    fn tools() -> HashMap<String, Value> {
        HashMap::from([(
            "w".to_owned(),
            json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
        )])
    }

    #[test]
    fn splits_only_complete_calls_for_the_tool() {
        let t = tools();
        assert_eq!(split(&t, "w", r#"{"city": "a"}{"city": "b"}"#).map(|p| p.len()), Some(2));
        // A key the tool does not have, a required key missing, one object, junk between,
        // a cut-off part, an unknown tool: not split.
        for args in [
            r#"{"city": "a"}{"town": "b"}"#,
            r#"{"city": "a"}{}"#,
            r#"{"city": "a"}"#,
            r#"{"city": "a"} and {"city": "b"}"#,
            r#"{"city": "a"}{"city": "b""#,
        ] {
            assert_eq!(split(&t, "w", args), None, "{args}");
        }
        assert_eq!(split(&t, "other", r#"{"city": "a"}{"city": "b"}"#), None);
    }

    #[test]
    fn an_empty_name_gets_the_one_tool_that_fits() {
        let mut t = tools();
        assert_eq!(infer_name(&t, "{}").as_deref(), Some("w"));
        t.insert("v".to_owned(), json!({"properties": {"city": {}}}));
        assert_eq!(infer_name(&t, r#"{"city": "a"}"#), None);
        t.insert("s".to_owned(), json!({"properties": {"query": {}}}));
        assert_eq!(infer_name(&t, r#"{"query": "a"}"#).as_deref(), Some("s"));
        assert_eq!(infer_name(&t, "{}"), None);
    }
}
