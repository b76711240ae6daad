//! LFM2: `<|tool_call_start|>[get_weather(city='Paris')]<|tool_call_end|>`: a pythonic
//! call list between LFM2's tool-call tokens (see `pythonic` and `pycall`). The end token
//! may be missing; a list without brackets (one call per line) is accepted too.

use super::Format;
use super::parsed::{Cx, Parsed};
use super::pycall::{self, Layout};
use super::pythonic::to_parsed;
use super::tags;

const START: &str = "<|tool_call_start|>";
const END: &str = "<|tool_call_end|>";

/// Start marker.
pub(crate) const MARKERS: &[&str] = &[START];

/// Parses an LFM2 tool-call block at `at`.
pub(crate) fn parse<'a>(text: &'a str, at: usize, _cx: &Cx<'_>) -> Option<Parsed<'a>> {
    if !tags::at(text, at, START) {
        return None;
    }
    let p = tags::skip_ws(text, at + START.len());
    let (calls, end) = if tags::at(text, p, "[") && pycall::looks_like_call(text, p + 1) {
        pycall::parse_calls(text, p + 1, Layout::List)
    } else if pycall::looks_like_call(text, p) {
        pycall::parse_calls(text, p, Layout::Lines(END))
    } else {
        return None;
    };
    let q = tags::skip_ws(text, end);
    let end = if tags::at(text, q, END) { q + END.len() } else { end };
    to_parsed(calls, end, Format::Lfm2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn calls(text: &str) -> (Vec<(String, Value)>, usize) {
        let at = text.find(START).unwrap();
        let cx = Cx { tools: None };
        parse(text, at, &cx).map_or((Vec::new(), 0), |p| {
            let calls = p
                .calls
                .into_iter()
                .map(|c| {
                    assert_eq!(c.format, Format::Lfm2);
                    (c.name.into_owned(), serde_json::from_str(&c.arguments).unwrap())
                })
                .collect();
            (calls, p.end)
        })
    }

    #[test]
    fn single_and_parallel() {
        let text = "<|tool_call_start|>[get_candidate_status(candidate_id=\"12345\")]<|tool_call_end|>Checking.";
        let (got, end) = calls(text);
        assert_eq!(got, vec![("get_candidate_status".into(), json!({"candidate_id": "12345"}))]);
        assert_eq!(&text[end..], "Checking.");
        let text = "<think>x</think><|tool_call_start|>[a.b(x=1, y=[True, None]), c()]<|tool_call_end|>";
        let (got, _) = calls(text);
        assert_eq!(got, vec![("a.b".into(), json!({"x": 1, "y": [true, null]})), ("c".into(), json!({}))]);
    }

    #[test]
    fn end_token_missing_or_no_brackets() {
        let (got, _) = calls("<|tool_call_start|>[f(q='x')]");
        assert_eq!(got, vec![("f".into(), json!({"q": "x"}))]);
        let (got, _) = calls("<|tool_call_start|>f(q='x')\ng(n=2)<|tool_call_end|>");
        assert_eq!(got, vec![("f".into(), json!({"q": "x"})), ("g".into(), json!({"n": 2}))]);
    }

    #[test]
    fn not_a_call() {
        assert_eq!(calls("<|tool_call_start|>[1, 2]<|tool_call_end|>").0, vec![]);
        assert_eq!(calls("<|tool_call_start|>{\"name\": \"f\"}").0, vec![]);
    }
}
