//! The way to the upstream: URL mapping, headers in and out, timeouts, and failures as
//! [`ApiError`]s (unreachable → 502, timeout → 504).

use crate::config::Config;
use crate::error::ApiError;
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, header};
use bytes::Bytes;
use futures_util::StreamExt as _;
use std::time::Duration;

/// Headers that belong to one connection, never forwarded.
const HOP_BY_HOP: &[&str] = &[
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "host",
    "content-length",
];

/// The upstream client, shared by every request.
#[derive(Debug, Clone)]
pub(crate) struct Upstream {
    client: reqwest::Client,
    base: reqwest::Url,
    /// `{base}chat/completions`, parsed once.
    chat: reqwest::Url,
    api_key: Option<HeaderValue>,
    /// The same key alone, sent as `x-api-key` too (Anthropic-style upstreams).
    raw_key: Option<HeaderValue>,
    /// The client's `Authorization` is the proxy's own key: never forwarded.
    strip_client_auth: bool,
    pub(crate) timeout: Duration,
    pub(crate) idle: Duration,
}

/// An upstream response whose headers arrived; the body not read yet.
#[derive(Debug)]
pub(crate) struct Answer {
    pub(crate) status: axum::http::StatusCode,
    pub(crate) headers: HeaderMap,
    pub(crate) response: reqwest::Response,
}

impl Upstream {
    pub(crate) fn new(config: &Config) -> Result<Upstream, crate::Error> {
        let client = reqwest::Client::builder()
            .connect_timeout(config.timeouts.connect)
            .pool_idle_timeout(Duration::from_secs(90))
            .tcp_nodelay(true)
            .no_proxy()
            .build()
            .map_err(crate::Error::Client)?;
        let api_key = match &config.upstream_api_key {
            Some(k) => Some(
                HeaderValue::from_str(&format!("Bearer {k}"))
                    .map_err(|_| crate::Error::Config("the upstream API key is not a valid header value".into()))?,
            ),
            None => None,
        };
        let raw_key = config.upstream_api_key.as_deref().and_then(|k| HeaderValue::from_str(k).ok());
        let mut base = config.upstream.clone();
        if !base.path().ends_with('/') {
            let path = format!("{}/", base.path());
            base.set_path(&path);
        }
        let chat = base.join("chat/completions").unwrap_or_else(|_| base.clone());
        Ok(Upstream {
            client,
            chat,
            base,
            api_key,
            raw_key,
            strip_client_auth: config.api_key.is_some(),
            timeout: config.timeouts.request,
            idle: config.timeouts.stream_idle,
        })
    }

    /// The upstream URL for a path and query of the proxy: `/v1/x` → `{base}x`, anything
    /// else → the upstream's origin with that path.
    pub(crate) fn url(&self, path_and_query: &str) -> reqwest::Url {
        let (path, query) = path_and_query.split_once('?').map_or((path_and_query, None), |(p, q)| (p, Some(q)));
        let mut url = self.base.clone();
        match path.strip_prefix("/v1/") {
            Some(rest) => {
                let joined = format!("{}{rest}", self.base.path());
                url.set_path(&joined);
            }
            None => url.set_path(path),
        }
        url.set_query(query);
        url
    }

    /// The headers to send: the client's, less hop-by-hop ones, with the upstream key.
    /// `identity`: ask for an uncompressed body (the proxy reads it).
    pub(crate) fn request_headers(&self, client: &HeaderMap, identity: bool) -> HeaderMap {
        let mut out = HeaderMap::with_capacity(client.len());
        for (name, value) in client {
            let is_key = name == header::AUTHORIZATION || name.as_str() == "x-api-key";
            if HOP_BY_HOP.contains(&name.as_str())
                || (identity && name == header::ACCEPT_ENCODING)
                || (is_key && (self.strip_client_auth || self.api_key.is_some()))
            {
                continue;
            }
            out.append(name.clone(), value.clone());
        }
        if let Some(k) = &self.api_key {
            out.insert(header::AUTHORIZATION, k.clone());
            if let Some(raw) = &self.raw_key {
                out.insert(HeaderName::from_static("x-api-key"), raw.clone());
            }
        }
        out
    }

    /// Send a request; wait (up to the request timeout) for the response headers.
    pub(crate) async fn send(
        &self,
        method: Method,
        url: reqwest::Url,
        headers: HeaderMap,
        body: reqwest::Body,
    ) -> Result<Answer, ApiError> {
        let request = self.client.request(method, url).headers(headers).body(body);
        let response = match tokio::time::timeout(self.timeout, request.send()).await {
            Err(_) => return Err(ApiError::timeout()),
            Ok(Err(e)) => return Err(classify(e)),
            Ok(Ok(r)) => r,
        };
        Ok(Answer { status: response.status(), headers: response.headers().clone(), response })
    }

    /// A JSON POST (the proxy's own requests: chat completions, re-prompts).
    pub(crate) async fn post_json(&self, path: &str, client: &HeaderMap, body: Bytes) -> Result<Answer, ApiError> {
        let mut headers = self.request_headers(client, true);
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
        let url = if path == "/v1/chat/completions" { self.chat.clone() } else { self.url(path) };
        self.send(Method::POST, url, headers, reqwest::Body::from(body)).await
    }

    /// Read a whole body, within the time left of the request timeout and `limit` bytes.
    pub(crate) async fn read_all(&self, response: reqwest::Response, limit: usize) -> Result<Bytes, ApiError> {
        let read = async {
            let mut stream = response.bytes_stream();
            let mut out = Vec::new();
            while let Some(piece) = stream.next().await {
                let piece = piece.map_err(classify)?;
                if out.len() + piece.len() > limit {
                    return Err(ApiError::bad_gateway(
                        "upstream_response_too_large",
                        format!("the upstream response is over the proxy's limit of {limit} bytes"),
                    ));
                }
                out.extend_from_slice(&piece);
            }
            Ok(Bytes::from(out))
        };
        match tokio::time::timeout(self.timeout, read).await {
            Err(_) => Err(ApiError::timeout()),
            Ok(r) => r,
        }
    }
}

/// A client error as the answer to give.
pub(crate) fn classify(e: reqwest::Error) -> ApiError {
    if e.is_timeout() {
        return ApiError::timeout();
    }
    // Say what failed without echoing the URL (it may carry a key in its query).
    let e = e.without_url();
    let mut detail = e.to_string();
    let mut source = std::error::Error::source(&e);
    while let Some(s) = source {
        detail.push_str(": ");
        detail.push_str(&s.to_string());
        source = s.source();
    }
    ApiError::unreachable(&detail)
}

/// The response headers to give the client: the upstream's, less hop-by-hop ones.
pub(crate) fn response_headers(upstream: &HeaderMap) -> HeaderMap {
    let mut out = HeaderMap::with_capacity(upstream.len());
    for (name, value) in upstream {
        if !HOP_BY_HOP.contains(&name.as_str()) {
            out.append(name.clone(), value.clone());
        }
    }
    out
}

/// The `x-toolfix` header name.
pub(crate) static X_TOOLFIX: HeaderName = HeaderName::from_static("x-toolfix");
