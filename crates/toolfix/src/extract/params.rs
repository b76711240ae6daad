//! Raw parameter text typed through the tool's schema, into an arguments JSON object.
//!
//! Formats that write parameter values as raw text (Qwen3-Coder, GLM, DSML, MiniMax,
//! Step-3, ...) hand each `(key, raw text)` to an [`Args`] builder. With the tool's schema
//! the property type decides: `string` keeps the text exactly; `integer`, `number`,
//! `boolean`, `null` read the trimmed text as that JSON scalar; `object` and `array` go
//! through [`salvage`](crate::salvage::salvage) (and an escaped-JSON text such as
//! `[{\"a\": 1}]` is decoded once). Unions (`anyOf`, `oneOf`, type arrays) try the
//! non-string members first and fall back to a string. A value no type accepts is kept as
//! a string: the repair stage reports it, nothing is guessed here.
//!
//! Without a schema the format says what to do ([`Untyped`]): read the text as JSON when
//! it is a JSON (or Python) literal, or keep it as a string.
//!
//! Numbers keep the text the model wrote (`5.0` stays `5.0`).
//!
//! Whitespace: a grammar removes only the newline its template puts around a value (one
//! `\n` after the open tag and one before the close tag for Qwen3-Coder and Seed-OSS, as
//! vLLM, SGLang and Ollama do; see `tags::strip_framing`); any other whitespace around a
//! value is kept where the value is a string (it is the model's text), and ignored where
//! the schema types the value as a number, boolean, null, object or array (JSON ignores
//! it too). Where the schema allows a string besides another type, the text becomes that
//! other type only when it is exactly one (strict JSON: `true`, not `True`; `{"a": 1}`,
//! not `{not valid json` or `<b>x</b>`), and stays the string it is otherwise.
//!
//! A raw value that holds another declared parameter's markup (`…</prompt>\n<parameter
//! name="preset">[…]`) is split into the parameters it holds when that is unambiguous
//! (`leak.rs`); otherwise it is kept, and the call pipeline refuses it.

use super::parsed::Cx;
use super::typed::{Trust, Type, Untyped, container_text, push_json_string, schema_types, type_raw};
use serde_json::{Map, Value};

/// Builds the arguments JSON object text of one call, parameter by parameter, in order.
#[derive(Debug)]
pub(crate) struct Args<'t> {
    props: Option<&'t Map<String, Value>>,
    out: String,
    count: usize,
    /// The single parameter so far, for unwrapping an `arguments`/`input` wrapper.
    first: Option<(String, String)>,
    /// The parameters pushed so far.
    keys: Vec<String>,
}

/// How a call's arguments end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ending {
    /// The call's markup closed: the object is closed.
    Closed,
    /// The text ended inside the call, after its last value closed: the object is left
    /// open (salvage closes it: only closers were missing).
    Cut,
    /// The text ended inside the call's last value, pushed with [`Args::push_raw_open`]:
    /// the value and the object are left open where the text stopped.
    CutInValue,
    /// The text ended inside the markup of a parameter not yet read (its key being
    /// written): the object is left open after a separator, so the cut is evident.
    CutInElement,
}

impl<'t> Args<'t> {
    /// A builder for a call of tool `name`.
    pub(crate) fn new(cx: &Cx<'t>, name: &str) -> Self {
        let props = cx
            .tools
            .and_then(|tools| tools.parameters(name))
            .and_then(|schema| schema.get("properties"))
            .and_then(Value::as_object);
        Args { props, out: String::from("{"), count: 0, first: None, keys: Vec::new() }
    }

