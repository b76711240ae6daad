//! The way to the upstream: URL mapping, headers in and out, timeouts, and failures as
//! [`ApiError`]s (unreachable → 502, timeout → 504).
//!
//! A plain `http://` upstream is spoken to over HTTP/1.1 connections the proxy keeps in a
//! small pool of its own ([`http1`]: written and read in the request's own task): the
//! authority, the `Host` header and the chat path are built once; a request is one head and
//! a body on a ready connection, with no URL parsing, redirect policy or retry layer per
//! request. A connection goes back to the pool when its answer has been read to the end.
//! Anything else (`https://`, a URL with credentials) goes through `reqwest`.

mod http1;

use crate::config::Config;
use crate::error::ApiError;
use axum::body::Body;
use axum::http::uri::PathAndQuery;
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, header};
use bytes::Bytes;
use http_body_util::BodyExt as _;
use hyper::body::{Body as _, Frame, SizeHint};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Duration;

/// How long an unused connection is kept.
const POOL_IDLE: Duration = Duration::from_secs(90);
/// The most unused connections kept (a burst of more opens new ones; after it, the rest
/// are closed rather than held).
const POOL_MAX_IDLE: usize = 64;

/// Whether a header belongs to one connection (never forwarded).
pub(crate) fn is_hop_by_hop(name: &HeaderName) -> bool {
    name == header::CONNECTION
        || name == header::TRANSFER_ENCODING
        || name == header::HOST
        || name == header::CONTENT_LENGTH
        || name == header::TE
        || name == header::TRAILER
        || name == header::UPGRADE
        || name == header::PROXY_AUTHENTICATE
        || name == header::PROXY_AUTHORIZATION
        || name.as_str() == "keep-alive"
}

/// A header line's name as `HeaderName::from_bytes` makes it, without its lookup when
/// the line spells a common name in lower case (the usual spelling): `from_bytes`
/// lowercases the name into a buffer and finds it in the table of every standard name,
/// ~115 instructions a line. Any other spelling goes through `from_bytes`.
pub(crate) fn header_name(name: &[u8]) -> Result<HeaderName, axum::http::header::InvalidHeaderName> {
    // Told by the length, then compared a word at a time (a match on the texts called
    // `bcmp` for each).
    let is = |known: &[u8]| crate::head::same(name, known);
    Ok(match name.len() {
        4 if is(b"date") => header::DATE,
        4 if is(b"host") => header::HOST,
        6 if is(b"accept") => header::ACCEPT,
        6 if is(b"server") => header::SERVER,
        10 if is(b"connection") => header::CONNECTION,
        10 if is(b"user-agent") => header::USER_AGENT,
        12 if is(b"content-type") => header::CONTENT_TYPE,
        13 if is(b"authorization") => header::AUTHORIZATION,
        14 if is(b"content-length") => header::CONTENT_LENGTH,
        15 if is(b"accept-encoding") => header::ACCEPT_ENCODING,
        17 if is(b"transfer-encoding") => header::TRANSFER_ENCODING,
        _ => return HeaderName::from_bytes(name),
    })
}

