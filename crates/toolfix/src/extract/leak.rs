//! A string argument that holds another declared parameter of the same call, written in
//! some format's parameter markup: `"…dark mode.</prompt>\n<parameter name=\"preset\">[…]"`.
//! The model's own markup says where its value ended and the next parameter began (a
//! server parser, or a grammar reading one format, took the rest as text).
//!
//! [`split_leaked_markup`] reads such a value as the parameters it holds when that is
//! unambiguous, and says so when it is not: a tool must never get it as one valid string.
//! The XML grammars split while they build the arguments ([`split_raw`]); the call
//! pipeline checks every call's arguments (JSON and server-parsed calls too).
//!
//! Markup counts only where a parameter element would start: at the start of a line, or
//! right after a closing tag, and only for a parameter the tool declares (other than the
//! one holding it). The openers read: `<parameter=P>` (Qwen3-Coder, Seed-OSS),
//! `<parameter name="P">` with or without a namespace (MiniMax M2, Anthropic-style XML,
//! Muse's `atem:`, Step-3's `steptml:`), DSML's `<｜DSML｜parameter name="P" …>` and GLM's
//! `<arg_key>P</arg_key><arg_value>`. A split is unambiguous when, after the holder's
//! value (and the closing tag the model wrote for it), the rest of the string is one or
//! more such elements with nothing but whitespace between them, each naming a different
//! declared parameter not given elsewhere in the call; the last one may lack its closer
//! (the outer one was taken for it).

use super::typed::{Untyped, type_raw};
use serde_json::{Map, Value};

/// What [`split_leaked_markup`] found.
///
/// ```
/// use serde_json::json;
/// use toolfix::extract::{split_leaked_markup, Leak};
///
/// let schema = json!({"type": "object", "properties": {
///     "prompt": {"type": "string"}, "preset": {"type": "array", "items": {"type": "string"}}}});
/// let args = json!({"prompt": "Make it dark mode.</prompt>\n<parameter name=\"preset\">[\"dark\"]"});
/// match split_leaked_markup(&args, &schema) {
///     Leak::Split { arguments, .. } => {
///         assert_eq!(arguments, json!({"prompt": "Make it dark mode.", "preset": ["dark"]}));
///     }
///     other => panic!("{other:?}"),
/// }
/// assert_eq!(split_leaked_markup(&json!({"prompt": "a <b>"}), &schema), Leak::Clean);
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Leak {
    /// No string argument holds another parameter's markup.
    Clean,
    /// Each such string read as the parameters it holds.
    Split {
        /// The arguments with every such value split.
        arguments: Value,
        /// What was split, in order.
        splits: Vec<Split>,
    },
    /// A string holds markup that opens another parameter, and how to read it cannot be
    /// told (the parameter is given elsewhere too, text follows the element, ...).
    Ambiguous {
        /// The JSON pointer of the string (`/prompt`).
        pointer: String,
        /// The parameter its markup opens.
        parameter: String,
    },
}

/// One value split into parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Split {
    /// The JSON pointer of the string that held them (`/prompt`).
    pub pointer: String,
    /// The parameters read out of it, in order.
    pub parameters: Vec<String>,
}

/// Check the top-level string arguments of a call against the tool's `parameters` schema:
/// see the [module documentation](self). Arguments that are not an object, and a schema
/// without `properties`, are [`Leak::Clean`].
#[must_use]
pub fn split_leaked_markup(arguments: &Value, schema: &Value) -> Leak {
    let Some(args) = arguments.as_object() else {
        return Leak::Clean;
    };
    // The cheap look first: no string holds a `<`.
    if !args.values().any(|v| v.as_str().is_some_and(|s| memchr::memchr(b'<', s.as_bytes()).is_some())) {
        return Leak::Clean;
    }
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return Leak::Clean;
    };
    let mut out: Option<Map<String, Value>> = None;
    let mut splits = Vec::new();
    for (key, value) in args {
        let Some(text) = value.as_str() else { continue };
        match split_raw(key, text, props, |p| args.contains_key(p)) {
            Raw::Clean => {}
            Raw::Ambiguous(parameter) => return Leak::Ambiguous { pointer: pointer(key), parameter },
            Raw::Split(parts) => {
                let map = out.get_or_insert_with(|| args.clone());
                let mut names = Vec::new();
                for (name, raw) in parts {
                    let json = if name == *key {
                        Value::String(raw.to_owned())
                    } else {
                        names.push(name.to_owned());
                        let typed = type_raw(raw, props.get(name), Untyped::Json);
                        serde_json::from_str(&typed).unwrap_or_else(|_| Value::String(raw.to_owned()))
                    };
                    map.insert(name.to_owned(), json);
                }
                splits.push(Split { pointer: pointer(key), parameters: names });
            }
        }
    }
    match out {
        Some(map) => Leak::Split { arguments: Value::Object(map), splits },
        None => Leak::Clean,
    }
}

