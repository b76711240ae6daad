//! The LLM fixer: corrected arguments from any OpenAI-compatible endpoint, at temperature 0,
//! with bounded attempts and a prompt that forbids inventing values. The answer goes through
//! salvage and repair like any model output and must validate; a value in it that the
//! original arguments do not contain is refused as invented. An answer `CANNOT_FIX: why`
//! becomes an escalation. The dispatcher never uses it on output cut off by the token limit.

use crate::backoff::BoxFuture;
use crate::error::Error;
use crate::handlers::{FixAnswer, FixRequest, Fixer};
use serde_json::{Value, json};
use std::fmt;
use std::time::Duration;

const SYSTEM: &str = "You correct the arguments of one tool call so that they match the tool's JSON Schema. \
Use only values that are present in the original arguments: you may rename keys, change how a value is \
written (quotes, types, nesting, array or string) and drop keys the schema does not declare, but you must \
never invent, guess or complete a value. If a required value is missing, or cannot be read from the original \
arguments without guessing, answer exactly `CANNOT_FIX: ` followed by the reason. Otherwise answer with the \
corrected arguments as one JSON object and nothing else.";

const CANNOT_FIX: &str = "CANNOT_FIX";

/// A [`Fixer`] that asks a model through an OpenAI-compatible `/chat/completions` endpoint.
///
/// ```
/// use std::time::Duration;
/// use toolfix_agent::{Fixer, Handlers, LlmFixer};
///
/// let fixer = LlmFixer::new("http://127.0.0.1:8080/v1", "small-fixer")
///     .unwrap()
///     .with_attempts(2)
///     .with_timeout(Duration::from_secs(20));
/// assert!(fixer.uses_model());
/// let handlers = Handlers::new().fixer(fixer);
/// # let _ = handlers;
/// ```
#[derive(Clone)]
pub struct LlmFixer {
    client: reqwest::Client,
    url: String,
    model: String,
    api_key: Option<String>,
    attempts: u32,
    timeout: Duration,
}

impl fmt::Debug for LlmFixer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LlmFixer")
            .field("url", &self.url)
            .field("model", &self.model)
            .field("attempts", &self.attempts)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl LlmFixer {
    /// A fixer asking `model` at `base_url` (the part before `/chat/completions`, such as
    /// `http://127.0.0.1:8080/v1`); 2 attempts, 30 s per request.
    ///
    /// # Errors
    ///
    /// [`Error::Client`] when the HTTP client cannot be built.
    pub fn new(base_url: &str, model: &str) -> Result<LlmFixer, Error> {
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .build()
            .map_err(|e| Error::Client(e.to_string()))?;
        Ok(LlmFixer {
            client,
            url: format!("{}/chat/completions", base_url.trim_end_matches('/')),
            model: model.to_owned(),
            api_key: None,
            attempts: 2,
            timeout: Duration::from_secs(30),
        })
    }

    /// This fixer sending `key` as a bearer token.
    #[must_use]
    pub fn with_api_key(self, key: impl Into<String>) -> LlmFixer {
        LlmFixer { api_key: Some(key.into()), ..self }
    }

    /// This fixer asking at most `attempts` times per call (1 to 5), feeding back why an
    /// answer was refused.
    #[must_use]
    pub fn with_attempts(self, attempts: u32) -> LlmFixer {
        LlmFixer { attempts: attempts.clamp(1, 5), ..self }
    }

    /// This fixer giving up on a request after `timeout` (a hanging endpoint declines).
    #[must_use]
    pub fn with_timeout(self, timeout: Duration) -> LlmFixer {
        LlmFixer { timeout, ..self }
    }

    /// One chat completion; `None` on any transport or format failure.
    async fn ask(&self, messages: &[Value]) -> Option<String> {
        let body = json!({"model": self.model, "temperature": 0, "messages": messages});
        let mut request = self
            .client
            .post(&self.url)
            .timeout(self.timeout)
            .header("content-type", "application/json")
            .body(serde_json::to_vec(&body).ok()?);
        if let Some(key) = &self.api_key {
            request = request.bearer_auth(key);
        }
        let response = request.send().await.ok()?.error_for_status().ok()?;
        let bytes = response.bytes().await.ok()?;
        let reply: Value = serde_json::from_slice(&bytes).ok()?;
        Some(reply.pointer("/choices/0/message/content")?.as_str()?.to_owned())
    }

    async fn run(&self, request: FixRequest<'_>) -> FixAnswer {
        let tool = request.tool;
        let mut messages = vec![
            json!({"role": "system", "content": SYSTEM}),
            json!({"role": "user", "content": format!(
                "Tool: {}\nDescription: {}\nJSON Schema of the arguments:\n{}\n\nOriginal arguments:\n{}\n\nWhy they were refused:\n{}",
                tool.name(), tool.description(), tool.parameters_shown(), request.raw, request.refusal.message)}),
        ];
        for _ in 0..self.attempts {
            let Some(answer) = self.ask(&messages).await else {
                return FixAnswer::Decline;
            };
            if let Some(why) = cannot_fix(&answer) {
                return FixAnswer::CannotFix(why);
            }
            let outcome = tool.repair_call(&answer);
            let problem = match (outcome.arguments(), outcome.refusal()) {
                (Some(value), _) => match invented(value, request.raw) {
                    None => return FixAnswer::Fixed(outcome.arguments_text().unwrap_or_default().to_owned()),
                    Some(v) => format!(
                        "{v} does not appear in the original arguments: never invent a value; answer `{CANNOT_FIX}: ` and the reason when a value is missing"
                    ),
                },
                (None, Some(refusal)) => refusal.message.clone(),
                (None, None) => "the answer is not valid arguments".to_owned(),
            };
            messages.push(json!({"role": "assistant", "content": answer}));
            messages.push(json!({"role": "user", "content": format!("Your answer was refused: {problem}")}));
        }
        FixAnswer::Decline
    }
}