/// The upstream client, shared by every request.
#[derive(Debug)]
pub(crate) struct Upstream {
    transport: Transport,
    /// The upstream's base path, ending in `/` (`/v1/`).
    base_path: String,
    /// `{base}chat/completions`, built once.
    chat: PathAndQuery,
    /// The upstream path of each API route's path after `/v1/` (`messages` →
    /// `{base}messages`), built once.
    routes: [(&'static str, PathAndQuery); 3],
    api_key: Option<HeaderValue>,
    /// The same key alone, sent as `x-api-key` too (Anthropic-style upstreams).
    raw_key: Option<HeaderValue>,
    /// The client's `Authorization` is the proxy's own key: never forwarded.
    strip_client_auth: bool,
    /// The headers the upstream key adds (`authorization`, then `x-api-key`), as the plain
    /// client writes them after the client's.
    own_keys: Vec<(HeaderName, HeaderValue)>,
    pub(crate) timeout: Duration,
    pub(crate) idle: Duration,
}

#[derive(Debug)]
enum Transport {
    Plain(Arc<http1::Pool>),
    Reqwest { client: reqwest::Client, base: reqwest::Url },
}

/// An upstream response whose headers arrived; the body not read yet.
#[derive(Debug)]
pub(crate) struct Answer {
    pub(crate) status: StatusCode,
    /// The upstream's headers less the hop-by-hop ones (each transport leaves them out:
    /// the plain client as it reads the head, reqwest's answers by
    /// [`strip_hop_by_hop`]), to be given on as they are.
    pub(crate) headers: HeaderMap,
    pub(crate) response: UpstreamBody,
}

/// The body of an upstream response, read as it arrives.
#[derive(Debug)]
pub(crate) struct UpstreamBody(Inner);

/// An upstream body: the plain client's reader as it is (not boxed and wrapped a second
/// time under the idle timeout's box), or any other body.
#[derive(Debug)]
enum Inner {
    Plain(http1::Reader),
    Other(Body),
}

impl hyper::body::Body for Inner {
    type Data = Bytes;
    type Error = BodyError;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, BodyError>>> {
        match self.get_mut() {
            // The error as `Body::new` wraps it.
            Inner::Plain(reader) => Pin::new(reader).poll_frame(cx).map_err(axum::Error::new),
            Inner::Other(body) => Pin::new(body).poll_frame(cx),
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            Inner::Plain(reader) => reader.is_end_stream(),
            Inner::Other(body) => body.is_end_stream(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            Inner::Plain(reader) => reader.size_hint(),
            Inner::Other(body) => body.size_hint(),
        }
    }
}

impl Inner {
    fn into_body(self) -> Body {
        match self {
            Inner::Plain(reader) => Body::new(reader),
            Inner::Other(body) => body,
        }
    }
}

/// A failure reading an upstream body.
pub(crate) type BodyError = axum::Error;

/// A request body to send.
#[derive(Debug)]
pub(crate) enum Payload {
    /// Bytes in memory.
    Bytes(Bytes),
    /// Bytes as they arrive (a passed-through request).
    Stream(Body),
}

impl UpstreamBody {
    /// The body's bytes as they arrive.
    pub(crate) fn bytes_stream(self) -> axum::body::BodyDataStream {
        self.0.into_body().into_data_stream()
    }

    /// The body as it is, failing when the upstream is silent for longer than `idle`.
    pub(crate) fn with_idle_timeout(self, idle: Duration) -> Body {
        Body::new(IdleTimeout { inner: self.0, idle, timer: None, armed: false, done: false })
    }
}

impl Upstream {
    pub(crate) fn new(config: &Config) -> Result<Upstream, crate::Error> {
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
        let base_path = base.path().to_owned();
        let mapped = |rest: &str| {
            PathAndQuery::try_from(format!("{base_path}{rest}"))
                .map_err(|_| crate::Error::Config("the upstream URL's path is not a valid request path".into()))
        };
        let chat = mapped("chat/completions")?;
        let routes = [
            ("chat/completions", chat.clone()),
            ("messages", mapped("messages")?),
            ("responses", mapped("responses")?),
        ];
        let plain = base.scheme() == "http" && base.username().is_empty() && base.password().is_none();
        let transport = if let (true, Some(host), Some(port)) = (plain, base.host_str(), base.port_or_known_default()) {
            let authority = if port == 80 { host.to_owned() } else { format!("{host}:{port}") };
            let host_header = HeaderValue::from_str(&authority)
                .map_err(|_| crate::Error::Config("the upstream host is not a valid header value".into()))?;
            Transport::Plain(Arc::new(http1::Pool::new(format!("{host}:{port}"), host_header, config.timeouts.connect)))
        } else {
            let client = reqwest::Client::builder()
                .connect_timeout(config.timeouts.connect)
                .pool_idle_timeout(POOL_IDLE)
                .tcp_nodelay(true)
                .no_proxy()
                .build()
                .map_err(crate::Error::Client)?;
            Transport::Reqwest { client, base }
        };
        let mut own_keys = Vec::new();
        if let Some(k) = &api_key {
            own_keys.push((header::AUTHORIZATION, k.clone()));
            if let Some(raw) = &raw_key {
                own_keys.push((HeaderName::from_static("x-api-key"), raw.clone()));
            }
        }
        Ok(Upstream {
            transport,
            base_path,
            chat,
            routes,
            own_keys,
            api_key,
            raw_key,
            strip_client_auth: config.api_key.is_some(),
            timeout: config.timeouts.request,
            idle: config.timeouts.stream_idle,
        })
    }

    /// The upstream path and query for a path and query of the proxy: `/v1/x` → `{base}x`,
    /// anything else → that path at the upstream's origin.
    pub(crate) fn target(&self, path_and_query: &str) -> Result<PathAndQuery, ApiError> {
        // An API route (the usual path): its upstream path, made once.
        if let Some(rest) = path_and_query.strip_prefix("/v1/")
            && let Some((_, target)) = self.routes.iter().find(|(route, _)| *route == rest)
        {
            return Ok(target.clone());
        }
        let mapped = match path_and_query.strip_prefix("/v1/") {
            // The usual base (`/v1/`): the path as it is, without building it again.
            Some(rest) if self.base_path != "/v1/" => PathAndQuery::try_from(format!("{}{rest}", self.base_path)),
            _ => PathAndQuery::try_from(path_and_query),
        };
        mapped.map_err(|_| ApiError::bad_request("invalid_path", "the request path is not valid"))
    }

    /// The headers to send: the client's, less hop-by-hop ones, with the upstream key.
    /// `identity`: ask for an uncompressed body (the proxy reads it).
    pub(crate) fn request_headers(&self, client: &HeaderMap, identity: bool) -> HeaderMap {
        // A clone keeps the map's layout (no name hashed again); then the same filter.
        let mut out = self.forwarded_headers(client.clone());
        if identity {
            out.remove(header::ACCEPT_ENCODING);
        }
        out
    }

    /// The headers to send, made from the client's in place (a request passed through as
    /// it came): less hop-by-hop ones, the client's keys dropped when the proxy has its own
    /// or sends the upstream's, the upstream key added. (The plain client skips hop-by-hop
    /// headers as it writes the head: they are left in its map, not removed one by one.)
    pub(crate) fn forwarded_headers(&self, mut headers: HeaderMap) -> HeaderMap {
        if !matches!(self.transport, Transport::Plain(_)) {
            strip_hop_by_hop(&mut headers);
        }
        if self.drops_client_keys() {
            headers.remove(header::AUTHORIZATION);
            headers.remove("x-api-key");
        }
        if let Some(k) = &self.api_key {
            headers.insert(header::AUTHORIZATION, k.clone());
            if let Some(raw) = &self.raw_key {
                headers.insert(HeaderName::from_static("x-api-key"), raw.clone());
            }
        }
        headers
    }

    /// The client's `authorization` and `x-api-key` are not forwarded (the proxy's own key,
    /// or the upstream key sent instead).
    fn drops_client_keys(&self) -> bool {
        self.strip_client_auth || self.api_key.is_some()
    }

    /// Send a request; wait (up to the request timeout) for the response headers.
    pub(crate) async fn send(
        &self,
        method: Method,
        target: PathAndQuery,
        headers: HeaderMap,
        body: Payload,
    ) -> Result<Answer, ApiError> {
        let (client, base) = match &self.transport {
            // The plain client keeps the request timeout itself.
            Transport::Plain(pool) => return pool.send(method, &target, &headers, None, body, self.timeout).await,
            Transport::Reqwest { client, base } => (client, base),
        };
        // Pinned where it is made (moving the exchange's large future into the timeout
        // copied all of it).
        let sent = std::pin::pin!(async {
            let mut url = base.clone();
            url.set_path(target.path());
            url.set_query(target.query());
            let request = client.request(method, url).headers(headers).body(match body {
                Payload::Bytes(b) => reqwest::Body::from(b),
                Payload::Stream(b) => reqwest::Body::wrap_stream(b.into_data_stream()),
            });
            let response = request.send().await.map_err(classify_reqwest)?;
            let response = axum::http::Response::<reqwest::Body>::from(response);
            let (mut parts, body) = response.into_parts();
            strip_hop_by_hop(&mut parts.headers);
            Ok(Answer {
                status: parts.status,
                headers: parts.headers,
                response: UpstreamBody(Inner::Other(Body::new(body))),
            })
        });
        self.timed(sent).await
    }

    /// `sent`, within the request timeout.
    async fn timed(&self, sent: impl Future<Output = Result<Answer, ApiError>> + Unpin) -> Result<Answer, ApiError> {
        match tokio::time::timeout(self.timeout, sent).await {
            Err(_) => Err(ApiError::timeout()),
            Ok(r) => r,
        }
    }

    /// A JSON POST (the proxy's own requests: chat completions, re-prompts).
    pub(crate) async fn post_json(&self, path: &str, client: &HeaderMap, body: Bytes) -> Result<Answer, ApiError> {
        let target = if path == "/v1/chat/completions" { self.chat.clone() } else { self.target(path)? };
        if let Transport::Plain(pool) = &self.transport {
            // The plain client writes the same headers from the client's map, not a copy.
            let json = http1::Json { drop_auth: self.drops_client_keys(), add: &self.own_keys };
            return pool.send(Method::POST, &target, client, Some(&json), Payload::Bytes(body), self.timeout).await;
        }
        let mut headers = self.request_headers(client, true);
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
        self.send(Method::POST, target, headers, Payload::Bytes(body)).await
    }

    /// Read a whole body, within the time left of the request timeout and `limit` bytes.
    pub(crate) async fn read_all(&self, response: UpstreamBody, limit: usize) -> Result<Bytes, ApiError> {
        let read = async {
            let mut body = response.0;
            let too_large = || {
                ApiError::bad_gateway(
                    "upstream_response_too_large",
                    format!("the upstream response is over the proxy's limit of {limit} bytes"),
                )
            };
            if body.size_hint().lower() > limit as u64 {
                return Err(too_large());
            }
            // All of it in the plain client's buffer (the length was checked above).
            if let Inner::Plain(reader) = &mut body
                && let Some(whole) = reader.take_whole()
            {
                return Ok(whole);
            }
            let mut out: Option<Bytes> = None;
            let mut joined = Vec::new();
            while let Some(frame) = body.frame().await {
                let Ok(piece) = frame.map_err(|e| classify(&e))?.into_data() else { continue };
                let seen = out.as_ref().map_or(0, Bytes::len) + joined.len();
                if seen + piece.len() > limit {
                    return Err(too_large());
                }
                // One piece (the usual small answer) is kept as it came, without a copy.
                match out.take() {
                    None if joined.is_empty() => out = Some(piece),
                    first => {
                        if let Some(first) = first {
                            joined.reserve(first.len() + piece.len());
                            joined.extend_from_slice(&first);
                        }
                        joined.extend_from_slice(&piece);
                    }
                }
            }
            Ok(out.unwrap_or_else(|| Bytes::from(joined)))
        };
        match tokio::time::timeout(self.timeout, read).await {
            Err(_) => Err(ApiError::timeout()),
            Ok(r) => r,
        }
    }
}

/// A failure reading an upstream body as the answer to give.
pub(crate) fn classify(e: &BodyError) -> ApiError {
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        if s.downcast_ref::<reqwest::Error>().is_some_and(reqwest::Error::is_timeout) {
            return ApiError::timeout();
        }
        source = s.source();
    }
    ApiError::unreachable(&chain(e))
}

/// A reqwest error as the answer to give.
fn classify_reqwest(e: reqwest::Error) -> ApiError {
    if e.is_timeout() {
        return ApiError::timeout();
    }
    // Say what failed without echoing the URL (it may carry a key in its query).
    ApiError::unreachable(&chain(&e.without_url()))
}

/// An error and its sources, `: `-separated.
fn chain(e: &dyn std::error::Error) -> String {
    let mut detail = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        detail.push_str(": ");
        detail.push_str(&s.to_string());
        source = s.source();
    }
    detail
}

/// Take the hop-by-hop headers out of a map, in place.
pub(crate) fn strip_hop_by_hop(headers: &mut HeaderMap) {
    // Most maps hold one (`content-length`) or none: look before removing.
    let mut found: [Option<HeaderName>; 4] = Default::default();
    let mut n = 0;
    for name in headers.keys() {
        if is_hop_by_hop(name) {
            if let Some(slot) = found.get_mut(n) {
                *slot = Some(name.clone());
                n += 1;
            } else {
                // More than a few: remove every kind.
                n = usize::MAX;
                break;
            }
        }
    }
    if n == usize::MAX {
        let all: Vec<HeaderName> = headers.keys().filter(|k| is_hop_by_hop(k)).cloned().collect();
        for name in all {
            headers.remove(name);
        }
        return;
    }
    for name in found.into_iter().flatten() {
        headers.remove(name);
    }
}

/// The `x-toolfix` header name.
pub(crate) static X_TOOLFIX: HeaderName = HeaderName::from_static("x-toolfix");

/// A body that fails when no frame comes for `idle` while one is awaited.
struct IdleTimeout {
    inner: Inner,
    idle: Duration,
    /// Made on the first wait, re-armed on each later one.
    timer: Option<Pin<Box<tokio::time::Sleep>>>,
    armed: bool,
    done: bool,
}

impl hyper::body::Body for IdleTimeout {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
        let this = &mut *self;
        if this.done {
            return Poll::Ready(None);
        }
        if let Poll::Ready(frame) = Pin::new(&mut this.inner).poll_frame(cx) {
            this.armed = false;
            this.done = !matches!(frame, Some(Ok(_)));
            return Poll::Ready(frame.map(|f| f.map_err(std::io::Error::other)));
        }
        let idle = this.idle;
        let timer = match &mut this.timer {
            Some(t) => {
                if !this.armed {
                    t.as_mut().reset(tokio::time::Instant::now() + idle);
                }
                t
            }
            None => this.timer.insert(Box::pin(tokio::time::sleep(idle))),
        };
        this.armed = true;
        ready!(timer.as_mut().poll(cx));
        this.done = true;
        Poll::Ready(Some(Err(std::io::Error::other("the upstream went silent"))))
    }

