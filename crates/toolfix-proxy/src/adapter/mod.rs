//! API adapters: each API's wire format, mapped to the whole-reply API.
//!
//! An adapter knows where a request keeps its tools and conversation, how to repair that
//! conversation, where a response keeps its replies, how to write a fixed reply back, and
//! how to ask the upstream again (a corrective re-prompt, a longer retry, a continuation).
//! The recovery loop ([`crate::recover`]) and the handlers are written against this trait,
//! so Anthropic Messages or OpenAI Responses can follow as more adapters. Only
//! [`chat::ChatCompletions`] exists today.

pub(crate) mod chat;
pub(crate) mod chat_stream;
pub(crate) mod history;

use serde_json::Value;
use toolfix::{FixedReply, Limits, Reply};

/// One API's request and response shapes.
pub(crate) trait Adapter {
    /// The upstream path this adapter serves (under the proxy's `/v1`).
    const PATH: &'static str;

    /// The tool definitions the request offers; `None` when it offers none (such a
    /// request is passed through untouched).
    fn tools(request: &Value) -> Option<&[Value]>;

    /// The conversation so far, as the storm guard reads it (an OpenAI `messages` array).
    fn history(request: &Value) -> Option<&Value>;

    /// Repair the conversation in place; what changed.
    fn repair_history(request: &mut Value, limits: &Limits) -> Vec<history::Change>;

    /// True when the client asked for a stream.
    fn is_stream(request: &Value) -> bool;

    /// The replies of a response, one per choice, in order.
    fn replies(response: &Value) -> Vec<Reply<'_>>;

    /// True when writing `fixed` into reply `index` would change the response.
    fn changes(response: &Value, index: usize, fixed: &FixedReply) -> bool;

    /// Write `fixed` into reply `index` of the response: usable calls in the API's call
    /// field, the prose and reasoning left, the stop reason.
    fn apply(response: &mut Value, index: usize, fixed: &FixedReply);

    /// The model's original message of reply `index` (kept in the report with detail on).
    fn original(response: &Value, index: usize) -> Value;

    /// A corrective re-prompt after reply 0 of `response` could not be used: the
    /// conversation, the reply as the model wrote it, and for each call the message
    /// that says what to fix (or that it was not run). Never streamed.
    fn reprompt(request: &Value, response: &Value, fixed: &FixedReply, limits: &Limits) -> Option<Value>;

    /// The request again with a larger output budget (at most `cap`), when that is larger
    /// than what the cut-off response had. Never streamed.
    fn retry_longer(request: &Value, response: &Value, cap: u64) -> Option<Value>;

    /// A request that continues reply 0's text from where it was cut, when the upstream
    /// can (and the cut is in the text). Never streamed.
    fn continuation(request: &Value, response: &Value) -> Option<Value>;

    /// The response of a continuation, joined to the partial reply it continued.
    fn join(partial: &Value, continued: Value) -> Value;
}
