//! What one format parser returns to the extraction driver.
//!
//! Every format is a row of the registry (`registry.rs`): its start markers and a
//! grammar, either a declarative JSON row (`json_family.rs`) or a parser function:
//!
//! ```text
//! /// Parse the markup that starts at byte `at` of `text` (where a start marker matched).
//! /// `None` when this is not this format after all.
//! fn parse<'a>(text: &'a str, at: usize, cx: &Cx<'_>) -> Option<Parsed<'a>>;
//! ```
//!
//! `text` may be a view that ends before the message does (the driver runs a parser on
//! growing views, see `scan.rs`, so that whole-text and streaming reads agree): a parser
//! reads only `text` from `at` on, treats its end like the end of the output (a call cut
//! off there is marked [`RawCall::cut`]), and is a pure function of `(text, at, cx)`.

use super::{Format, ToolLookup};
use crate::{Limits, Span};
use std::borrow::Cow;

/// What a format parser may consult.
#[derive(Clone, Copy)]
pub(crate) struct Cx<'t> {
    /// The tools offered to the model, when known.
    pub(crate) tools: Option<&'t dyn ToolLookup>,
    /// The caps (depth of literals, among others).
    pub(crate) limits: Limits,
    /// The format whose own marker (a reasoning or prose wrapper that only it writes)
    /// came last before this point of the text: tells formats with the same call markup
    /// apart (`<tool_calls>[...]` after Apriel's `[BEGIN FINAL RESPONSE]` is Apriel's).
    pub(crate) hint: Option<Format>,
    /// How far before a `{` a declared tool's name glued to it is looked for (0 without
    /// tools; see `glued.rs`).
    pub(crate) lookback: usize,
}

impl<'t> Cx<'t> {
    /// A context with these tools and limits and no hint.
    pub(crate) fn new(tools: Option<&'t dyn ToolLookup>, limits: Limits) -> Self {
        let lookback =
            tools.map_or(0, |t| t.names().iter().map(|n| n.len()).max().unwrap_or(0) + super::glued::LOOKBACK_SLACK);
        Cx { tools, limits, hint: None, lookback }
    }
}

impl std::fmt::Debug for Cx<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cx").field("tools", &self.tools.is_some()).field("hint", &self.hint).finish_non_exhaustive()
    }
}

/// Markup a format parser consumed, and the calls in it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Parsed<'a> {
    /// One past the last byte of markup consumed (closing markers included). The driver
    /// removes `at..end` from the prose.
    pub(crate) end: usize,
    /// The calls found, in order (may be empty: markup with no usable call).
    pub(crate) calls: Vec<RawCall<'a>>,
}

/// One call as a format parser found it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RawCall<'a> {
    /// Tool name, markup that leaked into it removed.
    pub(crate) name: Cow<'a, str>,
    /// Arguments as JSON text (borrowed model text, or built from raw parameters).
    pub(crate) arguments: Cow<'a, str>,
    /// Call id when the format carries one.
    pub(crate) id: Option<Cow<'a, str>>,
    /// The format recognised.
    pub(crate) format: Format,
    /// The call's own markup in `text`.
    pub(crate) span: Span,
    /// The text ended inside the call, before the markup that closes it: more may have
    /// been coming (more parameters, the rest of a value), so it is not a call to run.
    pub(crate) cut: bool,
    /// Fixes salvage made to the call's envelope (`{'name': …}`), spans in `text`.
    pub(crate) envelope: Vec<crate::salvage::TextFix>,
}

impl<'a> RawCall<'a> {
    /// A complete call with no id.
    pub(crate) fn new(name: Cow<'a, str>, arguments: Cow<'a, str>, format: Format, span: Span) -> Self {
        RawCall { name, arguments, id: None, format, span, cut: false, envelope: Vec::new() }
    }

    /// This call with an id.
    pub(crate) fn with_id(mut self, id: Option<Cow<'a, str>>) -> Self {
        self.id = id;
        self
    }

    /// This call, marked cut off when `cut`.
    pub(crate) fn cut_if(mut self, cut: bool) -> Self {
        self.cut |= cut;
        self
    }
}
