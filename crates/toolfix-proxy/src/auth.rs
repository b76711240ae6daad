//! The proxy's own API key: `Authorization: Bearer KEY` (or `x-api-key: KEY`, as Anthropic
//! clients send it), compared in constant time.

use crate::error::ApiError;
use crate::handlers::Shared;
use crate::state::AppState;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// Let a request through when it carries the key (or no key is set); `/healthz` is open.
pub(crate) async fn require_key(State(state): State<Shared>, request: Request, next: Next) -> Response {
    if state.config.api_key.is_none() {
        return next.run(request).await;
    }
    if request.uri().path() == "/healthz" {
        return next.run(request).await;
    }
    if key_ok(&state, request.headers()) { next.run(request).await } else { ApiError::unauthorized().into_response() }
}

/// Whether a request's headers carry the proxy's key (or the proxy has none).
pub(crate) fn key_ok(state: &AppState, headers: &HeaderMap) -> bool {
    let Some(key) = state.config.api_key.as_deref() else { return true };
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or("");
    let x_api_key = headers.get("x-api-key").and_then(|v| v.to_str().ok()).unwrap_or("");
    let ok = constant_time_eq(bearer.as_bytes(), key.as_bytes());
    let ok_x = constant_time_eq(x_api_key.as_bytes(), key.as_bytes());
    ok | ok_x
}

/// Equal, in time that depends on the lengths only.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    let mut diff = u8::from(a.len() != b.len());
    for i in 0..a.len().max(b.len()) {
        diff |= a.get(i).copied().unwrap_or(0) ^ b.get(i).copied().unwrap_or(0xff);
    }
    std::hint::black_box(diff) == 0
}

#[cfg(test)]
mod tests {
    use super::constant_time_eq;

    #[test]
    fn equal_only_when_equal() {
        assert!(constant_time_eq(b"secret", b"secret"));
        assert!(!constant_time_eq(b"secret", b"secreT"));
        assert!(!constant_time_eq(b"secret", b"secret2"));
        assert!(!constant_time_eq(b"", b"x"));
        assert!(constant_time_eq(b"", b""));
    }
}
