//! API adapters: each API's wire format, mapped to the library's whole-reply API. An
//! adapter is pure (no I/O): it reads a request (tools, conversation, stream flag),
//! repairs its conversation, reads the replies of a response, writes fixed replies back,
//! builds the proxy's own follow-up requests, and turns upstream SSE bytes into client
//! SSE frames through [`StreamFixer`]. The handlers (`crate::handlers`) own the I/O, the
//! recovery loop, labels and metrics, once for every adapter.

pub(crate) mod chat;
pub(crate) mod compact;
pub(crate) mod history;
mod kept;
pub(crate) mod messages;
mod moved;
pub(crate) mod responses;
mod served;
#[cfg(test)]
mod splice_check;
pub(crate) mod view;

use crate::summary::Summary;
use bytes::Bytes;
use serde_json::Value;
use toolfix::{FixOptions, FixedReply, Limits, Reply, ToolSet};

/// `function.<key>` of an OpenAI-shaped call (a `Value::pointer` path would allocate per
/// segment, on every comparison).
pub(crate) fn function_member<'v>(call: &'v Value, key: &str) -> Option<&'v Value> {
    call.get("function")?.get(key)
}

/// A response and its replies, fixed.
#[derive(Debug)]
pub(crate) struct Fixed {
    pub(crate) response: Value,
    /// The body as the upstream sent it (`None` when the proxy built the response).
    pub(crate) bytes: Option<Bytes>,
    /// One per reply; `None` for a reply too large to fix (passed through).
    pub(crate) replies: Vec<Option<FixedReply>>,
    /// What the first read of the upstream's body found (`None` for a response the proxy
    /// built, or a later attempt's).
    pub(crate) read: Option<Read>,
}

/// What a borrowed read of a response body found: what the report needs of it, whether
/// the fixed replies change it, and how to write them back by editing its bytes.
#[derive(Debug)]
pub(crate) struct Read {
    /// Reply 0's stop reason.
    pub(crate) finish_reason: Option<String>,
    /// How many replies it has.
    pub(crate) replies: usize,
    /// Writing the fixed replies back changes the body.
    pub(crate) changed: bool,
    /// What `apply` would change, as edits of the body, when every change is a value
    /// replaced in place (the rest of the body stays as the upstream sent it); when set,
    /// the response is not built (`Fixed::response` is `null`).
    pub(crate) edits: Option<Vec<Edit>>,
}

/// Bytes `start..end` of a body replaced by `text`.
#[derive(Debug)]
pub(crate) struct Edit {
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) text: String,
}

/// The body with the edits made (they may not overlap) and the report added as the last
/// member of its top-level object (which has members, and no report yet: the adapter
/// checked); `None` when the body does not end its object where expected.
pub(crate) fn spliced(body: &[u8], mut edits: Vec<Edit>, report: &str) -> Option<Vec<u8>> {
    let end = body.iter().rposition(|b| !b.is_ascii_whitespace())?;
    if body.get(end) != Some(&b'}') {
        return None;
    }
    edits.push(Edit { start: end, end, text: format!(",\"x_toolfix\":{report}") });
    edits.sort_by_key(|e| e.start);
    let mut out = Vec::with_capacity(body.len() + edits.iter().map(|e| e.text.len()).sum::<usize>());
    let mut at = 0;
    for e in &edits {
        out.extend_from_slice(body.get(at..e.start)?);
        out.extend_from_slice(e.text.as_bytes());
        at = e.end;
    }
    out.extend_from_slice(body.get(at..)?);
    Some(out)
}

impl Fixed {
    /// The one reply, when the response has exactly one and it was fixed: recovery works
    /// on single replies only (`n > 1` is answered as fixed, without recovery).
    pub(crate) fn single(&self) -> Option<&FixedReply> {
        match self.replies.as_slice() {
            [Some(f)] => Some(f),
            _ => None,
        }
    }
}

