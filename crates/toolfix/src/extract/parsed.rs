//! The contract between the extraction driver and the format grammars: what a grammar
//! is given ([`Cx`], the [`Markers`] of its row) and what it returns ([`Parsed`],
//! [`RawCall`]).
//!
//! Every format is a row of the registry (`registry.rs`): its start markers and a
//! grammar, either a declarative row read by a shared grammar (`json_family.rs`,
//! `invoke.rs`, `pythonic.rs`, given the row's [`Markers`]) or a parser function
//! ([`ParseFn`]):
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
use crate::limits::Limits;
use crate::span::Span;
use std::borrow::Cow;

/// A format parser (see the module doc).
pub(crate) type ParseFn = for<'a> fn(&'a str, usize, &Cx<'_>) -> Option<Parsed<'a>>;

/// Bytes before a `{` that the look back for a declared tool name glued to it may read,
/// beyond the longest tool name (`glued.rs`).
pub(crate) const LOOKBACK_SLACK: usize = 32;

/// What a shared grammar knows of the registry row it runs for.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Markers {
    /// The format reported.
    pub(crate) format: Format,
    /// Markers where its calls start.
    pub(crate) start: &'static [&'static str],
    /// Markers that end its calls.
    pub(crate) end: &'static [&'static str],
}

/// The longest of `markers` that `text` has at `at`.
pub(crate) fn matched<'m>(markers: &[&'m str], text: &str, at: usize) -> Option<&'m str> {
    let rest = text.get(at..)?;
    markers.iter().copied().filter(|m| rest.starts_with(m)).max_by_key(|m| m.len())
}

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
        let lookback = tools.map_or(0, |t| t.longest_name() + LOOKBACK_SLACK);
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
    /// Text inside the markup that is reasoning (a channel message that is not a call:
    /// Harmony's analysis channel addressed to a tool that was not offered).
    pub(crate) reasoning: Option<Span>,
    /// Text inside the markup that stays prose (an answer wrapper's answer): only the
    /// markup around it leaves the prose.
    pub(crate) prose: Option<Span>,
}

impl<'a> Parsed<'a> {
    /// Markup ending at `end` with these calls.
    pub(crate) fn new(end: usize, calls: Vec<RawCall<'a>>) -> Self {
        Parsed { end, calls, reasoning: None, prose: None }
    }

    /// This markup, with `prose` (inside it) kept as prose.
    pub(crate) fn with_prose(mut self, prose: Span) -> Self {
        self.prose = Some(prose);
        self
    }

    /// This markup, with `reasoning` as its reasoning text.
    pub(crate) fn with_reasoning(mut self, reasoning: Span) -> Self {
        self.reasoning = Some(reasoning);
        self
    }
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
    /// What the markup was meant as (set by the driver once its group is judged).
    pub(crate) intent: super::Intent,
    /// The signals that decided it.
    pub(crate) signals: super::intent::Signals,
}

impl<'a> RawCall<'a> {
    /// A complete call with no id.
    pub(crate) fn new(name: Cow<'a, str>, arguments: Cow<'a, str>, format: Format, span: Span) -> Self {
        RawCall {
            name,
            arguments,
            id: None,
            format,
            span,
            cut: false,
            envelope: Vec::new(),
            intent: super::Intent::Call,
            signals: super::intent::Signals::default(),
        }
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
