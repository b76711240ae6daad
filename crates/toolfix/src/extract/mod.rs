//! Find tool calls in every channel of an assistant message and in every known model
//! format, without being told the model.
//!
//! Status: skeleton. Types and the format trait are fixed; the driver and formats are
//! being filled in.

mod deepseek_v3;
mod deepseek_v31;
mod deepseek_v32_dsml;
mod deepseek_v4_dsml;
mod format;
mod gemma4;
mod glm45;
mod glm47;
mod gpt_oss_harmony;
mod invoke;
mod kimi_k2;
mod lfm2;
mod markup_registry;
mod minimax_m2;
mod minimax_m3;
mod muse_glimmer;
mod olmo3;
mod params;
mod parsed;
mod pycall;
mod pythonic;
mod qwen3_coder;
mod seed_oss;
mod step3;
mod tags;

pub use format::Format;
#[doc(hidden)]
pub use markup_registry::parse_markup_for_tests;

use crate::Span;
use std::borrow::Cow;

/// Where in the assistant message a call was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Channel {
    /// The `content` text.
    Content,
    /// The `reasoning_content` text (or a `<think>` block inside `content`).
    Reasoning,
    /// The `tool_calls` the server already parsed.
    ToolCalls,
}

/// What the extractor may know about the tools offered to the model.
///
/// Implemented for the schema stage's `ToolSet`, and for a map of tool name to the
/// `parameters` JSON Schema (handy in tests).
pub trait ToolLookup {
    /// True when `name` is a tool the model was offered.
    fn is_known(&self, name: &str) -> bool;
    /// The `parameters` JSON Schema of tool `name`, when known.
    fn parameters(&self, name: &str) -> Option<&serde_json::Value>;
}

impl<S: std::hash::BuildHasher> ToolLookup for std::collections::HashMap<String, serde_json::Value, S> {
    fn is_known(&self, name: &str) -> bool {
        self.contains_key(name)
    }
    fn parameters(&self, name: &str) -> Option<&serde_json::Value> {
        self.get(name)
    }
}

/// A call found in the model's output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExtractedCall<'a> {
    /// The tool name as written (markup that leaked into it removed).
    pub name: Cow<'a, str>,
    /// The arguments as JSON text: the model's own text, borrowed, for formats that write
    /// JSON (it may still need salvage); built from the parameters for formats that write
    /// raw values (typed through the tool's schema when it is known).
    pub arguments: Cow<'a, str>,
    /// The call id, when the format or the server gave one.
    pub id: Option<Cow<'a, str>>,
    /// The format that was recognised.
    pub format: Format,
    /// The channel the call was found in.
    pub channel: Channel,
    /// The bytes of the call's markup in its channel's text.
    pub span: Span,
}
