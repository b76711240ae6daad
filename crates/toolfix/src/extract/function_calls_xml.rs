//! Anthropic-style XML, which models trained on it leak into their text:
//! `<function_calls><invoke name="N"><parameter name="K">raw</parameter></invoke></function_calls>`.
//! The invoke grammar is MiniMax M2's (shared `invoke` module); the block marker is OLMo
//! 3's, whose parser (Python calls inside) is tried first.

use super::Format;
use super::invoke::{self, Syntax};
use super::params::Untyped;
use super::parsed::{Cx, Parsed};
use super::tags::{self, Ns};

const OPEN: &str = "<function_calls>";
const CLOSE: &str = "</function_calls>";

/// Start marker.
pub(crate) const MARKERS: &[&str] = &[OPEN];

const XML: Syntax = Syntax {
    ns: Ns::Plain,
    block: "function_calls",
    stops: &[],
    framing: true,
    untyped: Untyped::Json,
    format: Format::FunctionCallsXml,
};

/// Parses a `<function_calls>` block of invoke elements at `at`.
pub(crate) fn parse<'a>(text: &'a str, at: usize, cx: &Cx<'_>) -> Option<Parsed<'a>> {
    if !tags::at(text, at, OPEN) {
        return None;
    }
    let (calls, after) = invoke::parse_invokes(text, at + OPEN.len(), &XML, cx);
    if calls.is_empty() {
        return None;
    }
    let q = tags::skip_ws(text, after);
    let end = if tags::at(text, q, CLOSE) { q + CLOSE.len() } else { after };
    Some(Parsed { end, calls })
}
