//! toolfix makes LLM tool calls land.
//!
//! Models emit tool calls that are almost right. toolfix recovers every call that can be
//! recovered honestly, leaves valid calls byte for byte untouched, refuses to guess where a
//! guess could be wrong, and when it refuses, writes an error the model can act on.
//!
//! The pipeline, one module per stage ([`pipeline`] is the one that knows their order):
//!
//! 1. [`extract`]: find tool calls in every channel and model format;
//! 2. [`salvage`]: lenient JSON with a report of every text fix;
//! 3. [`validate`] and repair: check against the tool's schema ([`ToolSet`]), repair
//!    only where it disagreed, or refuse with a message for the model ([`feedback`]);
//! 4. [`bind`]: into a typed Rust value;
//! 5. [`guard`]: break loops of repeated calls.
//!
//! ```
//! use serde_json::json;
//! use toolfix::ToolSet;
//! use toolfix::extract::{extract, Message};
//!
//! let tools = ToolSet::new(&[json!({"name": "get_weather", "parameters": {"type": "object",
//!     "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
//!     "required": ["city"]}})]).unwrap();
//! let reply = Message::new("<tool_call>{\"name\": \"get_weather\", \"arguments\": {'city': 'Paris', 'days': '3'}}</tool_call>");
//! let found = extract(&reply, Some(&tools));
//! let call = &found.calls[0];
//! let outcome = tools.repair_call(&call.name, &call.arguments);
//! assert_eq!(outcome.arguments_text(), Some(r#"{"city": "Paris", "days": 3}"#));
//! ```
//!
//! # Untrusted input
//!
//! Every entry point is bounded by [`Limits`]: input size, nesting depth, linear time, no
//! recursion driven by the input, and no panic on any input.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod bind;
mod canonical;
pub mod check;
mod error;
pub mod extract;
pub mod feedback;
pub mod flatten;
pub mod guard;
mod limits;
pub mod pipeline;
mod pointer;
mod repair;
pub mod reply;
pub mod report;
pub mod salvage;
pub mod schema;
mod span;
mod validate;

pub use error::{Error, ErrorKind, Result};
pub use limits::Limits;
pub use pipeline::{CallOptions, CallOutcome};
pub use reply::{
    CallFixer, CallStatus, FixOptions, FixedCall, FixedReply, NativeCall, Reply, ReplyEvent, ReplyOutcome, ReplyStream,
    ToolCallDelta, fix_reply,
};
pub use report::{Issue, Outcome, Refusal, Repair, RepairKind, Report, Stats};
pub use schema::{Effect, Policy, Tool, ToolSet};
pub use span::Span;

#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
struct ReadmeDoctests;