/// What a handler reads from a request before deciding anything.
#[derive(Debug)]
pub(crate) struct Peek<'a> {
    /// The raw text of the tool definitions (the tool-set cache key); `None` or empty:
    /// nothing to fix, the request passes through.
    pub(crate) tools: Option<&'a str>,
    /// The client asked for a stream.
    pub(crate) stream: bool,
    /// The model asked for (metrics and logs).
    pub(crate) model: view::Text<'a>,
    /// `Some(n)`: the conversation has `n` messages and nothing the history repair or the
    /// storm guard reads (no call, no result), so the request is forwarded as its bytes
    /// and read as a value only if recovery needs it; `None`: it is read as a value.
    pub(crate) plain: Option<usize>,
    /// The whole body was checked to be UTF-8 (by the hand-written read).
    pub(crate) utf8: bool,
    /// `tools` is the known text the peek was told (see [`Adapter::peek_known`]), taken
    /// by its bytes.
    pub(crate) known: bool,
}

impl<'a> Peek<'a> {
    /// The peek serde_json's read of an envelope makes (not the hand-written read: the
    /// body is not known to be UTF-8, no known text was taken).
    pub(crate) fn checked(
        tools: Option<&'a str>,
        stream: Option<bool>,
        model: view::Text<'a>,
        plain: Option<usize>,
    ) -> Peek<'a> {
        Peek { tools, stream: stream.unwrap_or(false), model, plain, utf8: false, known: false }
    }
}

/// The tool definitions' text of an earlier request, for [`Adapter::peek_known`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct Known<'k> {
    /// The text, which a read of that request found to be JSON.
    pub(crate) text: &'k str,
    /// That request came to this same API, whose peek took the text as tool definitions:
    /// a peek that takes it again need not look at it again to say so.
    pub(crate) here: bool,
}

/// Where a fixed reply compared with a response's text was made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Made {
    /// From this very read of the response: its text is the content the library was given.
    FromThis,
    /// From another read (or unknown).
    Elsewhere,
}

/// True when `fixed`'s content is not `text`. A reply made from this very text whose
/// content the library returned as given ([`FixedReply::content_as_given`]) is not
/// compared again (a message's text is most of an answer's bytes).
pub(crate) fn content_differs(text: &str, fixed: &FixedReply, made: Made) -> bool {
    !(made == Made::FromThis && fixed.content_as_given()) && text != fixed.content
}

/// How a give-up is written into a reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Unusable {
    /// Left out; the text says why (`feedback::gave_up`).
    Explain,
    /// Passed on as the model sent it (`on_give_up = "as_sent"`): a server call as it
    /// came, a call found in the text left in the text.
    AsSent,
}

/// A response body's replies, fixed without building the response (see
/// [`Adapter::fix_body`]).
#[derive(Debug)]
pub(crate) struct Lazy {
    /// One per reply; `None` for a reply too large to fix.
    pub(crate) replies: Vec<Option<FixedReply>>,
    /// What the read found (its `changed`: writing them back would change the body).
    pub(crate) read: Read,
}

