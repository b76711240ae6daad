//! The markup-family format parsers (raw-parameter, token and pythonic formats), with
//! their start markers, and a test hook that runs one of them over a text.

use super::parsed::{Cx, Parsed};
use super::{Format, ToolLookup};

/// A format parser: see `parsed.rs` for the contract.
pub(crate) type ParseFn = for<'a> fn(&'a str, usize, &Cx<'_>) -> Option<Parsed<'a>>;

/// Each markup-family format: its start markers and its parser.
pub(crate) const MARKUP_FORMATS: &[(Format, &[&str], ParseFn)] = &[
    (Format::Qwen3Coder, super::qwen3_coder::MARKERS, super::qwen3_coder::parse),
    (Format::SeedOss, super::seed_oss::MARKERS, super::seed_oss::parse),
];

/// Runs the parser of `format` over `text` as a minimal driver would: at each start
/// marker, in order, skipping what a successful parse consumed. Returns `(name,
/// arguments)` of every call found. For tests; the real driver tries every format.
#[doc(hidden)]
pub fn parse_format_for_tests(
    format: Format,
    text: &str,
    tools: Option<&dyn ToolLookup>,
) -> Vec<(String, String)> {
    let Some((_, markers, parse)) = MARKUP_FORMATS.iter().find(|(f, _, _)| *f == format) else {
        return Vec::new();
    };
    let cx = Cx { tools };
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < text.len() {
        let Some(rest) = text.get(pos..) else { break };
        let Some(at) = markers.iter().filter_map(|m| rest.find(m)).min().map(|i| pos + i) else {
            break;
        };
        match parse(text, at, &cx) {
            Some(parsed) => {
                out.extend(
                    parsed.calls.into_iter().map(|c| (c.name.into_owned(), c.arguments.into_owned())),
                );
                pos = parsed.end.max(at + 1);
            }
            None => pos = at + 1,
        }
        while !text.is_char_boundary(pos) && pos < text.len() {
            pos += 1;
        }
    }
    out
}