/// What [`split_raw`] found in one raw value.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Raw<'t> {
    Clean,
    /// `(parameter, raw text)` pairs, the holder's own first.
    Split(Vec<(&'t str, &'t str)>),
    /// The markup opens this parameter and cannot be split.
    Ambiguous(String),
}

/// Look for markup that opens another declared parameter in the raw value `text` of
/// parameter `key`; `given` says whether a parameter is given elsewhere in the call.
pub(crate) fn split_raw<'t>(
    key: &'t str,
    text: &'t str,
    props: &'t Map<String, Value>,
    given: impl Fn(&str) -> bool,
) -> Raw<'t> {
    let Some((start, first)) = first_opener(text, key, props) else {
        return Raw::Clean;
    };
    let own = holder_value(text.get(..start).unwrap_or(""));
    let mut parts = vec![(key, own)];
    let mut o = first;
    loop {
        if given(o.name) || parts.iter().any(|(n, _)| *n == o.name) {
            return Raw::Ambiguous(o.name.to_owned());
        }
        let body = text.get(o.end..).unwrap_or("");
        let (value, after) = match o.closer.iter().find_map(|c| body.find(c).map(|i| (i, c.len()))) {
            Some((i, len)) => (body.get(..i).unwrap_or(""), o.end + i + len),
            // The last element's closer was taken for the holder's.
            None => (body, text.len()),
        };
        if first_opener(value, key, props).is_some() {
            return Raw::Ambiguous(o.name.to_owned());
        }
        parts.push((o.name, super::tags::strip_framing(value)));
        let rest = text.get(after..).unwrap_or("");
        if rest.trim().is_empty() {
            return Raw::Split(parts);
        }
        let next = after + rest.len() - rest.trim_start().len();
        match opener_at(text, next, props) {
            Some(n) if n.name != key => o = n,
            _ => return Raw::Ambiguous(o.name.to_owned()),
        }
    }
}

/// The holder's own value: the text before the markup, without the closing tag the model
/// wrote for it (`</prompt>`, `</parameter>`) and the newline the template puts there.
fn holder_value(before: &str) -> &str {
    let trimmed = before.trim_end();
    if trimmed.ends_with('>')
        && let Some(lt) = trimmed.rfind("</")
        && trimmed.get(lt + 2..trimmed.len() - 1).is_some_and(|n| !n.is_empty() && !n.contains(['<', ' ', '\n']))
    {
        return trimmed.get(..lt).unwrap_or("");
    }
    before.strip_suffix('\n').unwrap_or(before)
}

/// An element opener found in a value.
#[derive(Clone, Copy, Debug)]
struct Opener<'t> {
    /// The parameter it opens.
    name: &'t str,
    /// Where its value starts.
    end: usize,
    /// What closes its value.
    closer: &'static [&'static str],
}

/// The first opener of a declared parameter other than `key`, where an element may start
/// (a line's start, or right after a closing tag).
fn first_opener<'t>(text: &'t str, key: &str, props: &'t Map<String, Value>) -> Option<(usize, Opener<'t>)> {
    let mut from = 0;
    while let Some(i) = text.get(from..).and_then(|t| t.find('<')) {
        let at = from + i;
        if element_may_start(text, at)
            && let Some(o) = opener_at(text, at, props)
            && o.name != key
        {
            return Some((at, o));
        }
        from = at + 1;
    }
    None
}

/// True when an element may start at `at`: the start of the text or a line (spaces
/// before it allowed), or right after a closing tag.
fn element_may_start(text: &str, at: usize) -> bool {
    let before = text.get(..at).unwrap_or("").trim_end_matches([' ', '\t']);
    before.is_empty() || before.ends_with('\n') || before.trim_end().ends_with('>') && before.trim_end().contains("</")
}

const PARAMETER_CLOSE: &[&str] = &["</parameter>"];
const ARG_VALUE_CLOSE: &[&str] = &["</arg_value>"];

