//! Reading call objects (`{"name": .., "arguments": ..}` and its relatives) out of text.

use super::scan::{self, End, Object};
use crate::extract::Format;
use crate::extract::parsed::RawCall;
use crate::extract::text::{clean_name, skip_ws};
use crate::span::Span;
use std::borrow::Cow;

/// A call named `name` whose arguments are the JSON value starting at byte `body` of
/// `text` (running to the end of the text, and marked cut, when it was cut off), for
/// markup that starts at `at`. The call's span ends where its arguments end.
pub(crate) fn body_call<'a>(
    text: &'a str,
    at: usize,
    body: usize,
    name: &'a str,
    id: Option<Cow<'a, str>>,
    format: Format,
) -> Option<RawCall<'a>> {
    let (end, cut) = match scan::value_end(text, body)? {
        End::Closed(e) => (e, false),
        End::Open => (text.len(), true),
    };
    let call = RawCall::new(Cow::Borrowed(name), Cow::Borrowed(text.get(body..end)?), format, Span::new(at, end));
    Some(call.with_id(id).cut_if(cut))
}

/// Which keys name the tool and hold its arguments in one format.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Keys {
    /// Keys that may hold the tool name, in order of preference.
    pub(crate) name: &'static [&'static str],
    /// Keys that may hold the arguments, in order of preference.
    pub(crate) args: &'static [&'static str],
    /// When true a call without arguments gets `{}`; otherwise it is not a call.
    pub(crate) args_optional: bool,
}

/// `{"name", "arguments"}` (also `"parameters"`).
pub(crate) const NAME_ARGUMENTS: Keys =
    Keys { name: &["name"], args: &["arguments", "parameters"], args_optional: false };

/// Every call shape accepted for JSON written in prose.
pub(crate) const ANY_SHAPE: Keys = Keys {
    name: &["name", "tool_name", "tool"],
    args: &["arguments", "parameters", "tool_args", "args", "input"],
    args_optional: false,
};

/// How far the object that opens at `start` reaches, and whether it closed.
pub(crate) fn object_extent(text: &str, start: usize) -> Option<(usize, bool)> {
    match scan::value_end(text, start)? {
        End::Closed(e) => Some((e, true)),
        End::Open => Some((text.len(), false)),
    }
}

/// Arguments text from the value written at `span`.
fn arguments_text(text: &str, span: Span) -> Option<Cow<'_, str>> {
    let raw = text.get(span.range())?;
    let first = raw.bytes().next()?;
    if first == b'"' {
        // A JSON-encoded document is decoded once; a plain string stays a JSON string.
        if let Some(decoded) = scan::decode_string(raw) {
            let t = decoded.trim();
            if (t.starts_with('{') || t.starts_with('[')) && crate::salvage::salvage(t).is_ok() {
                return Some(Cow::Owned(t.to_owned()));
            }
        }
        return Some(Cow::Borrowed(raw));
    }
    if raw == "null" {
        return Some(Cow::Borrowed("{}"));
    }
    Some(Cow::Borrowed(raw))
}

/// A call read from one object.
#[derive(Clone, Debug)]
pub(crate) struct ObjectCall<'a> {
    pub(crate) call: RawCall<'a>,
    /// One past the object (or the end of the text when it was cut off).
    pub(crate) end: usize,
    /// True when the object's closing brace was found.
    pub(crate) closed: bool,
}

fn string_field<'a>(text: &'a str, obj: &Object<'a>, keys: &[&str]) -> Option<Cow<'a, str>> {
    keys.iter().find_map(|k| {
        let f = obj.get(k)?;
        scan::decode_string(text.get(f.value.range())?)
    })
}

/// Read the call object that opens at byte `start` of `text` (a `{`).
pub(crate) fn call_at<'a>(text: &'a str, start: usize, keys: &Keys, format: Format) -> Option<ObjectCall<'a>> {
    let Some(outer) = scan::walk_object(text, start) else {
        return salvaged_call_at(text, start, keys, format);
    };
    let id = string_field(text, &outer, &["id", "tool_call_id"]);
    // `{"type": "function", "function": {"name", "arguments"}}`
    let nested = outer.get("function").filter(|f| text.as_bytes().get(f.value.start) == Some(&b'{'));
    let inner_owned;
    let obj = if let Some(f) = nested {
        inner_owned = scan::walk_object(text, f.value.start)?;
        &inner_owned
    } else {
        &outer
    };
    let name_raw = string_field(text, obj, keys.name)?;
    let name = match name_raw {
        Cow::Borrowed(b) => Cow::Borrowed(clean_name(b)?),
        Cow::Owned(o) => Cow::Owned(clean_name(&o)?.to_owned()),
    };
    let arguments = match keys.args.iter().find_map(|k| obj.get(k)) {
        Some(f) => arguments_text(text, f.value)?,
        None if keys.args_optional => Cow::Borrowed("{}"),
        None => return None,
    };
    let span = Span::new(start, outer.end);
    let call = RawCall::new(name, arguments, format, span).with_id(id).cut_if(!outer.closed);
    Some(ObjectCall { call, end: outer.end, closed: outer.closed })
}

