//! The one renderer of [`ToolError`]s into messages for the model. Refusals from the
//! pipeline are already written by `toolfix::feedback`; this adds the agent-loop cases.

use crate::error::{Reason, Severity, ToolError, Transience};
use std::fmt::{self, Write as _};

/// The longest message, in bytes (as `toolfix::feedback`).
pub(crate) const MAX_MESSAGE_BYTES: usize = toolfix::feedback::MAX_MESSAGE_BYTES;
const MAX_DETAIL: usize = 400;

impl ToolError {
    /// The message for the model: what went wrong and what to do next, at most 4 KiB.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolfix_agent::{ExecError, ToolError};
    ///
    /// let e = ToolError::Execution { tool: "fetch".into(), arguments: json!({"url": "x"}),
    ///     error: ExecError::permanent("404 not found") };
    /// assert!(e.message().contains("404 not found"));
    /// ```
    #[must_use]
    pub fn message(&self) -> String {
        render(self)
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::CannotFix(why) | Reason::ToolFailed(why) => f.write_str(&shorten(why, MAX_DETAIL)),
            Reason::NotRetried => f.write_str(
                "a tool that changes things is never retried after a transient failure: the failed run may have \
                 taken effect",
            ),
            Reason::StillFailing { attempts } => write!(f, "still failing after {attempts} attempts"),
            Reason::TurnFailed { failures } => {
                write!(f, "{failures} calls in this turn failed repair; switch to a stronger model")
            }
        }
    }
}

/// Render `error` as a message the model can act on.
fn render(error: &ToolError) -> String {
    let text = match error {
        ToolError::InvalidArgs { refusal, .. } => refusal.message.clone(),
        ToolError::Repeated { message, .. } => message.clone(),
        ToolError::Deserialization { tool, error, sensitive, .. } => {
            let detail = if *sensitive { String::new() } else { format!(" ({})", shorten(error, MAX_DETAIL)) };
            format!(
                "The call to `{tool}` was refused: its arguments match the schema but could not be read as the \
                 tool's input{detail}. Check each value's type and format and send the call again."
            )
        }
        ToolError::Execution { tool, error, .. } => match error.transience() {
            Transience::Transient => format!(
                "The tool `{tool}` failed with a temporary error: {}. It was not retried automatically: check \
                 whether it took effect before sending the call again, or continue without its result.",
                shorten(error.message(), MAX_DETAIL)
            ),
            Transience::Permanent => format!(
                "The tool `{tool}` ran and failed: {}. Sending the same call again will fail the same way: change \
                 the arguments, use another tool, or answer with what you have.",
                shorten(error.message(), MAX_DETAIL)
            ),
        },
        ToolError::Escalation { why, severity, original, attempts, .. } => {
            let mut text = format!(
                "The call to `{}` could not be completed and was handed to the operator: {why}",
                original.tool(),
            );
            if *attempts > 0 && !matches!(why, Reason::StillFailing { .. }) {
                let _ = write!(text, " ({attempts} attempt{})", if *attempts == 1 { "" } else { "s" });
            }
            text.push_str(match severity {
                Severity::Low | Severity::Medium => ". Do not send it again; continue with another approach.",
                Severity::High | Severity::Critical => ". Do not send it again, and do not try to work around it.",
            });
            text
        }
    };
    cap(text)
}

/// `text` cut to at most `max` bytes on a character boundary, with `…` when cut.
fn shorten(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

fn cap(text: String) -> String {
    if text.len() <= MAX_MESSAGE_BYTES { text } else { shorten(&text, MAX_MESSAGE_BYTES - '…'.len_utf8()) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ExecError;
    use serde_json::json;

    #[test]
    fn shorten_respects_char_boundaries() {
        assert_eq!(shorten("héllo", 2), "h…");
        assert_eq!(shorten("abc", 3), "abc");
        assert!(cap("é".repeat(5000)).len() <= MAX_MESSAGE_BYTES);
    }

    #[test]
    fn messages() {
        let exec = |e| ToolError::Execution { tool: "fetch".into(), arguments: json!({}), error: e };
        insta::assert_snapshot!("transient", render(&exec(ExecError::transient("connection reset"))));
        insta::assert_snapshot!("permanent", render(&exec(ExecError::permanent("404 not found"))));
        let bind = ToolError::Deserialization {
            tool: "move".into(),
            value: json!({"x": 1}),
            type_name: "Move",
            error: "invalid value: integer `300`, expected u8".into(),
            sensitive: false,
        };
        insta::assert_snapshot!("deserialization", render(&bind));
        let escalated = exec(ExecError::transient("timeout")).escalate(
            "retry",
            Reason::StillFailing { attempts: 4 },
            Severity::Medium,
            4,
        );
        insta::assert_snapshot!("escalation", render(&escalated));
        let secret = ToolError::Deserialization {
            tool: "login".into(),
            value: json!({"password": "hunter2"}),
            type_name: "Login",
            error: "invalid value: string \"hunter2\"".into(),
            sensitive: true,
        };
        assert!(!render(&secret).contains("hunter2"));
    }
}
