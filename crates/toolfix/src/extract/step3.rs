//! Step-3: `<｜tool_calls_begin｜><｜tool_call_begin｜>[function<｜tool_sep｜>N\n]`
//! `<steptml:invoke name="N"><steptml:parameter name="K">raw</steptml:parameter></steptml:invoke>`
//! `<｜tool_call_end｜>` ... `<｜tool_calls_end｜>`, call blocks separated by `<｜tool_sep｜>`.
//!
//! Values are raw text with whitespace kept exactly (typed through the schema). Missing
//! outer markers, closers, and calls cut off at the end keep what was given.

use super::Format;
use super::invoke::{self, Syntax};
use super::params::Untyped;
use super::parsed::{Cx, Parsed};
use super::tags::{self, Ns};

const CALLS_BEGIN: &str = "<｜tool_calls_begin｜>";
const CALLS_END: &str = "<｜tool_calls_end｜>";
const CALL_BEGIN: &str = "<｜tool_call_begin｜>";
const CALL_END: &str = "<｜tool_call_end｜>";
const SEP: &str = "<｜tool_sep｜>";

/// Start markers: the section, or a call block when the section marker is missing.
pub(crate) const MARKERS: &[&str] = &[CALLS_BEGIN, CALL_BEGIN];

const STEP3: Syntax = Syntax {
    ns: Ns::Prefix("steptml:"),
    block: "function_calls",
    stops: &[CALL_END, CALLS_END, CALL_BEGIN],
    framing: false,
    untyped: Untyped::Json,
    format: Format::Step3,
};

/// Parses a Step-3 tool-call section (or bare call blocks) at `at`.
pub(crate) fn parse<'a>(text: &'a str, at: usize, cx: &Cx<'_>) -> Option<Parsed<'a>> {
    let mut pos = if tags::at(text, at, CALLS_BEGIN) {
        at + CALLS_BEGIN.len()
    } else if tags::at(text, at, CALL_BEGIN) {
        at
    } else {
        return None;
    };
    let mut calls = Vec::new();
    let mut end = pos;
    loop {
        let p = tags::skip_ws(text, pos);
        if tags::at(text, p, CALLS_END) {
            end = p + CALLS_END.len();
            break;
        }
        if tags::at(text, p, SEP) {
            pos = p + SEP.len();
            continue;
        }
        if !tags::at(text, p, CALL_BEGIN) {
            break;
        }
        let Some(invoke_at) = find_invoke(text, p + CALL_BEGIN.len()) else {
            // No invoke in this call block: the section is broken here. Stop (the driver
            // tries again at the next marker), so a failing parse does bounded work.
            break;
        };
        let Some((call, after)) = invoke::parse_invoke(text, invoke_at, &STEP3, cx) else {
            break;
        };
        calls.extend(call);
        end = after;
        let q = tags::skip_ws(text, after);
        if tags::at(text, q, CALL_END) {
            end = q + CALL_END.len();
        }
        pos = end;
    }
    if calls.is_empty() {
        return None;
    }
    Some(Parsed { end, calls })
}

/// The invoke tag of a call block whose text starts at `from`: after whitespace and an
/// optional `function<｜tool_sep｜>N\n` header (the header is at most one line).
fn find_invoke(text: &str, from: usize) -> Option<usize> {
    let p = tags::skip_ws(text, from);
    if invoke::invoke_at(text, p, &STEP3) {
        return Some(p);
    }
    let rest = text.get(p..)?;
    let line_end = rest.find('\n').unwrap_or(rest.len()).min(512);
    let header = rest.get(..line_end)?;
    if !header.contains(SEP) || header.contains(CALL_END) {
        return None;
    }
    let q = tags::skip_ws(text, p + line_end);
    invoke::invoke_at(text, q, &STEP3).then_some(q)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};
    use std::collections::HashMap;

    fn calls(text: &str, tools: Option<&HashMap<String, Value>>) -> Vec<(String, Value)> {
        let at = MARKERS.iter().filter_map(|m| text.find(m)).min().unwrap();
        let cx = Cx { tools: tools.map(|t| t as &dyn super::super::ToolLookup) };
        parse(text, at, &cx)
            .map(|p| {
                p.calls
                    .into_iter()
                    .map(|c| (c.name.into_owned(), serde_json::from_str(&c.arguments).unwrap()))
                    .collect()
            })
            .unwrap_or_default()
    }

    #[test]
    fn parallel_with_sep() {
        let text = "<｜tool_calls_begin｜><｜tool_call_begin｜><steptml:invoke name=\"get_weather\"><steptml:parameter name=\"city\">Tokyo</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_sep｜><｜tool_call_begin｜><steptml:invoke name=\"get_time\"><steptml:parameter name=\"timezone\">Asia/Tokyo</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>";
        assert_eq!(
            calls(text, None),
            vec![
                ("get_weather".into(), json!({"city": "Tokyo"})),
                ("get_time".into(), json!({"timezone": "Asia/Tokyo"}))
            ]
        );
    }

    #[test]
    fn header_and_whitespace_kept() {
        let mut tools = HashMap::new();
        tools.insert(
            "edit_file".to_owned(),
            json!({"type": "object", "properties": {"old": {"type": "string"}, "indent": {"type": "integer"}, "on": {"type": "boolean"}}}),
        );
        let text = "<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜>edit_file\n<steptml:invoke name=\"edit_file\"><steptml:parameter name=\"old\">    if x:\n        return 1\n</steptml:parameter><steptml:parameter name=\"indent\"> 4 </steptml:parameter><steptml:parameter name=\"on\"> true </steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>";
        assert_eq!(
            calls(text, Some(&tools)),
            vec![("edit_file".into(), json!({"old": "    if x:\n        return 1\n", "indent": 4, "on": true}))]
        );
    }

    #[test]
    fn malformed() {
        // Cut off after the invoke tag: the call is kept, with no arguments.
        let text = "<｜tool_calls_begin｜><｜tool_call_begin｜><steptml:invoke name=\"func\">";
        assert_eq!(calls(text, None), vec![("func".into(), json!({}))]);
        // Section marker missing.
        let text = "<｜tool_call_begin｜><steptml:invoke name=\"f\"></steptml:invoke><｜tool_call_end｜>";
        assert_eq!(calls(text, None), vec![("f".into(), json!({}))]);
        // </steptml:invoke> missing: the call ends at <｜tool_call_end｜>.
        let text = "<｜tool_calls_begin｜><｜tool_call_begin｜><steptml:invoke name=\"f\"><steptml:parameter name=\"a\">x<｜tool_call_end｜><｜tool_calls_end｜> after";
        let cx = Cx { tools: None };
        let parsed = parse(text, 0, &cx).unwrap();
        assert_eq!(&text[parsed.end..], " after");
        assert_eq!(calls(text, None), vec![("f".into(), json!({"a": "x"}))]);
        assert_eq!(calls("<｜tool_calls_begin｜>nothing", None), vec![]);
    }
}
