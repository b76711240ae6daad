//! The sentences front ends put in front of a model around its calls: the corrective
//! re-prompt after a reply whose calls could not be used, the answer given for a call of
//! that reply, the result added for a call whose result the history lacks, and the turn
//! a client gets when the attempts ran out. Every API adapter of the proxy uses these, so
//! the model reads the same words whatever API it is reached through.

use std::fmt::Write as _;

/// The answer for a call that could run, in a reply that is asked again because of
/// another call.
const NOT_RUN: &str = "This call was not run: another call in the same reply could not be used. \
                       Send it again together with the corrected calls.";

/// The answer to the requests of a batch that holds a tool call.
const BATCHED_CALL: &str = "This batch was not sent: it holds a tool call (`tools/call`), and calls are checked \
                            one request at a time. Send each request on a line of its own.";

/// The result added for a call the history has no result for.
const NO_RESULT: &str = "No result was recorded for this call.";

/// The answer to give, in a corrective re-prompt, for a call the server parsed (which the
/// model can be answered about by id): why it could not be used (`message`: its refusal or
/// the storm guard's words), or that it was not run because another call of the reply
/// could not be. [`FixedCall::result_for_model`](crate::FixedCall::result_for_model) gives
/// it for a fixed call.
///
/// ```
/// assert_eq!(toolfix::feedback::call_result(Some("fix /to")), "fix /to");
/// assert!(toolfix::feedback::call_result(None).starts_with("This call was not run"));
/// ```
#[must_use]
pub fn call_result(message: Option<&str>) -> &str {
    message.unwrap_or(NOT_RUN)
}

/// The answer, in a corrective re-prompt, for a call that was not run because another
/// call of the same reply could not be used.
///
/// ```
/// assert!(toolfix::feedback::not_run().starts_with("This call was not run"));
/// ```
#[must_use]
pub fn not_run() -> &'static str {
    NOT_RUN
}

/// The corrective re-prompt after a reply some of whose calls could not be used: the
/// user turn that follows the reply (and the answers to its server-parsed calls, see
/// [`call_result`]). It lists each call found in the reply's text (`in_text`: its name as
/// written and what to fix; such calls have no id the model could be answered about) and
/// asks for the calls again. [`FixedReply::reprompt`](crate::FixedReply::reprompt) writes
/// it for a fixed reply.
///
/// ```
/// let text = toolfix::feedback::reprompt([("pay", "add /to")]);
/// assert!(text.contains("`pay`: add /to") && text.ends_with("as tool calls."));
/// ```
#[must_use]
pub fn reprompt<'a>(in_text: impl IntoIterator<Item = (&'a str, &'a str)>) -> String {
    let mut out = String::new();
    let mut calls = in_text.into_iter().peekable();
    if calls.peek().is_some() {
        out.push_str("The tool calls written in your last reply's text could not be used.\n\n");
        for (name, message) in calls {
            let _ = write!(out, "`{name}`: {}\n\n", message.trim_end());
        }
    }
    out.push_str("Send the tool calls again, corrected, as tool calls.");
    out
}

/// The result given for a call the conversation has no result for (a strict server
/// refuses a call left unanswered).
///
/// ```
/// assert!(toolfix::feedback::no_result().starts_with("No result"));
/// ```
#[must_use]
pub fn no_result() -> &'static str {
    NO_RESULT
}

/// The answer to a request that gives one of its members (`member`: `params`,
/// `arguments`, ...) more than once: JSON readers disagree on which one counts (most keep
/// the last, some the first, some refuse), so a front end that checks calls cannot know
/// which one the receiver would act on, and does not pass it on.
///
/// ```
/// let text = toolfix::feedback::repeated_member("arguments");
/// assert!(text.contains("`arguments` more than once") && text.ends_with("once."));
/// ```
#[must_use]
pub fn repeated_member(member: &str) -> String {
    format!(
        "This request was not sent: it gives `{member}` more than once, and JSON readers disagree on \
         which one counts. Send it again with `{member}` given once."
    )
}

/// The answer to each request of a JSON-RPC batch that holds a tool call: a front end that
/// checks calls one request at a time does not pass the batch on.
///
/// ```
/// assert!(toolfix::feedback::batched_call().contains("on a line of its own"));
/// ```
#[must_use]
pub fn batched_call() -> &'static str {
    BATCHED_CALL
}

/// The text of the turn a client gets when a reply's calls still could not be used after
/// every attempt: it says which calls were not run and why (`unusable`: name and message),
/// so the agent (and the model, reading it back in the next turn) can act on it; never an
/// empty turn. `prose` is the reply's own text, kept before it.
/// [`FixedReply::gave_up`](crate::FixedReply::gave_up) writes it for a fixed reply.
///
/// ```
/// let text = toolfix::feedback::gave_up("Paying.", [("pay", "add /to")]);
/// assert!(text.starts_with("Paying.\n\n") && text.contains("`pay` was not run. add /to"));
/// ```
#[must_use]
pub fn gave_up<'a>(prose: &str, unusable: impl IntoIterator<Item = (&'a str, &'a str)>) -> String {
    let mut out = String::with_capacity(prose.len() + 256);
    out.push_str(prose);
    if !prose.is_empty() {
        if !prose.ends_with('\n') {
            out.push('\n');
        }
        out.push('\n');
    }
    out.push_str("[toolfix] ");
    let unusable: Vec<(&str, &str)> = unusable.into_iter().collect();
    if let [(name, message)] = unusable.as_slice() {
        let _ = write!(out, "The tool call `{name}` was not run. {}", message.trim_end());
    } else {
        out.push_str("These tool calls were not run.");
        for (name, message) in unusable {
            let _ = write!(out, "\n\n`{name}`: {}", message.trim_end());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::Channel;
    use crate::reply::{FixOptions, FixedReply, Reply, fix_reply};
    use crate::schema::ToolSet;
    use serde_json::json;

    fn fixed() -> FixedReply {
        let tools = ToolSet::new(&[
            json!({"name": "send_money", "parameters": {"type": "object", "properties": {
                "to": {"type": "string"}, "amount": {"type": "integer"}}, "required": ["to", "amount"]}}),
            json!({"name": "get_weather", "parameters": {"type": "object", "properties": {
                "city": {"type": "string"}}, "required": ["city"]}}),
        ])
        .unwrap();
        let calls = json!([{"id": "c1", "function": {"name": "send_money", "arguments": "{\"to\": \"bob\"}"}},
                           {"id": "c2", "function": {"name": "get_weather", "arguments": "{\"city\": \"Rome\"}"}}]);
        let content = "Paying.\n<tool_call>{\"name\": \"send_money\", \"arguments\": {\"amount\": 3}}</tool_call>";
        fix_reply(&Reply::new(content).with_tool_calls(&calls), Some(&tools), None, &FixOptions::default()).unwrap()
    }

    #[test]
    fn the_words_around_calls() {
        let f = fixed();
        insta::assert_snapshot!("reprompt", f.reprompt());
        let answers: Vec<&str> = f
            .calls
            .iter()
            .filter(|c| c.channel == Channel::ToolCalls)
            .map(crate::reply::FixedCall::result_for_model)
            .collect();
        insta::assert_snapshot!("call_results", answers.join("\n---\n"));
        insta::assert_snapshot!("gave_up", f.gave_up(&f.content));
        insta::assert_snapshot!("no_result", no_result());
    }
}
