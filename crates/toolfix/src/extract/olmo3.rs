//! OLMo 3: `<function_calls>get_weather(city='Paris')\nsearch(q='x')</function_calls>`:
//! Python calls one per line (see `pycall`). The closer may be missing; a bracketed list
//! inside the block is accepted too.

use super::Format;
use super::parsed::{Cx, Parsed};
use super::pycall::{self, Layout};
use super::pythonic::to_parsed;
use super::tags;

const START: &str = "<function_calls>";
const END: &str = "</function_calls>";

/// Start marker.
pub(crate) const MARKERS: &[&str] = &[START];

/// Parses an OLMo 3 call block at `at`.
pub(crate) fn parse<'a>(text: &'a str, at: usize, _cx: &Cx<'_>) -> Option<Parsed<'a>> {
    if !tags::at(text, at, START) {
        return None;
    }
    let p = tags::skip_ws(text, at + START.len());
    let (calls, end) = if tags::at(text, p, "[") && pycall::looks_like_call(text, p + 1) {
        let (calls, end) = pycall::parse_calls(text, p + 1, Layout::List);
        let q = tags::skip_ws(text, end);
        (calls, if tags::at(text, q, END) { q + END.len() } else { end })
    } else if pycall::looks_like_call(text, p) {
        pycall::parse_calls(text, p, Layout::Lines(END))
    } else {
        return None;
    };
    to_parsed(calls, end, Format::Olmo3)
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
                .map(|c| (c.name.into_owned(), serde_json::from_str(&c.arguments).unwrap()))
                .collect();
            (calls, p.end)
        })
    }

    #[test]
    fn corpus_examples() {
        let text = "<function_calls>get_weather(city='San Francisco', metric='celsius')\nget_weather()\ndo_something_cool(steps=[])</function_calls> done";
        let (got, end) = calls(text);
        assert_eq!(
            got,
            vec![
                ("get_weather".into(), json!({"city": "San Francisco", "metric": "celsius"})),
                ("get_weather".into(), json!({})),
                ("do_something_cool".into(), json!({"steps": []})),
            ]
        );
        assert_eq!(&text[end..], " done");
        let (got, _) = calls("<function_calls>f(role=null, ok=true)</function_calls>");
        assert_eq!(got, vec![("f".into(), json!({"role": null, "ok": true}))]);
    }

    #[test]
    fn malformed() {
        let (got, _) = calls("<function_calls>bad(x=b'z')\nget_weather(city='SF')</function_calls>");
        assert_eq!(got, vec![("get_weather".into(), json!({"city": "SF"}))]);
        assert_eq!(calls("<function_calls>foo(x=1])</function_calls>").0, vec![]);
        let (got, end) = calls("<function_calls>f(a=1)");
        assert_eq!(got, vec![("f".into(), json!({"a": 1}))]);
        assert_eq!(end, "<function_calls>f(a=1)".len());
    }
}
