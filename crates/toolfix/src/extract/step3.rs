//! Step-3: `<｜tool_calls_begin｜><｜tool_call_begin｜>[function<｜tool_sep｜>N\n]`
//! `<steptml:invoke name="N"><steptml:parameter name="K">raw</steptml:parameter></steptml:invoke>`
//! `<｜tool_call_end｜>` ... `<｜tool_calls_end｜>`, call blocks separated by `<｜tool_sep｜>`.
//!
//! Values are raw text with whitespace kept exactly (typed through the schema). Missing
//! outer markers, closers, and calls cut off at the end keep what was given.

use super::Format;
use super::invoke::{self, Syntax};
use super::parsed::{Cx, Parsed};
use super::tags::Ns;
use super::text::{is_at, section_start, skip_ws};
use super::typed::Untyped;

const CALLS_BEGIN: &str = "<｜tool_calls_begin｜>";
const CALLS_END: &str = "<｜tool_calls_end｜>";
const CALL_BEGIN: &str = "<｜tool_call_begin｜>";
const CALL_END: &str = "<｜tool_call_end｜>";
const SEP: &str = "<｜tool_sep｜>";

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
    let mut pos = section_start(text, at, CALLS_BEGIN, CALL_BEGIN)?;
    let mut calls = Vec::new();
    let mut end = pos;
    loop {
        let p = skip_ws(text, pos);
        if is_at(text, p, CALLS_END) {
            end = p + CALLS_END.len();
            break;
        }
        if is_at(text, p, SEP) {
            pos = p + SEP.len();
            continue;
        }
        if !is_at(text, p, CALL_BEGIN) {
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
        let q = skip_ws(text, after);
        if is_at(text, q, CALL_END) {
            end = q + CALL_END.len();
        }
        pos = end;
    }
    if calls.is_empty() {
        return None;
    }
    Some(Parsed::new(end, calls))
}

/// The invoke tag of a call block whose text starts at `from`: after whitespace and an
/// optional `function<｜tool_sep｜>N\n` header (the header is at most one line).
fn find_invoke(text: &str, from: usize) -> Option<usize> {
    let p = skip_ws(text, from);
    if invoke::invoke_at(text, p, &STEP3) {
        return Some(p);
    }
    let rest = text.get(p..)?;
    let line_end = rest.find('\n').unwrap_or(rest.len()).min(512);
    let header = rest.get(..line_end)?;
    if !header.contains(SEP) || header.contains(CALL_END) {
        return None;
    }
    let q = skip_ws(text, p + line_end);
    invoke::invoke_at(text, q, &STEP3).then_some(q)
}
