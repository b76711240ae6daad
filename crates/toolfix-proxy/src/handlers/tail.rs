//! The response tail every handler shares, for any adapter: bounded recovery upstream (a
//! call cut off by the token limit retried once with a larger budget or continued, a call
//! that still cannot be used re-prompted up to `max_reprompts` times), then the labels,
//! report and metrics of the answer settled on. The first response whose calls are all
//! usable is the answer; else the last one, its unusable calls given up.

use super::ClientRequest;
use crate::adapter::{Adapter, Fixed, Unusable};
use crate::config::{GiveUp, LengthRecovery};
use crate::error::ApiError;
use crate::state::AppState;
use crate::summary::{Attempt, AttemptKind, Label, Summary};
use axum::http::HeaderMap;
use bytes::Bytes;
use serde_json::Value;
use std::time::{Duration, Instant};
use toolfix::{CallStatus, FixedCall, FixedReply, ReplyOutcome, ToolSet, fix_reply};

/// What one request works with.
#[derive(Debug)]
pub(crate) struct Ctx<'a> {
    pub(crate) state: &'a AppState,
    pub(crate) headers: &'a HeaderMap,
    pub(crate) tools: &'a ToolSet,
    /// The conversation as the storm guard reads it (`None`: no call in it).
    pub(crate) history: Option<&'a Value>,
    /// Time spent waiting for the upstream.
    pub(crate) waited: Duration,
}

/// The answer settled on.
#[derive(Debug)]
pub(crate) struct Settled {
    pub(crate) fixed: Fixed,
    /// It is a later attempt's.
    pub(crate) later: bool,
    /// How its unusable calls are written.
    pub(crate) unusable: Unusable,
}

impl Ctx<'_> {
    /// Fix one reply.
    pub(crate) fn fix_one(&self, reply: &toolfix::Reply<'_>, unfixed: &mut Vec<String>) -> Option<FixedReply> {
        match fix_reply(reply, Some(self.tools), self.history, &self.state.options) {
            Ok(f) => Some(f),
            Err(e) => {
                unfixed.push(e.message().to_owned());
                None
            }
        }
    }

    /// Fix every reply of a response.
    pub(crate) fn fix<A: Adapter>(&self, response: Value, bytes: Option<Bytes>, summary: &mut Summary) -> Fixed {
        let mut replies = Vec::new();
        A::each_reply(&response, &mut |reply| replies.push(self.fix_one(reply, &mut summary.unfixed)));
        Fixed { response, bytes, replies, read: None }
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
                self.state.metrics.upstream_error(A::API, status.as_str());
                let detail =
                    String::from_utf8_lossy(bytes.get(..bytes.len().min(512)).unwrap_or_default()).into_owned();
                let code =
                    if status == axum::http::StatusCode::BAD_REQUEST { "upstream_rejected" } else { "upstream_status" };
                return Err(ApiError::bad_gateway(code, format!("the upstream answered {status}: {detail}")));
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
            self.state.metrics.upstream_error(A::API, label);
        }
        result
    }
}

/// The attempt's log line.
fn log<A: Adapter>(kind: AttemptKind, fixed: &Fixed, detail: bool) -> Attempt {
    let mut finish_reason = None;
    let mut replies = 0;
    if let Some(read) = &fixed.read {
        finish_reason.clone_from(&read.finish_reason);
        replies = read.replies;
    } else {
        A::each_reply(&fixed.response, &mut |r| {
            if replies == 0 {
                finish_reason = r.finish_reason.map(str::to_owned);
            }
            replies += 1;
        });
    }
    Attempt {
        kind,
        finish_reason,
        outcome: fixed.single().map(FixedReply::outcome),
        error: None,
        original: detail.then(|| Value::Array((0..replies).map(|i| A::original(&fixed.response, i)).collect())),
    }
}

/// True when reply 0 of `response` hit the token limit.
fn hit_limit<A: Adapter>(response: &Value) -> bool {
    let mut hit = None;
    A::each_reply(response, &mut |r| {
        hit.get_or_insert(r.hit_token_limit());
    });
    hit.unwrap_or(false)
}