impl Fixer for LlmFixer {
    fn name(&self) -> &'static str {
        "llm"
    }

    fn uses_model(&self) -> bool {
        true
    }

    fn fix<'a>(&'a self, request: FixRequest<'a>) -> BoxFuture<'a, FixAnswer> {
        Box::pin(self.run(request))
    }
}

/// The reason of a `CANNOT_FIX: why` answer.
fn cannot_fix(answer: &str) -> Option<String> {
    let rest = answer.trim().trim_matches('`').trim_start();
    let head = rest.get(..CANNOT_FIX.len())?;
    if !head.eq_ignore_ascii_case(CANNOT_FIX) {
        return None;
    }
    let why = rest.get(CANNOT_FIX.len()..).unwrap_or_default().trim_start_matches([':', ' ']).trim();
    Some(if why.is_empty() { "the fixer model could not fix the call".to_owned() } else { why.to_owned() })
}

/// The first leaf of `value` (string, number or boolean) whose text `raw` does not contain:
/// a value the fixer made up. Keys are not checked (renaming is the fixer's job).
fn invented(value: &Value, raw: &str) -> Option<String> {
    let lower = raw.to_ascii_lowercase();
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        let found = match v {
            Value::Object(map) => {
                stack.extend(map.values());
                continue;
            }
            Value::Array(list) => {
                stack.extend(list.iter());
                continue;
            }
            Value::Null => true,
            Value::String(s) => {
                let escaped = Value::String(s.clone()).to_string();
                raw.contains(s.as_str()) || raw.contains(escaped.trim_matches('"'))
            }
            Value::Number(n) => raw.contains(&n.to_string()),
            Value::Bool(b) => lower.contains(if *b { "true" } else { "false" }),
        };
        if !found {
            return Some(v.to_string());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_cannot_fix() {
        assert_eq!(cannot_fix("CANNOT_FIX: no path given").as_deref(), Some("no path given"));
        assert_eq!(cannot_fix("  `cannot_fix`").as_deref(), Some("the fixer model could not fix the call"));
        assert_eq!(cannot_fix("{\"a\": 1}"), None);
        assert_eq!(cannot_fix("CANNOT"), None);
        assert_eq!(cannot_fix("é"), None);
    }

    #[test]
    fn finds_invented_values() {
        let raw = r#"path: "/tmp/a b", count "3", force TRUE"#;
        assert_eq!(invented(&json!({"path": "/tmp/a b", "count": 3, "force": true}), raw), None);
        assert_eq!(invented(&json!({"path": "/etc/passwd"}), raw).as_deref(), Some("\"/etc/passwd\""));
        assert_eq!(invented(&json!({"count": 4}), raw).as_deref(), Some("4"));
        assert_eq!(invented(&json!({"force": false}), raw).as_deref(), Some("false"));
        assert_eq!(invented(&json!({"q": "a\"b"}), r#"{"q": "a\"b"}"#), None);
    }
}