/// The opener of a declared parameter at `at`, in any format's syntax.
fn opener_at<'t>(text: &'t str, at: usize, props: &'t Map<String, Value>) -> Option<Opener<'t>> {
    let rest = text.get(at..)?;
    let declared = |name: &str| props.get_key_value(name).map(|(k, _)| k.as_str());
    // `<parameter=P>`.
    if let Some(r) = rest.strip_prefix("<parameter=") {
        let gt = r.find('>')?;
        let name = declared(r.get(..gt)?.trim().trim_matches(['"', '\'']))?;
        return Some(Opener { name, end: at + "<parameter=".len() + gt + 1, closer: PARAMETER_CLOSE });
    }
    // `<arg_key>P</arg_key>` then `<arg_value>`.
    if let Some(r) = rest.strip_prefix("<arg_key>") {
        let close = r.find("</arg_key>")?;
        let name = declared(r.get(..close)?.trim())?;
        let after = r.get(close + "</arg_key>".len()..)?;
        let ws = after.len() - after.trim_start().len();
        let v = after.get(ws..)?.strip_prefix("<arg_value>")?;
        let end = at + rest.len() - v.len();
        return Some(Opener { name, end, closer: ARG_VALUE_CLOSE });
    }
    // `<parameter name="P" …>`, `<ns:parameter name=…>`, `<｜DSML｜parameter name=…>`.
    let gt = rest.find('>')?;
    let tag = rest.get(1..gt)?;
    let (tag_name, attrs) = tag.split_once(char::is_whitespace)?;
    let bare = tag_name.rsplit(['|', '｜', ':']).next().unwrap_or(tag_name);
    if bare != "parameter" {
        return None;
    }
    let value = attrs.trim_start().strip_prefix("name")?.trim_start().strip_prefix('=')?.trim_start();
    let raw = match value.chars().next()? {
        q @ ('"' | '\'' | '“' | '”') => {
            let inner = value.get(q.len_utf8()..)?;
            inner.get(..inner.find(['"', '\'', '“', '”'])?)?
        }
        _ => value.split(|c: char| c.is_whitespace() || c == '/').next()?,
    };
    let name = declared(raw.trim())?;
    Some(Opener { name, end: at + gt + 1, closer: CLOSERS_BY_NS })
}

/// Closers of `<…parameter name=…>` elements.
const CLOSERS_BY_NS: &[&str] =
    &["</parameter>", "</atem:parameter>", "</steptml:parameter>", "</｜DSML｜parameter>", "</|DSML|parameter>"];

fn pointer(key: &str) -> String {
    let mut p = String::with_capacity(key.len() + 1);
    p.push('/');
    p.push_str(&key.replace('~', "~0").replace('/', "~1"));
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({"type": "object", "properties": {
            "prompt": {"type": "string"},
            "preset": {"type": "array", "items": {"type": "string"}},
            "n": {"type": "integer"}
        }})
    }

    #[test]
    fn splits_each_syntax() {
        for (value, prompt) in [
            ("Make it dark mode.</prompt>\n<parameter name=\"preset\">[\"dark\"]", "Make it dark mode."),
            ("Make it dark mode.\n<parameter=preset>\n[\"dark\"]\n</parameter>", "Make it dark mode."),
            ("Make it dark mode.</arg_value>\n<arg_key>preset</arg_key>\n<arg_value>[\"dark\"]", "Make it dark mode."),
            ("Make it dark mode.</parameter><parameter name='preset'>[\"dark\"]</parameter>\n", "Make it dark mode."),
        ] {
            let got = split_leaked_markup(&json!({"prompt": value}), &schema());
            let Leak::Split { arguments, splits } = got else { panic!("{value}: {got:?}") };
            assert_eq!(arguments, json!({"prompt": prompt, "preset": ["dark"]}), "{value}");
            assert_eq!(splits[0].parameters, ["preset"]);
        }
    }

    #[test]
    fn splits_a_chain_and_types_each_value() {
        let v = json!({"prompt": "x</prompt>\n<parameter=preset>[\"a\"]</parameter>\n<parameter=n>3</parameter>"});
        let Leak::Split { arguments, .. } = split_leaked_markup(&v, &schema()) else { panic!() };
        assert_eq!(arguments, json!({"prompt": "x", "preset": ["a"], "n": 3}));
    }

    #[test]
    fn ambiguous_when_given_twice_or_followed_by_text() {
        let given = json!({"prompt": "x</prompt>\n<parameter=n>3</parameter>", "n": 4});
        assert_eq!(
            split_leaked_markup(&given, &schema()),
            Leak::Ambiguous { pointer: "/prompt".into(), parameter: "n".into() }
        );
        let text_after = json!({"prompt": "x</prompt>\n<parameter=n>3</parameter> and more"});
        assert!(matches!(split_leaked_markup(&text_after, &schema()), Leak::Ambiguous { .. }));
    }

    #[test]
    fn clean_for_other_markup() {
        for value in [
            "a <b>bold</b> word",
            "<parameter name=\"other\">x</parameter>",
            "inline <parameter=n>3</parameter> mention",
            "<parameter=prompt>self</parameter>",
        ] {
            assert_eq!(split_leaked_markup(&json!({"prompt": value}), &schema()), Leak::Clean, "{value}");
        }
        assert_eq!(split_leaked_markup(&json!([1]), &schema()), Leak::Clean);
    }
}
