//! A response's server calls handed to the library as [`NativeCall`]s, borrowed from the
//! body, for the adapters whose calls are blocks of their own (Messages `tool_use`,
//! Responses `function_call`): read exactly as `extract::native_calls` reads the OpenAI
//! `tool_calls` value (`{"id", "function": {"name", "arguments"}}`) the adapter would
//! otherwise build for them, without building it.

use super::compact;
use serde_json::{Value, json};
use std::borrow::Cow;
use toolfix::extract::Channel;
use toolfix::{FixedCall, NativeCall, Reply};

/// One server call: its id and name as strings, its arguments as the library reads them.
#[derive(Debug)]
pub(crate) struct ServedCall<'a> {
    pub(crate) id: Option<Cow<'a, str>>,
    pub(crate) name: Cow<'a, str>,
    /// The arguments text: their string, `{}` for `null` or none, another value's compact
    /// text.
    pub(crate) arguments: Cow<'a, str>,
    /// The arguments as sent, when not a string: their compact text (the value that
    /// stands for none when absent); `None` for a string.
    pub(crate) value: Option<Cow<'a, str>>,
}

/// Arguments as sent: a value in a response read as one, raw text in a borrowed read.
#[derive(Clone)]
pub(crate) enum Sent<'a> {
    Value(&'a Value),
    /// A value's JSON text (see [`super::view::Field`]).
    Raw(&'a str),
    /// A string's value, the raw text read already (what `Raw` of that string reads as).
    String(Cow<'a, str>),
}

/// A response's server calls, in order.
#[derive(Debug)]
pub(crate) enum Calls<'a> {
    /// Each one's name a string: read as [`NativeCall`]s.
    Served(Vec<ServedCall<'a>>),
    /// Some name is not a string (the library passes over that call, and it still counts
    /// in the calls' order): the `tool_calls` value.
    Value(Value),
}

impl Default for Calls<'_> {
    fn default() -> Self {
        Calls::Served(Vec::new())
    }
}

impl<'a> Calls<'a> {
    /// Add a call: `id` and `name` as strings (`None`: another value, or none), the
    /// arguments as sent (`None`: absent; `absent` is the value that then stands for
    /// them, `{}` or `null`, as the adapter's value read has it).
    pub(crate) fn push(
        &mut self,
        id: Option<Cow<'a, str>>,
        name: Option<Cow<'a, str>>,
        sent: Option<Sent<'a>>,
        absent: &'static str,
    ) {
        let (arguments, value) = arguments(sent, absent);
        match (name, &mut *self) {
            (Some(name), Calls::Served(calls)) => calls.push(ServedCall { id, name, arguments, value }),
            (name, calls) => {
                if let Calls::Served(served) = calls {
                    *calls = Calls::Value(Value::Array(served.iter().map(as_value).collect()));
                }
                if let Calls::Value(Value::Array(list)) = calls {
                    list.push(match name {
                        Some(name) => as_value(&ServedCall { id, name, arguments, value }),
                        // The library passes over it; nothing else reads it.
                        None => json!({"id": id, "function": {"name": Value::Null}}),
                    });
                }
            }
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        match self {
            Calls::Served(c) => c.is_empty(),
            Calls::Value(v) => v.as_array().is_none_or(Vec::is_empty),
        }
    }

    /// The calls as the library reads them (for [`Calls::reply`]).
    pub(crate) fn natives(&self) -> Vec<NativeCall<'_>> {
        let Calls::Served(calls) = self else { return Vec::new() };
        calls
            .iter()
            .map(|c| {
                let call = NativeCall::new(&c.name, &c.arguments);
                match &c.id {
                    Some(id) => call.with_id(id),
                    None => call,
                }
            })
            .collect()
    }

    /// `reply` with these calls (`natives`: [`Calls::natives`]).
    pub(crate) fn reply<'s>(&'s self, reply: Reply<'s>, natives: &'s [NativeCall<'s>]) -> Reply<'s> {
        match self {
            _ if self.is_empty() => reply,
            Calls::Served(_) => reply.with_native_calls(natives),
            Calls::Value(v) => reply.with_tool_calls(v),
        }
    }

    /// Whether the calls of `fixed` in the server's channel are these as sent: as many,
    /// and each one of them (`same`: the adapter's test on a call of the `tool_calls`
    /// value; `same_arguments` on the arguments of a [`ServedCall`], given the fixed call's
    /// arguments text).
    pub(crate) fn all_sent(
        &self,
        fixed: &[FixedCall],
        same: impl Fn(&FixedCall, &Value) -> bool,
        same_arguments: impl Fn(&ServedCall<'_>, &str) -> bool,
    ) -> bool {
        let served = || fixed.iter().filter(|c| c.channel == Channel::ToolCalls);
        match self {
            Calls::Served(calls) => {
                let sent = |c: &FixedCall, o: &ServedCall<'_>| {
                    o.id.as_deref() == Some(c.id.as_str())
                        && o.name == c.name
                        && c.arguments_text().is_some_and(|t| same_arguments(o, t))
                };
                served().count() == calls.len() && served().all(|c| calls.iter().any(|o| sent(c, o)))
            }
            Calls::Value(v) => {
                let natives = v.as_array().map(Vec::as_slice).unwrap_or_default();
                served().count() == natives.len() && served().all(|c| natives.iter().any(|o| same(c, o)))
            }
        }
    }
}

/// The call in the `tool_calls` value.
fn as_value(call: &ServedCall<'_>) -> Value {
    let arguments = match &call.value {
        None => Value::String(call.arguments.clone().into_owned()),
        Some(text) => serde_json::from_str(text).unwrap_or(Value::Null),
    };
    json!({"id": call.id, "function": {"name": call.name, "arguments": arguments}})
}

/// What `extract::native_calls` reads of arguments as sent: the text, and the compact
/// text of the value when not a string (see [`ServedCall`]). Raw text that does not read
/// as a value (a lone surrogate escape) stands for none, as in the adapter's value read.
fn arguments<'a>(sent: Option<Sent<'a>>, absent: &'static str) -> (Cow<'a, str>, Option<Cow<'a, str>>) {
    let none = (Cow::Borrowed("{}"), Some(Cow::Borrowed(absent)));
    match sent {
        None => none,
        Some(Sent::Value(Value::String(s))) => (Cow::Borrowed(s.as_str()), None),
        Some(Sent::Value(Value::Null)) => (Cow::Borrowed("{}"), Some(Cow::Borrowed("null"))),
        Some(Sent::Value(v)) => {
            let text = v.to_string();
            (Cow::Owned(text.clone()), Some(Cow::Owned(text)))
        }
        Some(Sent::String(s)) => (s, None),
        Some(Sent::Raw(raw)) => match raw.as_bytes().first() {
            // The hand-written string read when it can decide, else serde_json's.
            Some(b'"') => match super::chat::scan::string_value(raw) {
                Some(s) => (s, None),
                None => match serde_json::from_str::<super::view::Text<'a>>(raw) {
                    Ok(super::view::Text(Some(s))) => (s, None),
                    _ => none,
                },
            },
            Some(b'n') => (Cow::Borrowed("{}"), Some(Cow::Borrowed("null"))),
            _ => match compact_text(raw) {
                Some(text) => (text.clone(), Some(text)),
                None => none,
            },
        },
    }
}

/// The compact text of a JSON value held as raw text: the text itself when it already is
/// (see [`compact::is_compact`]), else the value read and written.
fn compact_text(text: &str) -> Option<Cow<'_, str>> {
    if compact::is_compact(text) {
        return Some(Cow::Borrowed(text));
    }
    serde_json::from_str::<Value>(text).ok().map(|v| Cow::Owned(v.to_string()))
}