    /// True when no parameter was pushed.
    pub(crate) fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Adds parameter `key` with raw text `raw`, typed through the schema (split first when
    /// it holds another declared parameter's markup, see `leak.rs`).
    pub(crate) fn push_raw(&mut self, key: &str, raw: &str, untyped: Untyped) {
        if let Some(props) = self.props
            && raw.contains('<')
            && let super::leak::Raw::Split(parts) =
                super::leak::split_raw(key, raw, props, |p| self.keys.iter().any(|k| k == p))
        {
            for (k, v) in parts {
                self.push_one(k, v, untyped);
            }
            return;
        }
        self.push_one(key, raw, untyped);
    }

    fn push_one(&mut self, key: &str, raw: &str, untyped: Untyped) {
        let prop = self.props.and_then(|props| props.get(key));
        let value = type_raw(raw, prop, untyped);
        self.push_json(key, &value);
        if self.count == 1 {
            self.first = Some((key.to_owned(), raw.to_owned()));
        }
    }

    /// Adds parameter `key` whose value is already JSON text.
    pub(crate) fn push_json(&mut self, key: &str, json: &str) {
        if self.count > 0 {
            self.out.push_str(", ");
        }
        push_json_string(&mut self.out, key);
        self.out.push_str(": ");
        self.out.push_str(json);
        self.count += 1;
        self.first = None;
        self.keys.push(key.to_owned());
    }

    /// Adds parameter `key` whose raw text ran to the end of the text (the call was cut off
    /// inside it): written as far as it went and left open (a string without its closing
    /// quote, a number or a container as written), so that salvage sees the cut and the
    /// pipeline applies the cut-off rule. Nothing is completed or made up.
    pub(crate) fn push_raw_open(&mut self, key: &str, raw: &str, untyped: Untyped) {
        let prop = self.props.and_then(|props| props.get(key));
        let types = prop.map(schema_types).unwrap_or_default();
        let trimmed = raw.trim_start();
        // Left open for salvage only when salvage can close it as a member's value
        // (`{<markup` or `[]<markup` cannot: it stays an open string, and the pipeline
        // judges the cut call as such).
        let container = trimmed.starts_with(['{', '['])
            && (types.iter().any(|t| matches!(t, Type::Object | Type::Array))
                || (types.is_empty() && untyped == Untyped::Json))
            && closes_as_member(trimmed);
        let json = if container {
            trimmed.to_owned()
        } else {
            let mut typed = type_raw(raw, prop, untyped);
            if typed.starts_with('"') {
                typed.pop();
            }
            typed
        };
        self.push_json(key, &json);
    }

    /// The arguments object text, as the call `ended`.
    pub(crate) fn finish_as(self, ended: Ending) -> String {
        match ended {
            Ending::Closed => self.finish(),
            // A space after the last value: it was complete (closed by its own markup),
            // so it does not touch the cut.
            Ending::Cut => self.out + " ",
            Ending::CutInValue => self.out,
            Ending::CutInElement => {
                let mut out = self.out;
                if self.count > 0 {
                    out.push_str(", ");
                }
                out
            }
        }
    }

    /// The arguments object text. A lone `arguments`/`input`/`parameters` parameter that
    /// the schema does not know and that holds an object is unwrapped.
    pub(crate) fn finish(mut self) -> String {
        if let (Some(props), Some((key, raw))) = (self.props, self.first.take())
            && self.count == 1
            && is_wrapper_key(&key)
            && !props.contains_key(&key)
            && let Some(object) = object_text(raw.trim())
        {
            return object;
        }
        self.out.push('}');
        self.out
    }
}

/// True when salvage closes `{"k": TEXT` (the text cut where it stopped) into an object.
fn closes_as_member(text: &str) -> bool {
    let probe = format!("{{\"k\": {text}");
    crate::salvage::salvage(&probe).is_ok_and(|s| s.to_value().is_ok_and(|v| v.is_object()))
}

fn is_wrapper_key(key: &str) -> bool {
    matches!(key, "arguments" | "input" | "parameters" | "args")
}

/// Object text from `text` when it is (or salvages to) a JSON object.
fn object_text(text: &str) -> Option<String> {
    if !text.starts_with('{') {
        return None;
    }
    container_text(text, Trust::Guess)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::typed::Untyped;
    use serde_json::json;

    #[test]
    fn wrapper_unwrapped() {
        let mut tools = std::collections::HashMap::new();
        tools.insert(
            "get_weather".to_owned(),
            json!({"type": "object", "properties": {"location": {"type": "string"}}}),
        );
        let cx = Cx::new(Some(&tools), crate::limits::Limits::default());
        let mut args = Args::new(&cx, "get_weather");
        args.push_raw("input", r#"{"location":"Beijing"}"#, Untyped::String);
        assert_eq!(args.finish(), r#"{"location":"Beijing"}"#);
        let mut args = Args::new(&cx, "get_weather");
        args.push_raw("location", "Paris", Untyped::Json);
        args.push_raw("days", "3", Untyped::Json);
        assert_eq!(args.finish(), r#"{"location": "Paris", "days": 3}"#);
    }
}
