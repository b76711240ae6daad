//! Errors: [`Error`] for the library's caller (settings, binding), [`ApiError`] for what a
//! client is answered (an OpenAI-style JSON error with a status).

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

/// What can go wrong setting up or running the proxy.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A setting is wrong; the message says which and what to do.
    #[error("{0}")]
    Config(String),
    /// Binding or serving failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// Why it failed.
        source: std::io::Error,
    },
    /// The HTTP client could not be built.
    #[error("cannot build the upstream HTTP client: {0}")]
    Client(#[source] reqwest::Error),
}

/// An error answered to the client: status, and `{"error": {"message", "type", "code"}}`.
#[derive(Debug)]
pub(crate) struct ApiError {
    pub(crate) status: StatusCode,
    pub(crate) kind: &'static str,
    pub(crate) code: &'static str,
    pub(crate) message: String,
}

impl ApiError {
    pub(crate) fn bad_request(code: &'static str, message: impl Into<String>) -> Self {
        ApiError { status: StatusCode::BAD_REQUEST, kind: "invalid_request_error", code, message: message.into() }
    }

    pub(crate) fn too_large(limit: usize) -> Self {
        ApiError {
            status: StatusCode::PAYLOAD_TOO_LARGE,
            kind: "invalid_request_error",
            code: "request_too_large",
            message: format!("the request body is over the proxy's limit of {limit} bytes"),
        }
    }

    pub(crate) fn unreachable(detail: &str) -> Self {
        ApiError {
            status: StatusCode::BAD_GATEWAY,
            kind: "upstream_error",
            code: "upstream_unreachable",
            message: format!("the upstream cannot be reached: {detail}"),
        }
    }

    pub(crate) fn bad_gateway(code: &'static str, message: impl Into<String>) -> Self {
        ApiError { status: StatusCode::BAD_GATEWAY, kind: "upstream_error", code, message: message.into() }
    }

    pub(crate) fn timeout() -> Self {
        ApiError {
            status: StatusCode::GATEWAY_TIMEOUT,
            kind: "upstream_error",
            code: "upstream_timeout",
            message: "the upstream did not answer in time".to_owned(),
        }
    }

    pub(crate) fn unauthorized() -> Self {
        ApiError {
            status: StatusCode::UNAUTHORIZED,
            kind: "authentication_error",
            code: "invalid_api_key",
            message: "missing or wrong API key: send `Authorization: Bearer KEY` with the proxy's key".to_owned(),
        }
    }

    /// The JSON body.
    pub(crate) fn body(&self) -> String {
        serde_json::json!({"error": {"message": self.message, "type": self.kind, "code": self.code}}).to_string()
    }

    /// The metric label of an upstream failure (`unreachable`, `timeout`, ...), if it is one.
    pub(crate) fn upstream_label(&self) -> Option<&'static str> {
        match self.code {
            "upstream_unreachable" => Some("unreachable"),
            "upstream_timeout" => Some("timeout"),
            c if c.starts_with("upstream_") => Some("bad_response"),
            _ => None,
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (self.status, self.body()).into_response();
        response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
        response
    }
}