/// Fallback for objects not written as plain JSON (single quotes, bare keys, ...): salvage
/// the object's text and read the call from the value.
fn salvaged_call_at<'a>(text: &'a str, start: usize, keys: &Keys, format: Format) -> Option<ObjectCall<'a>> {
    let (end, closed) = object_extent(text, start)?;
    let salvaged = crate::salvage::salvage(text.get(start..end)?).ok()?;
    let envelope =
        salvaged.fixes().iter().map(|f| crate::salvage::TextFix { span: f.span.shift(start), ..*f }).collect();
    let value = salvaged.to_value().ok()?;
    let mut obj = value.as_object()?;
    let id = obj.get("id").and_then(|v| v.as_str()).map(|s| Cow::Owned(s.to_owned()));
    if let Some(inner) = obj.get("function").and_then(|f| f.as_object()) {
        obj = inner;
    }
    let name = keys.name.iter().find_map(|k| obj.get(*k)?.as_str())?;
    let name = Cow::Owned(clean_name(name)?.to_owned());
    let arguments = match keys.args.iter().find_map(|k| obj.get(*k)) {
        Some(serde_json::Value::String(s)) if crate::salvage::salvage(s.trim()).is_ok() => {
            Cow::Owned(s.trim().to_owned())
        }
        Some(serde_json::Value::Null) => Cow::Borrowed("{}"),
        Some(v) => Cow::Owned(serde_json::to_string(v).ok()?),
        None if keys.args_optional => Cow::Borrowed("{}"),
        None => return None,
    };
    let span = Span::new(start, end);
    let mut call = RawCall::new(name, arguments, format, span).with_id(id).cut_if(!closed);
    call.envelope = envelope;
    Some(ObjectCall { call, end, closed })
}

/// Calls in the array that opens at byte `start` (a `[`).
#[derive(Clone, Debug)]
pub(crate) struct ArrayCalls<'a> {
    pub(crate) calls: Vec<RawCall<'a>>,
    pub(crate) end: usize,
    pub(crate) closed: bool,
    /// True when every element was a call object.
    pub(crate) all_calls: bool,
}

/// Read the array of call objects that opens at byte `start` of `text`.
pub(crate) fn calls_in_array<'a>(text: &'a str, start: usize, keys: &Keys, format: Format) -> Option<ArrayCalls<'a>> {
    let bytes = text.as_bytes();
    if bytes.get(start) != Some(&b'[') {
        return None;
    }
    let mut calls = Vec::new();
    let mut all_calls = true;
    let mut i = skip_ws(text, start + 1);
    loop {
        match bytes.get(i) {
            None => {
                return Some(ArrayCalls { calls, end: text.len(), closed: false, all_calls });
            }
            Some(b']') => {
                return Some(ArrayCalls { calls, end: i + 1, closed: true, all_calls });
            }
            Some(b'{') => {
                if let Some(oc) = call_at(text, i, keys, format) {
                    calls.push(oc.call);
                    if !oc.closed {
                        return Some(ArrayCalls { calls, end: text.len(), closed: false, all_calls });
                    }
                    i = oc.end;
                } else {
                    all_calls = false;
                    match scan::value_end(text, i)? {
                        End::Closed(e) => i = e,
                        End::Open => {
                            return Some(ArrayCalls { calls, end: text.len(), closed: false, all_calls });
                        }
                    }
                }
            }
            Some(_) => return None,
        }
        i = skip_ws(text, i);
        match bytes.get(i) {
            Some(b',') => i = skip_ws(text, i + 1),
            Some(b']') => {
                return Some(ArrayCalls { calls, end: i + 1, closed: true, all_calls });
            }
            None => {
                return Some(ArrayCalls { calls, end: text.len(), closed: false, all_calls });
            }
            Some(_) => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_call_shapes() {
        let t = r#"{"name": "f", "arguments": {"a": 1.0}}"#;
        let c = call_at(t, 0, &NAME_ARGUMENTS, Format::Json).unwrap();
        assert_eq!(c.call.name, "f");
        assert_eq!(c.call.arguments, r#"{"a": 1.0}"#);
        let t = r#"{"type": "function", "id": "x", "function": {"name": "g", "arguments": "{\"b\": 2}"}}"#;
        let c = call_at(t, 0, &ANY_SHAPE, Format::Json).unwrap();
        assert_eq!((&*c.call.name, &*c.call.arguments), ("g", r#"{"b": 2}"#));
        assert_eq!(c.call.id.as_deref(), Some("x"));
        let t = r#"{"name": "get_weather</arg_value>", "arguments": "hello"}"#;
        let c = call_at(t, 0, &NAME_ARGUMENTS, Format::Json).unwrap();
        assert_eq!((&*c.call.name, &*c.call.arguments), ("get_weather", r#""hello""#));
    }

    #[test]
    fn reads_arrays() {
        let t = r#"[{"name": "a", "arguments": {}}, {"name": "b", "arguments": {"x": "]"}}] rest"#;
        let a = calls_in_array(t, 0, &NAME_ARGUMENTS, Format::Json).unwrap();
        assert_eq!(a.calls.len(), 2);
        assert!(a.closed && a.all_calls);
        assert_eq!(&t[a.end..], " rest");
    }
}
