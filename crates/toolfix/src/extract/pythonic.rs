//! Pythonic calls: `[get_weather(city='Paris'), search(q="x", n=3)]` (Llama 3.2/4), also
//! wrapped in Llama 4's `<|python_start|>` ... `<|python_end|>`.
//!
//! Only the full `[name(kw=...` shape fires, so bracketed prose (`[see above]`) is left
//! alone; when the tools are known, a bare list must also call at least one of them. Names may be dotted; values are Python literals (see `pycall`). A call that
//! does not parse is dropped and its siblings kept; a list with no good call is not a
//! call at all.

use super::Format;
use super::parsed::{Cx, Parsed, RawCall};
use super::pycall::{self, Layout, PyCall};
use super::tags;
use crate::Span;
use std::borrow::Cow;

const PYTHON_START: &str = "<|python_start|>";
const PYTHON_END: &str = "<|python_end|>";

/// Start markers: the list bracket, or Llama 4's python block.
pub(crate) const MARKERS: &[&str] = &["[", PYTHON_START];

/// Parses a pythonic call list at `at`.
pub(crate) fn parse<'a>(text: &'a str, at: usize, cx: &Cx<'_>) -> Option<Parsed<'a>> {
    let (calls, end) = if tags::at(text, at, PYTHON_START) {
        let p = tags::skip_ws(text, at + PYTHON_START.len());
        let (calls, end) = if tags::at(text, p, "[") && pycall::looks_like_call(text, p + 1) {
            pycall::parse_calls(text, p + 1, Layout::List)
        } else if pycall::looks_like_call(text, p) {
            pycall::parse_calls(text, p, Layout::Lines(PYTHON_END))
        } else {
            return None;
        };
        let q = tags::skip_ws(text, end);
        let end = if tags::at(text, q, PYTHON_END) { q + PYTHON_END.len() } else { end };
        (calls, end)
    } else if tags::at(text, at, "[") && pycall::looks_like_call(text, at + 1) {
        let (calls, end) = pycall::parse_calls(text, at + 1, Layout::List);
        // A bare list in prose is only a call list when it calls a tool the model was
        // offered (when the tools are known): `[print(end='')]` in a code answer is not.
        if let Some(tools) = cx.tools {
            if !calls.iter().any(|c| tools.is_known(c.name)) {
                return None;
            }
        }
        (calls, end)
    } else {
        return None;
    };
    to_parsed(calls, end, Format::Pythonic)
}

/// The parser result for calls read from Python syntax.
pub(crate) fn to_parsed(calls: Vec<PyCall<'_>>, end: usize, format: Format) -> Option<Parsed<'_>> {
    if calls.is_empty() {
        return None;
    }
    let calls = calls
        .into_iter()
        .map(|c| RawCall {
            name: Cow::Borrowed(c.name),
            arguments: Cow::Owned(c.arguments),
            id: None,
            format,
            span: Span::new(c.start, c.end),
        })
        .collect();
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
                .map(|c| (c.name.into_owned(), serde_json::from_str(&c.arguments).unwrap()))
                .collect();
            (calls, p.end)
        })
    }

    #[test]
    fn corpus_examples() {
        let text = "[get_weather(city='San Francisco', metric='celsius'), register_user(name='John Doe', age=37, address={'city': 'San Francisco', 'state': 'CA'}, role=None, passed_test=True, aliases=['John', 'Johnny'])]";
        let (got, end) = calls(text);
        assert_eq!(end, text.len());
        assert_eq!(got.len(), 2);
        assert_eq!(got[1].1["address"], json!({"city": "San Francisco", "state": "CA"}));
        let (got, _) = calls("[get_weather()]");
        assert_eq!(got, vec![("get_weather".into(), json!({}))]);
    }

    #[test]
    fn llama4_block_and_prose() {
        let text = "Mars. <|python_start|>[get_weather(location='Mars')]<|python_end|> After.";
        let (got, end) = calls(text);
        assert_eq!(got, vec![("get_weather".into(), json!({"location": "Mars"}))]);
        assert_eq!(&text[end..], " After.");
    }

    #[test]
    fn dotted_and_json_literals() {
        let (got, _) = calls("[tools.search.web(q=\"x\", n=3, safe=true, extra=null)]");
        assert_eq!(got, vec![("tools.search.web".into(), json!({"q": "x", "n": 3, "safe": true, "extra": null}))]);
    }

    #[test]
    fn prose_brackets_ignored() {
        for text in ["[see above]", "[1, 2, 3]", "[link](http://x)", "[f(x)]", "[TOOL_CALLS]", "[a == b(c=1)]"] {
            assert_eq!(calls(text).0, vec![], "{text}");
        }
    }

    #[test]
    fn bare_list_needs_a_known_tool_when_tools_are_given() {
        use serde_json::Value;
        use std::collections::HashMap;
        let tools: HashMap<String, Value> = HashMap::from([("get_weather".to_owned(), json!({}))]);
        let cx = Cx { tools: Some(&tools) };
        assert!(parse("[print(end='')]", 0, &cx).is_none());
        let parsed = parse("[get_weathr(city='x'), get_weather(city='y')]", 0, &cx).unwrap();
        assert_eq!(parsed.calls.len(), 2);
        let text = "<|python_start|>[unknown(a=1)]<|python_end|>";
        assert_eq!(parse(text, 0, &cx).unwrap().calls.len(), 1);
    }

    #[test]
    fn bad_siblings() {
        let (got, _) = calls("[calc(x=1e999), get_weather(city='SF')]");
        assert_eq!(got, vec![("get_weather".into(), json!({"city": "SF"}))]);
        assert_eq!(calls("[f(a='x 'y' 'z), g(b='p 'q' 'r)]").0, vec![]);
        assert_eq!(calls("[foo(x=1])]").0, vec![]);
    }

    #[test]
    fn cut_off() {
        // A call cut off inside its arguments is not complete: nothing is recovered from it,
        // but complete siblings before it are.
        let (got, end) = calls("[a(x=1), b(y='unterminated");
        assert_eq!(got, vec![("a".into(), json!({"x": 1}))]);
        assert!(end > 0);
    }
}