/// One API's request and response shapes.
pub(crate) trait Adapter: Send + Sync + 'static {
    /// The metric label of the API (`chat`, `messages`, `responses`).
    const API: &'static str;
    /// The upstream path this adapter serves (under the proxy's `/v1`).
    const PATH: &'static str;
    /// The streaming fixer.
    type Stream<'t>: StreamFixer<'t>;

    /// Read the request's envelope (a cheap borrowed parse), told `known`: the text of
    /// the tool definitions of an earlier request, which a read already found to be JSON
    /// (or `None`). A `tools` member whose bytes start with it, when it is an array, is
    /// that array (an array ends at its own closing bracket) and is not read again, nor
    /// looked at again for whether it holds this API's tools when it came to this API
    /// before ([`Known::here`]): the result is the same as without it.
    fn peek_known<'b>(body: &'b [u8], known: Option<Known<'_>>) -> Result<Peek<'b>, String>;

    /// The tool definitions of a request in a form [`ToolSet::new_partial`] reads.
    fn definitions(request: &Value) -> Vec<Value>;

    /// The conversation so far, as the storm guard (and the ids of new calls) read it: an
    /// OpenAI `messages` array.
    fn history(request: &Value) -> Option<std::borrow::Cow<'_, Value>>;

    /// Repair the conversation in place; what changed.
    fn repair_history(request: &mut Value, limits: &Limits) -> Vec<history::Change>;

    /// Call `f` with each reply of a response (one per choice), in order.
    fn each_reply(response: &Value, f: &mut dyn FnMut(&Reply<'_>));

    /// Fix each reply of a response body, read without building the response (an answer
    /// left alone goes out as the upstream's bytes); `None` when the body is not this
    /// API's JSON.
    fn fix_body(body: &[u8], fix: &mut dyn FnMut(&Reply<'_>) -> Option<FixedReply>) -> Option<Lazy>;

    /// True when writing `fixed` into reply `index` would change the response.
    fn changes(response: &Value, index: usize, fixed: &FixedReply) -> bool;

    /// Write `fixed` into reply `index` of the response: usable calls in the API's call
    /// field, the prose and reasoning left, the stop reason; unusable calls as `unusable`
    /// says.
    fn apply(response: &mut Value, index: usize, fixed: &FixedReply, unusable: Unusable);

    /// Put the report into a response body.
    fn report(response: &mut Value, report: Value);

    /// The model's original message of reply `index` (kept in the report with detail on).
    fn original(response: &Value, index: usize) -> Value;

    /// A corrective re-prompt after reply 0 of `response` could not be used: the
    /// conversation, the reply as the model wrote it, each server call answered
    /// (`feedback::call_result`), then `feedback::reprompt`. Never streamed.
    fn reprompt(request: &Value, response: &Value, fixed: &FixedReply, limits: &Limits) -> Option<Value>;

    /// The request again with a larger output budget (at most `cap`), when that is larger
    /// than what the cut-off response had. Never streamed.
    fn retry_longer(request: &Value, response: &Value, cap: u64) -> Option<Value>;

    /// A request that continues reply 0's text from where it was cut, when the upstream
    /// can (and the cut is in the text). Never streamed.
    fn continuation(request: &Value, response: &Value) -> Option<Value>;

    /// The response of a continuation, joined to the partial reply it continued.
    fn join(partial: &Value, continued: Value) -> Value;

    /// A streaming fixer for one response.
    fn stream<'t>(
        tools: &'t ToolSet,
        history: Option<&'t Value>,
        options: &FixOptions,
        max_event: usize,
    ) -> Self::Stream<'t>;

    /// An error in this API's JSON shape (for the body of an error response).
    fn error_body(kind: &str, code: &str, message: &str) -> Value {
        serde_json::json!({"error": {"message": message, "type": kind, "code": code}})
    }
}

/// Why a stream cannot go on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fault {
    /// An upstream event is longer than the proxy's limit.
    TooLarge,
    /// An upstream event is not what the API sends (not JSON).
    Malformed,
}

impl Fault {
    pub(crate) fn message(self) -> &'static str {
        match self {
            Fault::TooLarge => "an upstream event is over the proxy's size limit",
            Fault::Malformed => "the upstream sent an event that is not valid JSON",
        }
    }
}

/// The pure streaming core of one API: upstream SSE bytes in, client SSE frames out,
/// each reply fixed by [`toolfix::ReplyStream`] as it arrives. Text flows as released;
/// calls are held until the reply ends (a re-prompt stays possible), then written by
/// [`StreamFixer::closing`] from the answer the handler settled on.
pub(crate) trait StreamFixer<'t>: Send {
    /// Feed upstream bytes; the frames to send now.
    ///
    /// # Errors
    ///
    /// A [`Fault`]: the stream must end with [`StreamFixer::error_frame`].
    fn push(&mut self, bytes: &[u8]) -> Result<Vec<Bytes>, Fault>;

    /// The upstream said the stream is over (`[DONE]`, or the API's last event).
    fn is_done(&self) -> bool;

    /// The upstream stream ended: the reply as a non-streamed response and its fixed
    /// replies (the first attempt of the recovery loop). Nothing more is sent by this.
    fn finish(&mut self) -> Ended;

    /// The last frames, from the answer the handler settled on: the calls, text the
    /// client has not seen (a later attempt's, only when no text was sent), the closing
    /// events with the report.
    fn closing(&self, answer: &Fixed, later: bool, summary: &Summary, unusable: Unusable) -> Vec<Bytes>;

    /// An error event in this API's shape (the SDKs raise it).
    fn error_frame(&self, code: &str, message: &str) -> Bytes;

    /// Replies the fixer gave up on (too large), for the report.
    fn unfixed(&self) -> Vec<String>;
}

