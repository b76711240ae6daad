//! Recovery for agent loops built on [`toolfix`]: when a call still fails after
//! deterministic repair, or the tool itself fails, what happens next is declared per tool.
//!
//! - [`ToolError`]: the closed set of failures, each rendered into a message a model can
//!   act on;
//! - [`Dispatcher`]: tools registered once with typed async handlers (the argument type
//!   gives the schema and [`Effect`] declares read-only, idempotent or mutating);
//!   [`Dispatcher::dispatch`] returns an [`Outcome`]: a result, a message to retry with,
//!   an escalation or a hard stop; [`Dispatcher::dispatch_reply`] does it for every call
//!   of a model reply, calls left in `content` or reasoning included;
//! - [`Handlers`]: per tool or by default — a chain of [`Fixer`]s for invalid arguments
//!   (deterministic [`text_fixer`]s, then the LLM fixer), a sanitiser for values that do
//!   not bind, and an [`OnExecution`] policy (retry with [`Backoff`] only for transient
//!   errors on tools that do not mutate, escalate, or stop hard);
//! - `LlmFixer` (feature `llm`): corrected arguments from any OpenAI-compatible endpoint,
//!   never trusted as is;
//! - [`Turn`]: per-turn bounds and the counter that tells the caller to switch models.
//!
//! The core is runtime-agnostic: retries sleep on a [`Timer`]; the `tokio` feature gives
//! [`TokioTimer`].

#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod backoff;
mod dispatch;
mod error;
mod feedback;
mod handlers;
#[cfg(feature = "llm")]
mod llm;

#[cfg(feature = "tokio")]
pub use backoff::TokioTimer;
pub use backoff::{Backoff, BoxFuture, Jitter, Timer};
pub use dispatch::{Bounds, Call, Dispatched, Dispatcher, Outcome, Success, Turn};
pub use error::{Error, ExecError, Reason, Severity, ToolError, Transience};
pub use handlers::{Decide, Decision, FixAnswer, FixRequest, Fixer, Handlers, OnExecution, Sanitiser, text_fixer};
#[cfg(feature = "llm")]
pub use llm::LlmFixer;
/// What running a tool does to the world (read-only, idempotent, mutating): the library's
/// one side-effect model, which also decides what recovery may do (a mutating tool is never
/// retried after a transient failure).
pub use toolfix::Effect;

#[cfg(all(doctest, feature = "tokio", feature = "llm"))]
#[doc = include_str!("../../../docs/agent.md")]
struct AgentDocDoctests;