    fn is_end_stream(&self) -> bool {
        self.done || self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::{Payload, Upstream};
    use crate::config::Config;
    use axum::http::{HeaderMap, Method};
    use bytes::Bytes;
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    /// An upstream that answers one request per connection, then closes it without saying
    /// so (no `connection: close`), as a server whose keep-alive timer ran out does.
    async fn one_answer_per_connection() -> (String, tokio::task::JoinHandle<usize>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/v1", listener.local_addr().unwrap());
        let task = tokio::spawn(async move {
            let mut connections = 0;
            while connections < 3 {
                let (mut socket, _) = listener.accept().await.unwrap();
                connections += 1;
                let mut head = Vec::new();
                let mut buf = [0u8; 1024];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    let n = socket.read(&mut buf).await.unwrap();
                    head.extend_from_slice(&buf[..n]);
                }
                let head = String::from_utf8_lossy(&head).into_owned();
                assert!(head.starts_with("POST /v1/chat/completions HTTP/1.1\r\n"), "{head}");
                assert!(head.to_ascii_lowercase().contains("\r\nhost: 127.0.0.1:"), "{head}");
                socket.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}").await.unwrap();
                socket.shutdown().await.unwrap();
            }
            connections
        });
        (url, task)
    }

    #[tokio::test]
    async fn a_pooled_connection_the_upstream_closed_is_replaced() {
        let (url, task) = one_answer_per_connection().await;
        let upstream = Upstream::new(&Config::new(&url).unwrap()).unwrap();
        for _ in 0..3 {
            let answer = upstream
                .post_json("/v1/chat/completions", &HeaderMap::new(), Bytes::from_static(b"{\"messages\":[]}"))
                .await
                .unwrap();
            let body = upstream.read_all(answer.response, 1000).await.unwrap();
            assert_eq!(&body[..], b"{}");
            // Let the close reach the pooled connection (or not: both must work).
            tokio::task::yield_now().await;
        }
        assert_eq!(task.await.unwrap(), 3);
    }

    /// The names taken without a lookup are the names the lookup makes, in any spelling.
    #[test]
    fn common_header_names_are_the_standard_ones() {
        use axum::http::HeaderName;
        for name in [
            "accept",
            "accept-encoding",
            "authorization",
            "connection",
            "content-length",
            "content-type",
            "date",
            "host",
            "server",
            "transfer-encoding",
            "user-agent",
            "Content-Type",
            "x-api-key",
            "x-custom",
            "acceptt",
        ] {
            let spelled = [name.to_owned(), name.to_ascii_uppercase()];
            for n in spelled {
                assert_eq!(super::header_name(n.as_bytes()).unwrap(), HeaderName::from_bytes(n.as_bytes()).unwrap());
            }
        }
        assert!(super::header_name(b"bad name").is_err());
        assert!(super::header_name(b"").is_err());
    }

    #[tokio::test]
    async fn paths_map_onto_the_upstream_base() {
        let upstream = Upstream::new(&Config::new("http://127.0.0.1:9/api/v1").unwrap()).unwrap();
        assert_eq!(upstream.target("/v1/models?x=1").unwrap().as_str(), "/api/v1/models?x=1");
        assert_eq!(upstream.target("/other").unwrap().as_str(), "/other");
        assert_eq!(upstream.chat.as_str(), "/api/v1/chat/completions");
        // The API routes, from the table made once: what the mapping gives any other path.
        for (route, mapped) in [
            ("/v1/chat/completions", "/api/v1/chat/completions"),
            ("/v1/messages", "/api/v1/messages"),
            ("/v1/responses", "/api/v1/responses"),
            ("/v1/responses?x=1", "/api/v1/responses?x=1"),
            ("/v1/messagesx", "/api/v1/messagesx"),
        ] {
            assert_eq!(upstream.target(route).unwrap().as_str(), mapped);
        }
        let refused = upstream.send(
            Method::GET,
            upstream.target("/v1/models").unwrap(),
            HeaderMap::new(),
            Payload::Bytes(Bytes::new()),
        );
        assert_eq!(refused.await.unwrap_err().code, "upstream_unreachable");
    }

    /// A keep-alive upstream that counts the connections it was asked on.
    async fn keep_alive() -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/v1", listener.local_addr().unwrap());
        let count = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counted = count.clone();
        tokio::spawn(async move {
            loop {
                let (socket, _) = listener.accept().await.unwrap();
                counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(|_| async {
                        Ok::<_, std::convert::Infallible>(hyper::Response::new(axum::body::Body::from("{\"a\": 1}")))
                    });
                    let io = hyper_util::rt::TokioIo::new(socket);
                    let _ = hyper::server::conn::http1::Builder::new().serve_connection(io, service).await;
                });
            }
        });
        (url, count)
    }

    #[tokio::test]
    async fn a_body_read_to_its_length_gives_the_connection_back() {
        use hyper::body::Body as _;
        let (url, count) = keep_alive().await;
        let upstream = Upstream::new(&Config::new(&url).unwrap()).unwrap();
        for _ in 0..3 {
            let target = upstream.target("/v1/models").unwrap();
            let answer =
                upstream.send(Method::GET, target, HeaderMap::new(), Payload::Bytes(Bytes::new())).await.unwrap();
            // Read as a server writing it on does: up to the declared length, never asking
            // for the end.
            let mut body = std::pin::pin!(answer.response.with_idle_timeout(std::time::Duration::from_secs(5)));
            let mut got = Vec::new();
            while !body.is_end_stream() {
                let frame = std::future::poll_fn(|cx| body.as_mut().poll_frame(cx)).await.unwrap().unwrap();
                got.extend_from_slice(frame.data_ref().unwrap());
            }
            assert_eq!(got, b"{\"a\": 1}");
        }
        assert_eq!(count.load(std::sync::atomic::Ordering::SeqCst), 1);
    }

    /// A body read whole: one in the buffer with its head (taken at once) and one that
    /// arrives in two pieces (read frame by frame) come out the same, each within the
    /// limit, and the connection is kept for the next request either way.
    #[tokio::test]
    async fn a_body_is_read_whole_however_it_arrives() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/v1", listener.local_addr().unwrap());
        let accepted = tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            for split in [false, true, false] {
                let mut head = Vec::new();
                let mut buf = [0u8; 1024];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    let n = socket.read(&mut buf).await.unwrap();
                    head.extend_from_slice(&buf[..n]);
                }
                let answer = b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\n0123456789";
                if split {
                    socket.write_all(&answer[..answer.len() - 6]).await.unwrap();
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    socket.write_all(&answer[answer.len() - 6..]).await.unwrap();
                } else {
                    socket.write_all(answer).await.unwrap();
                }
            }
        });
        let upstream = Upstream::new(&Config::new(&url).unwrap()).unwrap();
        // A second connection would wait for an answer that never comes: bounded.
        let three = async {
            for _ in 0..3 {
                let answer = upstream
                    .post_json("/v1/chat/completions", &HeaderMap::new(), Bytes::from_static(b"{}"))
                    .await
                    .unwrap();
                let body = upstream.read_all(answer.response, 10).await.unwrap();
                assert_eq!(&body[..], b"0123456789");
            }
        };
        tokio::time::timeout(std::time::Duration::from_secs(20), three).await.expect("one connection served all three");
        accepted.await.unwrap();
        let answer = upstream.post_json("/v1/chat/completions", &HeaderMap::new(), Bytes::from_static(b"{}")).await;
        assert!(answer.is_err(), "the upstream is gone");
    }

    /// An upstream client used by one runtime, then (that one shut down) by another: its
    /// kept connection and request timer belong to the first; the second's requests are
    /// answered (a timer of a runtime that has shut down panics when polled).
    #[test]
    fn one_runtime_after_another() {
        let server = tokio::runtime::Runtime::new().unwrap();
        let (url, _) = server.block_on(keep_alive());
        let upstream = Upstream::new(&Config::new(&url).unwrap()).unwrap();
        for _ in 0..3 {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            runtime.block_on(async {
                let target = upstream.target("/v1/models").unwrap();
                let answer =
                    upstream.send(Method::GET, target, HeaderMap::new(), Payload::Bytes(Bytes::new())).await.unwrap();
                let body = upstream.read_all(answer.response, 1000).await.unwrap();
                assert_eq!(&body[..], b"{\"a\": 1}");
            });
        }
    }

    #[test]
    fn forwarded_headers_lose_hop_by_hop_ones_and_carry_the_right_key() {
        let cases = [(None, None), (Some("proxy-key"), None), (None, Some("up-key"))];
        // Plain (hop-by-hop headers skipped as the head is written) and through reqwest.
        for ((key, upstream_key), url) in
            cases.into_iter().flat_map(|c| [(c, "http://127.0.0.1:9/v1"), (c, "http://u:p@127.0.0.1:9/v1")])
        {
            let plain = !url.contains('@');
            let mut config = Config::new(url).unwrap();
            config.api_key = key.map(str::to_owned);
            config.upstream_api_key = upstream_key.map(str::to_owned);
            let upstream = Upstream::new(&config).unwrap();
            let mut client = HeaderMap::new();
            for (name, value) in [
                ("host", "proxy"),
                ("content-length", "12"),
                ("connection", "keep-alive"),
                ("keep-alive", "timeout=5"),
                ("transfer-encoding", "chunked"),
                ("authorization", "Bearer client"),
                ("x-api-key", "client"),
                ("accept-encoding", "gzip"),
                ("x-custom", "1"),
                ("x-custom", "2"),
            ] {
                client.append(name, value.parse().unwrap());
            }
            let copied = upstream.request_headers(&client, true);
            let in_place = upstream.forwarded_headers(client);
            let sorted = |h: &HeaderMap| {
                let mut v: Vec<String> = h
                    .iter()
                    .filter(|(k, _)| !(plain && super::is_hop_by_hop(k)))
                    .map(|(k, v)| format!("{k}: {}", v.to_str().unwrap()))
                    .collect();
                v.sort();
                v
            };
            let mut want = vec!["accept-encoding: gzip", "x-custom: 1", "x-custom: 2"];
            match (key, upstream_key) {
                (None, None) => want.extend(["authorization: Bearer client", "x-api-key: client"]),
                (None, Some(_)) => want.extend(["authorization: Bearer up-key", "x-api-key: up-key"]),
                _ => {}
            }
            want.sort_unstable();
            assert_eq!(sorted(&in_place), want);
            want.retain(|h| !h.starts_with("accept-encoding"));
            assert_eq!(sorted(&copied), want);
            if !plain {
                assert!(in_place.get("host").is_none() && in_place.get("content-length").is_none());
            }
        }
    }

    #[tokio::test]
    async fn a_url_with_credentials_goes_through_reqwest() {
        let (url, count) = keep_alive().await;
        let url = url.replacen("http://", "http://user:secret@", 1);
        let upstream = Upstream::new(&Config::new(&url).unwrap()).unwrap();
        assert!(matches!(upstream.transport, super::Transport::Reqwest { .. }));
        let answer =
            upstream.post_json("/v1/chat/completions", &HeaderMap::new(), Bytes::from_static(b"{}")).await.unwrap();
        assert_eq!(answer.status, 200);
        let body = upstream.read_all(answer.response, 1000).await.unwrap();
        assert_eq!(&body[..], b"{\"a\": 1}");
        assert_eq!(count.load(std::sync::atomic::Ordering::SeqCst), 1);
    }

    /// Either transport's answer holds the upstream's headers but the hop-by-hop ones
    /// (hyper's server sends `content-length` and `date`): the handlers give the map on.
    #[tokio::test]
    async fn an_answers_headers_hold_no_hop_by_hop_line() {
        let (url, _) = keep_alive().await;
        for url in [url.clone(), url.replacen("http://", "http://user:secret@", 1)] {
            let upstream = Upstream::new(&Config::new(&url).unwrap()).unwrap();
            for answer in [
                upstream.post_json("/v1/chat/completions", &HeaderMap::new(), Bytes::from_static(b"{}")).await,
                upstream
                    .send(Method::GET, "/v1/models".parse().unwrap(), HeaderMap::new(), Payload::Bytes(Bytes::new()))
                    .await,
            ] {
                let answer = answer.unwrap();
                assert!(answer.headers.contains_key("date"), "{url}: {:?}", answer.headers);
                assert!(!answer.headers.keys().any(super::is_hop_by_hop), "{url}: {:?}", answer.headers);
            }
        }
    }
}