/// What is known when the upstream stream ends.
#[derive(Debug)]
pub(crate) struct Ended {
    /// Text that was held back and is prose after all (the stream ended normally).
    pub(crate) frames: Vec<Bytes>,
    /// The reply as a non-streamed response (for re-prompts and the report) and its fixed
    /// replies.
    pub(crate) fixed: Fixed,
    /// Every reply got its stop reason, or the stream's end marker came.
    pub(crate) complete: bool,
    /// The upstream sent an error event (passed through).
    pub(crate) errored: bool,
    /// Text sent as content turned out to be reasoning (only its close marker appeared).
    pub(crate) content_was_reasoning: bool,
}

#[cfg(test)]
mod tests {
    use super::Adapter;
    use super::chat::ChatCompletions;
    use super::messages::Messages;
    use super::responses::Responses;
    use serde_json::Value;
    use toolfix::Limits;

    /// A request the peek calls plain is one the history repair leaves alone and whose
    /// conversation, as the storm guard reads it, has that many messages and no call.
    fn agrees<A: Adapter>(body: &str) -> Option<usize> {
        let plain = A::peek_known(body.as_bytes(), None).unwrap().plain?;
        let mut value: Value = serde_json::from_str(body).unwrap();
        let before = value.clone();
        assert!(A::repair_history(&mut value, &Limits::default()).is_empty(), "{body}");
        assert_eq!(value, before, "{body}");
        let history = A::history(&value).expect("a conversation");
        let messages = history.as_array().expect("a list");
        assert_eq!(messages.len(), plain, "{body}");
        let reads = |m: &Value| {
            m.get("tool_calls").is_some_and(Value::is_array) || m.get("role").and_then(Value::as_str) == Some("tool")
        };
        assert!(!messages.iter().any(reads), "{body}");
        Some(plain)
    }

    #[test]
    fn a_plain_conversation_is_what_the_value_read_makes_of_it() {
        assert_eq!(
            agrees::<ChatCompletions>(
                r#"{"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": [{"type": "text", "text": "u"}]},
                {"role": "assistant", "content": "a", "tool_calls": null}]}"#
            ),
            Some(3)
        );
        assert_eq!(
            agrees::<Messages>(
                r#"{"messages": [{"role": "user", "content": "u"}, {"role": "assistant", "content": "a"}, {"role": "user"}]}"#
            ),
            Some(3)
        );
        assert_eq!(
            agrees::<Messages>(r#"{"messages": [{"role": "user", "content": [{"type": "text", "text": "u"}]}]}"#),
            None
        );
        assert_eq!(agrees::<Responses>(r#"{"input": "hello"}"#), Some(1));
        assert_eq!(
            agrees::<Responses>(
                r#"{"input": [{"role": "user", "content": "u"}, {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "a"}]}]}"#
            ),
            Some(2)
        );
        for body in [
            r#"{"input": [{"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"}]}"#,
            r#"{"input": [{"type": "reasoning", "summary": []}]}"#,
            r#"{"input": [{"type": "function_call_output", "call_id": "c", "output": "x"}]}"#,
            r#"{"input": ["hi"]}"#,
            r#"{"model": "m"}"#,
        ] {
            assert_eq!(agrees::<Responses>(body), None, "{body}");
        }
    }
}
