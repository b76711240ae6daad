//! The server's own `tool_calls`, read the same way whole and streamed: a call with an
//! empty name gets the one declared tool its arguments fit (when exactly one does),
//! arguments holding two parallel calls' objects back to back (`{…}{…}`) become one call
//! each, when every object is a complete call for that tool, and a name that holds another
//! format's markup (a server parser that failed half-way:
//! `read<arg_key>filePath</arg_key><arg_value>/x</arg_value>`) is read as that markup when
//! it is complete, names a declared tool and the server gave no arguments of its own.
//! Otherwise the name stays as written and the schema stage refuses it.

use super::infer::infer_name;
use super::json::scan::{End, value_end};
use super::parsed::Cx;
use super::scan::{self, Mode};
use super::{Channel, ExtractedCall, Format, ToolLookup};
use crate::limits::Limits;
use crate::span::Span;
use serde_json::Value;
use std::borrow::Cow;

/// Most calls one `arguments` text is split into.
const MAX_PARTS: usize = 64;

/// The calls one server-parsed call (`index` in the reply's list) stands for, appended to
/// `out` (the reply's list: no list is made per call).
pub(crate) fn calls_into<'a>(
    out: &mut Vec<ExtractedCall<'a>>,
    name: Cow<'a, str>,
    arguments: Cow<'a, str>,
    id: Option<Cow<'a, str>>,
    index: usize,
    tools: Option<&dyn ToolLookup>,
) {
    let (name, arguments, format) = if name.trim().is_empty() {
        match tools.and_then(|t| infer_name(t, &arguments)) {
            Some(n) => (Cow::Owned(n), arguments, Format::Native),
            None => (name, arguments, Format::Native),
        }
    } else {
        match tools.and_then(|t| from_markup(&name, &arguments, t)) {
            // Reported in the format of the markup it was read from.
            Some((n, a, f)) => (Cow::Owned(n), Cow::Owned(a), f),
            None => (name, arguments, Format::Native),
        }
    };
    let one = |name: Cow<'a, str>, arguments: Cow<'a, str>, id: Option<Cow<'a, str>>| ExtractedCall {
        name,
        arguments,
        id,
        format,
        cut: false,
        channel: Channel::ToolCalls,
        span: Span::at(index),
        envelope: Vec::new(),
        intent: super::Intent::Call,
        signals: Vec::new(),
    };
    match tools.and_then(|t| split(t, &name, &arguments)) {
        Some(parts) => {
            // The first part keeps the server's id; the others get fresh ones later.
            let mut id = id;
            out.extend(parts.into_iter().map(|p| one(name.clone(), Cow::Owned(p), id.take())));
        }
        None => out.push(one(name, arguments, id)),
    }
}

/// A name holding a call in another format's markup, its arguments empty: the call that
/// markup holds, when it is the one call there, complete (not cut off, nothing else left)
/// and to a declared tool.
fn from_markup(name: &str, arguments: &str, tools: &dyn ToolLookup) -> Option<(String, String, Format)> {
    if !name.contains('<') || !matches!(arguments.trim(), "" | "{}" | "null") || name.len() > MAX_MARKUP {
        return None;
    }
    if !balanced(name) {
        // A closer without its opener (`tool_12</arg_value>`), or an element left open:
        // not complete markup.
        return None;
    }
    // GLM's `N<arg_key>K</arg_key><arg_value>V</arg_value>`, or Qwen3-Coder's parameters
    // after the name (`N\n<parameter=K>V</parameter>`).
    let head = name.split('<').next().unwrap_or("").trim();
    let rest = name.get(name.find('<')?..)?;
    [format!("<tool_call>{name}</tool_call>"), format!("<tool_call><function={head}>{rest}</function></tool_call>")]
        .iter()
        .find_map(|text| one_call(text, tools))
}

/// True when every tag in `text` closes one opened before it and every opened one is
/// closed (`<parameter=K>` closes with `</parameter>`).
fn balanced(text: &str) -> bool {
    let mut open: Vec<&str> = Vec::new();
    let mut rest = text;
    while let Some(lt) = rest.find('<') {
        let Some(tag) = rest.get(lt + 1..) else { break };
        let Some(gt) = tag.find('>') else { return false };
        let inner = tag.get(..gt).unwrap_or("");
        if let Some(closing) = inner.strip_prefix('/') {
            if open.pop() != Some(closing.trim()) {
                return false;
            }
        } else {
            let base = inner.split(['=', ' ']).next().unwrap_or("");
            if base.is_empty() || open.len() >= 64 {
                return false;
            }
            open.push(base);
        }
        rest = tag.get(gt + 1..).unwrap_or("");
    }
    open.is_empty()
}

/// The one complete call to a declared tool that `text` holds, nothing else.
fn one_call(text: &str, tools: &dyn ToolLookup) -> Option<(String, String, Format)> {
    let cx = Cx::new(Some(tools), Limits::default());
    // A server's own parse that failed: its markup is a call, not something shown.
    let found = scan::scan(text, &cx, Mode::Content, true, super::LeakedCalls::Trust);
    let [call] = found.calls.as_slice() else { return None };
    let mut left = 0;
    let mut at = 0;
    for r in &found.removed {
        left += text.get(at..r.start).map_or(0, |t| t.trim().len());
        at = at.max(r.end);
    }
    left += text.get(at..).map_or(0, |t| t.trim().len());
    let complete = !call.cut && left == 0 && found.notes.is_empty() && found.reasoning_calls.is_empty();
    (complete && tools.is_known(&call.name)).then(|| (call.name.to_string(), call.arguments.to_string(), call.format))
}

/// Longest name read as markup.
const MAX_MARKUP: usize = 64 * 1024;

/// `{…}{…}` (or `{…}, {…}`): the objects, when there are two or more, nothing else is
/// there, and each is a complete call for tool `name` (its keys are parameters of the
/// tool, its required parameters are all given).
fn split(tools: &dyn ToolLookup, name: &str, arguments: &str) -> Option<Vec<String>> {
    let text = arguments.trim();
    // Anything but an object followed by more text is one call at most: not read further
    // (the common case, one object, is not parsed here).
    if !text.starts_with('{') {
        return None;
    }
    // Each part starts with `{`: with no second `{` there is one object at most (a
    // plain object of scalars, the common case, is not scanned here).
    memchr::memchr(b'{', text.as_bytes().get(1..).unwrap_or_default())?;
    if let Some(End::Closed(e)) = value_end(text, 0)
        && super::text::skip_ws(text, e) >= text.len()
    {
        return None;
    }
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