/// Put the request's own `tool_choice` back (or none).
fn restore_choice(body: &mut Value, request: &Value) {
    if let Some(obj) = body.as_object_mut() {
        match request.get("tool_choice") {
            Some(c) => obj.insert("tool_choice".to_owned(), c.clone()),
            None => obj.remove("tool_choice"),
        };
    }
}

/// Recover from `first` (the answer to `request`) as the settings allow, then record the
/// labels and metrics of the answer settled on.
pub(crate) async fn settle<A: Adapter>(
    ctx: &mut Ctx<'_>,
    request: &ClientRequest,
    first: Fixed,
    summary: &mut Summary,
    model: &str,
) -> Settled {
    let config = &ctx.state.config;
    let metrics = &ctx.state.metrics;
    let detail = config.detail;
    summary.attempts.push(log::<A>(AttemptKind::Initial, &first, detail));
    // The calls that could not be used in the first attempt (reported as given up when a
    // later attempt drops them).
    let first_unusable: Vec<FixedCall> =
        first.single().map(|f| f.calls.iter().filter(|c| !c.status.is_usable()).cloned().collect()).unwrap_or_default();
    let mut current = first;
    let mut length_tried = false;
    let mut reprompts = 0u8;
    while let Some(fixed) = current.single() {
        if fixed.outcome() != ReplyOutcome::Refused {
            break;
        }
        let hit = hit_limit::<A>(&current.response);
        // Only recovery reads the request as a value.
        let request = request.value();
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
        let Some((kind, mut body)) = next else { break };
        tracing::debug!(?kind, "asking the upstream again");
        // A re-prompt names the tool that failed in `tool_choice`; an upstream that
        // refuses a named choice (400) is asked once more without it, and not again.
        let mut forced = kind == AttemptKind::Reprompt && body.get("tool_choice") != request.get("tool_choice");
        if forced && ctx.state.no_forced_tool.load(std::sync::atomic::Ordering::Relaxed) {
            restore_choice(&mut body, request);
            forced = false;
        }
        let mut answer = ctx.ask::<A>(&body).await;
        if forced && answer.as_ref().is_err_and(|e| e.code == "upstream_rejected") {
            ctx.state.no_forced_tool.store(true, std::sync::atomic::Ordering::Relaxed);
            restore_choice(&mut body, request);
            answer = ctx.ask::<A>(&body).await;
        }
        match answer {
            Ok((bytes, response)) => {
                let (response, bytes) = if kind == AttemptKind::Continued {
                    (A::join(&current.response, response), None)
                } else {
                    (response, Some(bytes))
                };
                let attempt = ctx.fix::<A>(response, bytes, summary);
                // Fixed only when the new reply has calls and every one can run.
                let result = match attempt.single().map(FixedReply::outcome) {
                    None | Some(ReplyOutcome::Usable) => "fixed",
                    Some(ReplyOutcome::NoCalls) => "no_calls",
                    Some(_) => "failed",
                };
                if kind == AttemptKind::Reprompt {
                    metrics.reprompt(A::API, result);
                } else {
                    metrics.length_recovery(A::API, result);
                }
                summary.attempts.push(log::<A>(kind, &attempt, detail));
                current = attempt;
            }
            Err(e) => {
                if kind == AttemptKind::Reprompt {
                    metrics.reprompt(A::API, "error");
                } else {
                    metrics.length_recovery(A::API, "error");
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
    let later = summary.attempts.iter().skip(1).any(|a| a.error.is_none());
    for (i, f) in current.replies.iter().enumerate() {
        if let Some(f) = f {
            summary.calls(A::API, i, f, later, metrics, model);
        }
    }
    // A later attempt that answered without calls dropped the first attempt's: given up.
    if later && current.single().is_some_and(|f| f.calls.is_empty()) {
        for c in &first_unusable {
            summary.call(A::API, 0, c, Label::GaveUp, metrics, model);
        }
    }
    let unusable = match config.on_give_up {
        GiveUp::Explain => Unusable::Explain,
        GiveUp::AsSent => Unusable::AsSent,
    };
    Settled { fixed: current, later, unusable }
}
