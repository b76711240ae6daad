//! Bounded recovery upstream, for any adapter: a call cut off by the token limit is
//! retried once with a larger budget (or continued), a call that still cannot be used
//! triggers a corrective re-prompt, up to `max_reprompts` times. The first response whose
//! calls are all usable is the answer; else the last one, with the refusals reported.

use crate::adapter::Adapter;
use crate::config::LengthRecovery;
use crate::error::ApiError;
use crate::state::AppState;
use crate::summary::{Attempt, AttemptKind, Summary};
use axum::http::HeaderMap;
use bytes::Bytes;
use serde_json::Value;
use std::time::{Duration, Instant};
use toolfix::{CallStatus, FixedReply, ReplyOutcome, ToolSet, fix_reply};

/// A response and its replies, fixed.
#[derive(Debug)]
pub(crate) struct Fixed {
    pub(crate) response: Value,
    /// The body as the upstream sent it (`None` when the proxy built the response).
    pub(crate) bytes: Option<Bytes>,
    /// One per reply; `None` for a reply too large to fix (passed through).
    pub(crate) replies: Vec<Option<FixedReply>>,
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

/// What one request works with.
#[derive(Debug)]
pub(crate) struct Ctx<'a> {
    pub(crate) state: &'a AppState,
    pub(crate) headers: &'a HeaderMap,
    pub(crate) tools: &'a ToolSet,
    /// The conversation as forwarded (the client's, repaired).
    pub(crate) history: Option<&'a Value>,
    /// Time spent waiting for the upstream.
    pub(crate) waited: Duration,
}

impl Ctx<'_> {
    /// Fix every reply of a response.
    pub(crate) fn fix<A: Adapter>(&self, response: Value, bytes: Option<Bytes>, summary: &mut Summary) -> Fixed {
        let mut fixed = Vec::new();
        for reply in A::replies(&response) {
            match fix_reply(&reply, Some(self.tools), self.history, &self.state.options) {
                Ok(f) => fixed.push(Some(f)),
                Err(e) => {
                    summary.unfixed.push(e.message().to_owned());
                    fixed.push(None);
                }
            }
        }
        Fixed { response, bytes, replies: fixed }
    }

    /// Send one of the proxy's own requests (never streamed) and read the JSON answer.
    async fn ask<A: Adapter>(&mut self, request: &Value) -> Result<(Bytes, Value), ApiError> {
        let body = Bytes::from(serde_json::to_vec(request).unwrap_or_default());
        let started = Instant::now();
        let result = async {
            let answer = self.state.upstream.post_json(A::PATH, self.headers, body).await?;
            let status = answer.status;
            let bytes = self.state.upstream.read_all(answer.response, self.state.config.response_limit).await?;
            if !status.is_success() {
                self.state.metrics.upstream_error(status.as_str());
                return Err(ApiError::bad_gateway("upstream_status", format!("the upstream answered {status}")));
            }
            let value = serde_json::from_slice(&bytes).map_err(|e| {
                ApiError::bad_gateway("upstream_bad_json", format!("the upstream's answer is not JSON: {e}"))
            })?;
            Ok((bytes, value))
        }
        .await;
        self.waited += started.elapsed();
        if let Err(e) = &result
            && let Some(label) = e.upstream_label()
        {
            self.state.metrics.upstream_error(label);
        }
        result
    }
}

/// The attempt's log line.
pub(crate) fn log<A: Adapter>(kind: AttemptKind, fixed: &Fixed, detail: bool) -> Attempt {
    let replies = A::replies(&fixed.response);
    Attempt {
        kind,
        finish_reason: replies.first().and_then(|r| r.finish_reason).map(str::to_owned),
        outcome: fixed.single().map(FixedReply::outcome),
        error: None,
        original: detail.then(|| Value::Array((0..replies.len()).map(|i| A::original(&fixed.response, i)).collect())),
    }
}

/// Recover from `first` (the answer to `request`) as the settings allow.
pub(crate) async fn recover<A: Adapter>(
    ctx: &mut Ctx<'_>,
    request: &Value,
    first: Fixed,
    summary: &mut Summary,
) -> Fixed {
    let config = &ctx.state.config;
    let detail = config.detail;
    summary.attempts.push(log::<A>(AttemptKind::Initial, &first, detail));
    let mut current = first;
    let mut length_tried = false;
    let mut reprompts = 0u8;
    while let Some(fixed) = current.single() {
        if fixed.outcome() != ReplyOutcome::Refused {
            break;
        }
        let hit = A::replies(&current.response).first().is_some_and(toolfix::Reply::hit_token_limit);
        let refused = fixed.calls.iter().any(|c| c.status == CallStatus::Refused);
        let mut next = None;
        if hit && refused && !length_tried && config.length_recovery != LengthRecovery::Off {
            length_tried = true;
            if config.length_recovery == LengthRecovery::Continue {
                next = A::continuation(request, &current.response).map(|r| (AttemptKind::Continued, r));
            }
            if next.is_none() {
                next = A::retry_longer(request, &current.response, config.max_tokens_cap)
                    .map(|r| (AttemptKind::RetryLonger, r));
            }
        }
        if next.is_none() && reprompts < config.max_reprompts {
            reprompts += 1;
            next = A::reprompt(request, &current.response, fixed, &config.limits).map(|r| (AttemptKind::Reprompt, r));
        }
        let Some((kind, body)) = next else { break };
        tracing::debug!(?kind, "asking the upstream again");
        match ctx.ask::<A>(&body).await {
            Ok((bytes, response)) => {
                let (response, bytes) = if kind == AttemptKind::Continued {
                    (A::join(&current.response, response), None)
                } else {
                    (response, Some(bytes))
                };
                let attempt = ctx.fix::<A>(response, bytes, summary);
                let good = attempt.single().is_none_or(|f| f.outcome() != ReplyOutcome::Refused);
                let result = if good { "fixed" } else { "failed" };
                if kind == AttemptKind::Reprompt {
                    ctx.state.metrics.reprompt(result);
                } else {
                    ctx.state.metrics.length_recovery(result);
                }
                summary.attempts.push(log::<A>(kind, &attempt, detail));
                current = attempt;
            }
            Err(e) => {
                if kind == AttemptKind::Reprompt {
                    ctx.state.metrics.reprompt("error");
                } else {
                    ctx.state.metrics.length_recovery("error");
                }
                summary.attempts.push(Attempt {
                    kind,
                    finish_reason: None,
                    outcome: None,
                    error: Some(e.message),
                    original: None,
                });
                break;
            }
        }
    }
    current
}

/// The attempt that gave the answer: the last one that got a response.
pub(crate) fn answered_late(summary: &Summary) -> bool {
    summary.attempts.iter().skip(1).any(|a| a.error.is_none())
}
