//! What one format parser returns to the extraction driver.
//!
//! Each format lives in its own file (`extract/<format>.rs`) and exposes:
//!
//! ```text
//! /// Start markers that make the driver try this format at a position.
//! pub(crate) const MARKERS: &[&str] = &["<tool_call>"];
//! /// Parse the markup that starts at byte `at` of `text` (where one of MARKERS matched).
//! /// `None` when this is not this format after all.
//! pub(crate) fn parse<'a>(text: &'a str, at: usize, cx: &Cx<'_>) -> Option<Parsed<'a>>;
//! ```
//!
//! `text` may be a view that ends before the message does (the driver runs a parser on
//! growing views, see `scan.rs`, so that whole-text and streaming reads agree): a parser
//! reads only `text`, treats its end like the end of the output (a call cut off there is
//! recovered as cut off), and is a pure function of `(text, at, cx)`.

use super::{Format, ToolLookup};
use crate::Span;
use std::borrow::Cow;

/// What a format parser may consult.
#[derive(Clone, Copy)]
pub(crate) struct Cx<'t> {
    /// The tools offered to the model, when known.
    pub(crate) tools: Option<&'t dyn ToolLookup>,
}

impl std::fmt::Debug for Cx<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cx").field("tools", &self.tools.is_some()).finish()
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
}
