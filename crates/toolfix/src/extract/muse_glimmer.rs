//! Muse (Glimmer): ` to=N<|message|><atem:function_calls><atem:invoke name="N">`
//! `<atem:parameter name="K">raw</atem:parameter></atem:invoke></atem:function_calls>`.
//!
//! Several invokes in one block; values are raw text typed through the schema (read as
//! JSON when untyped and JSON-looking), one framing newline stripped at each end. The
//! harmony-style ` to=N<|message|>` header is consumed when the marker is found there.
//! Missing closers and a cut-off block keep what was given.

use super::Format;
use super::invoke::{self, Syntax};
use super::params::Untyped;
use super::parsed::{Cx, Parsed};
use super::tags::{self, Ns};

const OPEN: &str = "<atem:function_calls>";
const CLOSE: &str = "</atem:function_calls>";

/// Start marker: the block (the ` to=N<|message|>` header before it is optional).
pub(crate) const MARKERS: &[&str] = &["<|message|><atem:function_calls>", OPEN];

const MUSE: Syntax = Syntax {
    ns: Ns::Prefix("atem:"),
    block: "function_calls",
    stops: &[],
    framing: true,
    untyped: Untyped::Json,
    format: Format::MuseGlimmer,
};

/// Parses a Muse function-call block at `at`.
pub(crate) fn parse<'a>(text: &'a str, at: usize, cx: &Cx<'_>) -> Option<Parsed<'a>> {
    let start = if tags::at(text, at, "<|message|>") { at + "<|message|>".len() } else { at };
    if !tags::at(text, start, OPEN) {
        return None;
    }
    let (calls, after) = invoke::parse_invokes(text, start + OPEN.len(), &MUSE, cx);
    if calls.is_empty() {
        return None;
    }
    let q = tags::skip_ws(text, after);
    let end = if tags::at(text, q, CLOSE) { q + CLOSE.len() } else { after };
    Some(Parsed { end, calls })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn calls(text: &str) -> (Vec<(String, Value)>, usize) {
        let at = MARKERS.iter().filter_map(|m| text.find(m)).min().unwrap();
        let cx = Cx { tools: None };
        parse(text, at, &cx).map_or((Vec::new(), 0), |p| {
            let calls = p
                .calls
                .into_iter()
                .map(|c| {
                    assert_eq!(c.format, Format::MuseGlimmer);
                    (c.name.into_owned(), serde_json::from_str(&c.arguments).unwrap())
                })
                .collect();
            (calls, p.end)
        })
    }

    #[test]
    fn single_with_header() {
        let text = " to=get_weather<|message|><atem:function_calls>\n<atem:invoke name=\"get_weather\">\n<atem:parameter name=\"city\">Paris</atem:parameter>\n<atem:parameter name=\"days\">3</atem:parameter>\n</atem:invoke>\n</atem:function_calls>";
        let (got, end) = calls(text);
        assert_eq!(got, vec![("get_weather".into(), json!({"city": "Paris", "days": 3}))]);
        assert_eq!(end, text.len());
    }

    #[test]
    fn several_invokes() {
        let text = "<atem:function_calls><atem:invoke name=\"a\"><atem:parameter name=\"q\">\nline one\nline two\n</atem:parameter></atem:invoke><atem:invoke name=\"b\"></atem:invoke></atem:function_calls>";
        assert_eq!(calls(text).0, vec![("a".into(), json!({"q": "line one\nline two"})), ("b".into(), json!({}))]);
    }

    #[test]
    fn cut_off() {
        let text = "<atem:function_calls><atem:invoke name=\"a\"><atem:parameter name=\"q\">partial";
        assert_eq!(calls(text).0, vec![("a".into(), json!({"q": "partial"}))]);
        assert_eq!(calls("<atem:function_calls>nothing</atem:function_calls>").0, vec![]);
    }
}
