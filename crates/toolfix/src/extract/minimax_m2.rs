//! MiniMax M2: `<minimax:tool_call><invoke name="N"><parameter name="K">raw</parameter></invoke>...</minimax:tool_call>`.
//!
//! Several invokes in one block. Values are raw text, typed through the schema when it is
//! known and kept as strings otherwise (as MiniMax's own parser does). One newline after
//! `<parameter>` and one before `</parameter>` are framing. Missing closers and a block cut
//! off at the end keep what was given.

use super::Format;
use super::invoke::{self, Syntax};
use super::params::Untyped;
use super::parsed::{Cx, Parsed};
use super::tags::{self, Ns};

const OPEN: &str = "<minimax:tool_call>";
const CLOSE: &str = "</minimax:tool_call>";

/// Start marker.
pub(crate) const MARKERS: &[&str] = &[OPEN];

const MINIMAX: Syntax = Syntax {
    ns: Ns::Plain,
    block: "minimax:tool_call",
    stops: &[],
    framing: true,
    untyped: Untyped::String,
    format: Format::MinimaxM2,
};

/// Parses a MiniMax M2 tool-call block at `at`.
pub(crate) fn parse<'a>(text: &'a str, at: usize, cx: &Cx<'_>) -> Option<Parsed<'a>> {
    if !tags::at(text, at, OPEN) {
        return None;
    }
    let (calls, after) = invoke::parse_invokes(text, at + OPEN.len(), &MINIMAX, cx);
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
    use std::collections::HashMap;

    fn calls(text: &str, tools: Option<&HashMap<String, Value>>) -> (Vec<(String, Value)>, usize) {
        let at = text.find(OPEN).unwrap();
        let cx = Cx { tools: tools.map(|t| t as &dyn super::super::ToolLookup) };
        parse(text, at, &cx).map_or((Vec::new(), 0), |p| {
            let calls = p
                .calls
                .into_iter()
                .map(|c| (c.name.into_owned(), serde_json::from_str(&c.arguments).unwrap()))
                .collect();
            (calls, p.end)
        })
    }

    #[test]
    fn several_invokes_untyped_strings() {
        let text = "Let me check. <minimax:tool_call><invoke name=\"fn_a\"><parameter name=\"x\">1</parameter></invoke><invoke name=\"fn_b\"><parameter name=\"y\">2</parameter></invoke></minimax:tool_call> ok";
        let (got, end) = calls(text, None);
        assert_eq!(got, vec![("fn_a".into(), json!({"x": "1"})), ("fn_b".into(), json!({"y": "2"}))]);
        assert_eq!(&text[end..], " ok");
    }

    #[test]
    fn typed_with_schema_and_framing() {
        let mut tools = HashMap::new();
        tools.insert(
            "get_weather".to_owned(),
            json!({"properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}),
        );
        let text = "<minimax:tool_call>\n<invoke name=\"get_weather\">\n<parameter name=\"city\">\nSeattle\n</parameter>\n<parameter name=\"days\">5</parameter>\n</invoke>\n</minimax:tool_call>";
        assert_eq!(calls(text, Some(&tools)).0, vec![("get_weather".into(), json!({"city": "Seattle", "days": 5}))]);
    }

    #[test]
    fn prose_after_unclosed_invoke_is_kept() {
        let text = "<minimax:tool_call><invoke name=\"f\"><parameter name=\"a\">x</parameter>\nSo the answer is 4.";
        let (got, end) = calls(text, None);
        assert_eq!(got, vec![("f".into(), json!({"a": "x"}))]);
        assert_eq!(&text[end..], "\nSo the answer is 4.");
    }

    #[test]
    fn cut_off_and_unclosed() {
        let text = "<minimax:tool_call><invoke name=\"f\"><parameter name=\"a\">x<parameter name=\"b\">y";
        assert_eq!(calls(text, None).0, vec![("f".into(), json!({"a": "x", "b": "y"}))]);
        assert_eq!(calls("<minimax:tool_call>{\"name\": \"f\"}", None).0, vec![]);
    }
}
