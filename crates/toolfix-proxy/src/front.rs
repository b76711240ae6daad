//! The proxy's HTTP/1.1 front: the connection loop in front of the handlers.
//!
//! Almost every request a client sends the proxy has one shape: `POST` to an API route,
//! HTTP/1.1, a `content-length`, no `transfer-encoding`, `expect`, `upgrade` or `te`,
//! headers within limits. The front serves that shape itself (`crate::head` reads the head,
//! `httparse` one of another shape;
//! the body is read to its declared length; the handler is called directly; the answer is
//! written with a content length or chunked, each frame flushed as soon as the body has no
//! more ready). That saves each request the general server's per-request machinery
//! (hyper's dispatcher, the router, its boxed services, a task wakeup per step), about
//! half of what a second HTTP hop costs.
//!
//! Anything else goes to the general stack (`hyper` serving the `axum` router, as
//! [`axum::serve`] does): the connection is handed over with the bytes the front already
//! read replayed first ([`Replay`]), so an odd request (chunked, `expect`, an upgrade,
//! HTTP/1.0 or HTTP/2, a declared length over the body limit, bad or duplicate lengths,
//! another route or method, a head too large) gets today's answer from the same code.
//! While the tracing layer is on, every connection goes there (the layer is the router's).
//!
//! What the general stack does that the fast path keeps: the routes, the API-key check
//! ([`crate::auth::key_ok`]), the body limit (a larger declared length is handed over and
//! refused there with a 413 before it is read), a `date` header, `connection: close` when
//! the client asks or the server is shutting down, the connection closed (and the
//! handler, so the upstream request, dropped) when the client leaves, pipelined requests
//! answered in order, and graceful shutdown (idle connections close, a request in flight
//! finishes).

use crate::adapter::chat::ChatCompletions;
use crate::adapter::messages::Messages;
use crate::adapter::responses::Responses;
use crate::handlers::{self, Shared};
use crate::head::Span;
use axum::Router;
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse as _, Response};
use bytes::{Buf as _, Bytes, BytesMut};
use http_body_util::BodyExt as _;
use hyper::body::{Body as _, Frame};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use std::cell::RefCell;
use std::future::Future;
use std::io;
use std::pin::{Pin, pin};
use std::task::{Context, Poll};
use std::time::{Duration, Instant, SystemTime};
use tokio::io::{AsyncRead, AsyncReadExt as _, AsyncWrite, AsyncWriteExt as _, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// The most header lines the fast path reads; more go to the general stack.
const MAX_HEADERS: usize = 64;
// A head's hop-by-hop lines are bits of a `u64` (`Head::hop`).
const _: () = assert!(MAX_HEADERS <= 64);
/// The largest head the fast path waits for; a larger one goes to the general stack.
const MAX_HEAD: usize = 16 * 1024;
/// Bytes read ahead (a pipelined request) while a request is being answered; past this
/// the front stops reading until the answer is out.
const READ_AHEAD: usize = 64 * 1024;
/// The most a body read grows its buffer at once (a declared length is not reserved
/// whole before the bytes come).
const BODY_STEP: usize = 1 << 20;
/// A frame at most this long is copied next to the head (one write); a longer one is
/// written on its own.
const COALESCE: usize = 16 * 1024;

/// The paths of the APIs the proxy fixes (the router's routes too).
pub(crate) const CHAT: &str = "/v1/chat/completions";
pub(crate) const MESSAGES: &str = "/v1/messages";
pub(crate) const RESPONSES: &str = "/v1/responses";

/// The routes of the APIs the proxy fixes: the only requests the fast path serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ApiRoute {
    Chat,
    Messages,
    Responses,
}

impl ApiRoute {
    /// The route at `path`, if it is one.
    pub(crate) fn at(path: &str) -> Option<ApiRoute> {
        match path {
            CHAT => Some(ApiRoute::Chat),
            MESSAGES => Some(ApiRoute::Messages),
            RESPONSES => Some(ApiRoute::Responses),
            _ => None,
        }
    }

    async fn call(self, state: Shared, head: handlers::Head, body: Bytes, started: Instant) -> Response {
        match self {
            ApiRoute::Chat => handlers::api_read::<ChatCompletions>(state, head, body, started).await,
            ApiRoute::Messages => handlers::api_read::<Messages>(state, head, body, started).await,
            ApiRoute::Responses => handlers::api_read::<Responses>(state, head, body, started).await,
        }
    }
}

/// What every connection shares.
#[derive(Debug)]
struct Front {
    router: Router,
    state: Shared,
    /// Serve the common shape here (off while the router has the tracing layer).
    fast: bool,
    /// How long the rest of a head may take once its first byte has arrived (a client
    /// that trickles a head is cut off: the slow-loris bound), on both paths.
    head_timeout: Duration,
    /// Each route with its path as a URI.
    routes: [(ApiRoute, Uri); 3],
}

/// Accept connections on `listener` until `shutdown`; then stop accepting and wait for
/// the connections to finish their requests in flight.
pub(crate) async fn serve(
    listener: TcpListener,
    router: Router,
    state: Shared,
    fast: bool,
    shutdown: impl Future<Output = ()> + Send + 'static,
) {
    let head_timeout = state.config.timeouts.client_head;
    let routes = [
        (ApiRoute::Chat, Uri::from_static(CHAT)),
        (ApiRoute::Messages, Uri::from_static(MESSAGES)),
        (ApiRoute::Responses, Uri::from_static(RESPONSES)),
    ];
    let front = std::sync::Arc::new(Front { router, state, fast, head_timeout, routes });
    // `stop` says "shut down" to the connections; each holds a `done` receiver, so
    // `done.closed()` completes once every connection has ended.
    let (stop, stopping) = watch::channel(false);
    let (done, _) = watch::channel(());
    let mut shutdown = pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            a = listener.accept() => a,
            () = &mut shutdown => break,
        };
        let tcp = match accepted {
            Ok((tcp, _)) => tcp,
            Err(e) => {
                accept_failed(e).await;
                continue;
            }
        };
        // No Nagle delay on answers (a small last write would otherwise wait for the
        // client's delayed ACK, ~40 ms).
        let _ = tcp.set_nodelay(true);
        let front = front.clone();
        let stopping = stopping.clone();
        let finished = done.subscribe();
        tokio::spawn(async move {
            // Boxed: a connection's future holds its handler's, ~16 KiB (one allocation
            // per connection, not per request).
            Box::pin(connection(&front, tcp, stopping)).await;
            drop(finished);
        });
    }
    drop(listener);
    let _ = stop.send(true);
    done.closed().await;
}

/// As `axum::serve`: an error of one connection is skipped; any other (out of file
/// descriptors, ...) is logged and accepting pauses for a second.
async fn accept_failed(e: io::Error) {
    if matches!(
        e.kind(),
        io::ErrorKind::ConnectionRefused | io::ErrorKind::ConnectionAborted | io::ErrorKind::ConnectionReset
    ) {
        return;
    }
    tracing::error!("accept error: {e}");
    tokio::time::sleep(Duration::from_secs(1)).await;
}

/// One connection: requests of the common shape answered here until one is not; then
/// the connection goes to the general stack.
async fn connection(front: &Front, mut tcp: TcpStream, stopping: watch::Receiver<bool>) {
    let mut buf = BytesMut::new();
    if front.fast {
        let mut out = Vec::new();
        let mut fields = [(Span::default(), Span::default()); MAX_HEADERS];
        // One wait for shutdown for the whole connection, looked at whenever it is idle (a
        // wait made for each request joined the channel's waiters and left them again,
        // ~400 instructions per request). It finishes only once: the connection then closes.
        let mut watching = stopping.clone();
        let mut stop = pin!(watching.wait_for(|s| *s));
        loop {
            match next_request(front, &mut tcp, &mut buf, &stopping, &mut stop, &mut out, &mut fields).await {
                Step::Again => {}
                Step::Close => return,
                Step::HandOver => break,
            }
        }
    }
    hand_over(front, tcp, buf.freeze(), stopping).await;
}

/// What to do after a request.
enum Step {
    /// Read the next request.
    Again,
    /// Close the connection.
    Close,
    /// Give the connection (and what was read of it) to the general stack.
    HandOver,
}

/// Read a request and answer it, if it has the common shape.
async fn next_request(
    front: &Front,
    tcp: &mut TcpStream,
    buf: &mut BytesMut,
    stopping: &watch::Receiver<bool>,
    stop: &mut (impl Future + Unpin),
    out: &mut Vec<u8>,
    fields: &mut Fields,
) -> Step {
    if buf.is_empty() {
        // Idle between requests: wait for a byte, or close on shutdown.
        buf.reserve(4096);
        let read = tokio::select! {
            r = tcp.read_buf(buf) => r,
            _ = &mut *stop => return Step::Close,
        };
        if !matches!(read, Ok(n) if n > 0) {
            return Step::Close;
        }
    }
    let head = match read_head(tcp, buf, fields, front.head_timeout).await {
        HeadRead::Head(h) => h,
        HeadRead::HandOver => return Step::HandOver,
        HeadRead::Close => return Step::Close,
    };
    let Some(length) = head.length.filter(|&n| n <= front.state.config.body_limit) else {
        // Over the limit: refused by the general stack, as it does (before reading).
        return Step::HandOver;
    };
    // The head is whole: from here on the request is the fast path's.
    let head_bytes = buf.split_to(head.len).freeze();
    let Some(headers) = header_map(&head_bytes, fields.get(..head.count).unwrap_or_default(), head.hop) else {
        return put_back(buf, &head_bytes);
    };
    let target = head_bytes.slice(head.target.range());
    // The route's own path (the usual target) is a URI made once.
    let (route, uri) = if let Some((route, uri)) = front.routes.iter().find(|(_, uri)| uri.path().as_bytes() == target)
    {
        (*route, uri.clone())
    } else {
        let Ok(uri) = Uri::from_maybe_shared(target) else { return put_back(buf, &head_bytes) };
        let Some(route) = ApiRoute::at(uri.path()) else { return put_back(buf, &head_bytes) };
        (route, uri)
    };
    if !crate::auth::key_ok(&front.state, &headers) {
        // Refused before the body is read: a client without the key never has its body
        // held in memory. The answer goes out, then the body is read and dropped (so
        // closing does not reset the connection before the client reads the answer),
        // for at most the head timeout.
        let refused = crate::error::ApiError::unauthorized().into_response();
        if write_response(tcp, buf, out, refused, true).await.is_ok() {
            let unread = length.saturating_sub(buf.len());
            buf.clear();
            let _ = tokio::time::timeout(front.head_timeout, discard(tcp, unread)).await;
        }
        return Step::Close;
    }
    let started = Instant::now();
    let Some(body) = read_body(tcp, buf, length).await else { return Step::Close };
    let request = handlers::Head { method: Method::POST, uri, headers };
    // Pinned where it is made: the handler's future is large, and moving it into
    // `while_reading` copied all of it (~700 instructions per request).
    let handled = pin!(route.call(front.state.clone(), request, body, started));
    // The client left: the handler (and its upstream request) is dropped.
    let Some(response) = while_reading(tcp, buf, handled).await else { return Step::Close };
    let close = head.close || *stopping.borrow();
    match write_response(tcp, buf, out, response, close).await {
        Ok(true) if !*stopping.borrow() => Step::Again,
        _ => Step::Close,
    }
}

/// Read and drop `n` bytes (fewer if the client closes first), 8 KiB at a time.
async fn discard(tcp: &mut TcpStream, mut n: usize) {
    let mut scratch = [0u8; 8192];
    while n > 0 {
        let want = n.min(scratch.len());
        match tcp.read(scratch.get_mut(..want).unwrap_or_default()).await {
            Ok(0) | Err(_) => return,
            Ok(got) => n -= got.min(n),
        }
    }
}

/// Hand over a request whose head was already taken out of `buf`: put it back first.
fn put_back(buf: &mut BytesMut, head: &[u8]) -> Step {
    let rest = buf.split();
    buf.extend_from_slice(head);
    buf.extend_from_slice(&rest);
    Step::HandOver
}

/// A parsed head of the common shape: where its parts are in the buffer.
struct Head {
    /// Bytes of the head, up to and including its blank line.
    len: usize,
    /// The request target.
    target: Span,
    /// How many header lines (their spans are in the [`Fields`] given to the parse).
    count: usize,
    /// The declared body length.
    length: Option<usize>,
    /// The client asked to close the connection after this request.
    close: bool,
    /// Bit `i` set: header line `i` is hop-by-hop (`host`, `content-length`, ...: what
    /// `upstream::is_hop_by_hop` names), left out of the request's map.
    hop: u64,
}

/// The name and value of each header line.
type Fields = [(Span, Span); MAX_HEADERS];

enum HeadRead {
    Head(Head),
    HandOver,
    Close,
}

/// Read until `buf` holds a whole head; say whether it has the common shape.
async fn read_head(tcp: &mut TcpStream, buf: &mut BytesMut, fields: &mut Fields, timeout: Duration) -> HeadRead {
    let mut deadline = None;
    loop {
        match parse_head(buf, fields) {
            Parsed::Head(h) => return HeadRead::Head(h),
            Parsed::Other => return HeadRead::HandOver,
            Parsed::Partial if buf.len() >= MAX_HEAD => return HeadRead::HandOver,
            Parsed::Partial => {}
        }
        // The clock starts at the first partial head (a head that comes whole, the usual
        // case, costs no timer).
        let deadline = *deadline.get_or_insert_with(|| tokio::time::Instant::now() + timeout);
        buf.reserve(4096);
        match tokio::time::timeout_at(deadline, tcp.read_buf(buf)).await {
            Ok(Ok(n)) if n > 0 => {}
            _ => return HeadRead::Close,
        }
    }
}

enum Parsed {
    Head(Head),
    Partial,
    /// Not the common shape (or not valid): for the general stack to answer.
    Other,
}

/// Parse a head (at most [`MAX_HEAD`] bytes); only the common shape is a `Head`.
fn parse_head(buf: &[u8], fields: &mut Fields) -> Parsed {
    let (len, target, count) = match crate::head::request(buf, fields) {
        Some(h) => (h.len, h.target, h.count),
        None => match parse_odd_head(buf, fields) {
            Ok(read) => read,
            Err(parsed) => return parsed,
        },
    };
    if buf.get(target.range()).is_none_or(|t| !t.starts_with(b"/")) {
        return Parsed::Other;
    }
    let mut head = Head { len, target, count, length: None, close: false, hop: 0 };
    for (i, &(name, value)) in fields.iter().take(count).enumerate() {
        let (Some(name), Some(value)) = (buf.get(name.range()), buf.get(value.range())) else { return Parsed::Other };
        match Line::of(name) {
            Line::Other => {}
            Line::Length => {
                if head.length.is_some() {
                    return Parsed::Other;
                }
                let Some(n) = decimal(value) else { return Parsed::Other };
                head.length = Some(n);
                head.hop |= 1 << i;
            }
            Line::Connection => {
                let Some(close) = connection_close(value) else { return Parsed::Other };
                head.close |= close;
                head.hop |= 1 << i;
            }
            Line::HopByHop => head.hop |= 1 << i,
            Line::Refused => return Parsed::Other,
        }
    }
    if head.length.is_none() {
        return Parsed::Other;
    }
    Parsed::Head(head)
}

/// A head [`crate::head::request`] left alone, read by `httparse`: its length, target and
/// number of lines (their spans in `fields`) when it is a `POST` of HTTP/1.1, else what the
/// front does with it.
fn parse_odd_head(buf: &[u8], fields: &mut Fields) -> Result<(usize, Span, usize), Parsed> {
    let mut lines = [const { std::mem::MaybeUninit::<httparse::Header<'_>>::uninit() }; MAX_HEADERS];
    let mut request = httparse::Request::new(&mut []);
    let len = match request.parse_with_uninit_headers(buf, &mut lines) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => return Err(Parsed::Partial),
        Err(_) => return Err(Parsed::Other),
    };
    if request.method != Some("POST") || request.version != Some(1) || buf.len() > u32::MAX as usize {
        return Err(Parsed::Other);
    }
    let Some(target) = request.path else { return Err(Parsed::Other) };
    let at = |s: &[u8]| Span::within(buf, s);
    for (slot, line) in fields.iter_mut().zip(request.headers.iter()) {
        *slot = (at(line.name.as_bytes()), at(line.value));
    }
    Ok((len, at(target.as_bytes()), request.headers.len()))
}

/// What a header line's name means to the fast path.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Line {
    /// `content-length`.
    Length,
    /// `connection`.
    Connection,
    /// Another hop-by-hop name the proxy never forwards (`host`, `keep-alive`, `trailer`,
    /// `proxy-authenticate`, `proxy-authorization`): left out of the request's map.
    HopByHop,
    /// `transfer-encoding`, `expect`, `upgrade` or `te`: for the general stack.
    Refused,
    Other,
}

impl Line {
    /// The kind of `name` (any case), told by its length first.
    fn of(name: &[u8]) -> Line {
        // A name read from a head is made of `tchar`s: compared a word at a time.
        let is = |known: &[u8]| crate::head::is_named(name, known);
        match name.len() {
            2 if is(b"te") => Line::Refused,
            4 if is(b"host") => Line::HopByHop,
            6 if is(b"expect") => Line::Refused,
            7 if is(b"upgrade") => Line::Refused,
            7 if is(b"trailer") => Line::HopByHop,
            10 if is(b"connection") => Line::Connection,
            10 if is(b"keep-alive") => Line::HopByHop,
            14 if is(b"content-length") => Line::Length,
            17 if is(b"transfer-encoding") => Line::Refused,
            18 if is(b"proxy-authenticate") => Line::HopByHop,
            19 if is(b"proxy-authorization") => Line::HopByHop,
            _ => Line::Other,
        }
    }
}

/// A content length: ASCII digits only, at most 15 of them.
fn decimal(value: &[u8]) -> Option<usize> {
    if value.is_empty() || value.len() > 15 {
        return None;
    }
    value.iter().try_fold(0usize, |n, &b| b.is_ascii_digit().then(|| n * 10 + usize::from(b - b'0')))
}

/// A `connection` value of `close` and `keep-alive` tokens only: whether it says close.
fn connection_close(value: &[u8]) -> Option<bool> {
    let mut close = false;
    for token in value.split(|&b| b == b',') {
        let token = token.trim_ascii();
        if token.eq_ignore_ascii_case(b"close") {
            close = true;
        } else if !token.eq_ignore_ascii_case(b"keep-alive") {
            return None;
        }
    }
    Some(close)
}

/// The headers as a map sharing the head's bytes, less the hop-by-hop lines (bits of
/// `hop`: every use of the map drops those, as a request handed over has them dropped
/// where it is forwarded); `None` when a name or value is not one the map takes.
fn header_map(head: &Bytes, fields: &[(Span, Span)], hop: u64) -> Option<HeaderMap> {
    let mut map = HeaderMap::with_capacity(fields.len() - hop.count_ones() as usize);
    for (i, &(name, value)) in fields.iter().enumerate() {
        // A hop-by-hop line's value needs no check of its own: the bytes a head's value may
        // hold (for `httparse` and `crate::head` alike) are the bytes a `HeaderValue` takes
        // (tested: `head_values_are_header_values`), so the map would take it.
        if hop & (1 << i) != 0 {
            continue;
        }
        let name = crate::upstream::header_name(head.get(name.range())?).ok()?;
        let value = HeaderValue::from_maybe_shared(head.slice(value.range())).ok()?;
        map.append(name, value);
    }
    Some(map)
}

/// Read a body of `length` bytes (some may be in `buf` already); `None` when the client
/// leaves first.
async fn read_body(tcp: &mut TcpStream, buf: &mut BytesMut, length: usize) -> Option<Bytes> {
    while buf.len() < length {
        buf.reserve((length - buf.len()).min(BODY_STEP));
        match tcp.read_buf(buf).await {
            Ok(n) if n > 0 => {}
            _ => return None,
        }
    }
    Some(buf.split_to(length).freeze())
}

/// Run `work` while watching the connection: bytes that come meanwhile (a pipelined
/// request) are kept in `buf`; `None` if the client leaves (end of stream or an error)
/// first, `work` then dropped unfinished.
async fn while_reading<T>(
    tcp: &mut TcpStream,
    buf: &mut BytesMut,
    mut work: impl Future<Output = T> + Unpin,
) -> Option<T> {
    loop {
        if buf.len() >= READ_AHEAD {
            return Some(work.await);
        }
        // Room is made only once bytes are there to read: the request's head and body
        // still share the buffer's storage, so making room before would take a new
        // buffer for every request.
        tokio::select! {
            biased;
            done = &mut work => return Some(done),
            ready = std::future::poll_fn(|cx| tcp.poll_read_ready(cx)) => {
                if ready.is_err() {
                    return None;
                }
                buf.reserve(4096);
                match tcp.try_read_buf(buf) {
                    Ok(n) if n > 0 => {}
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    _ => return None,
                }
            },
        }
    }
}

/// How the body is framed on the wire.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Framing {
    /// Exactly this many bytes.
    Length(u64),
    Chunked,
}

/// Write an answer; `Ok(true)` if the connection may serve another request.
async fn write_response(
    tcp: &mut TcpStream,
    buf: &mut BytesMut,
    out: &mut Vec<u8>,
    response: Response,
    close: bool,
) -> io::Result<bool> {
    let (parts, mut body) = response.into_parts();
    out.clear();
    let status = parts.status;
    if status.is_informational() {
        // Not a final answer (hyper answers a handler's 1xx so too, and closes).
        out.extend_from_slice(b"HTTP/1.1 500 Internal Server Error\r\ncontent-length: 0\r\n");
        date_line(out);
        tcp.write_all(out).await?;
        return Ok(false);
    }
    if status == StatusCode::OK {
        out.extend_from_slice(b"HTTP/1.1 200 OK\r\n");
    } else {
        out.extend_from_slice(b"HTTP/1.1 ");
        out.extend_from_slice(status.as_str().as_bytes());
        out.push(b' ');
        out.extend_from_slice(status.canonical_reason().unwrap_or("<none>").as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    let may_have_body = !matches!(status, StatusCode::NO_CONTENT | StatusCode::NOT_MODIFIED);
    let known = if body.is_end_stream() { Some(0) } else { body.size_hint().exact() };
    let mut framing = None;
    let mut wrote_date = false;
    let mut keep_alive = !close;
    let mut said_close = false;
    let mut previous: Option<&HeaderName> = None;
    for (name, value) in &parts.headers {
        let repeat = previous == Some(name);
        previous = Some(name);
        if *name == header::CONTENT_LENGTH {
            // The first value decides (hyper trusts a length the body also knows); a
            // header that disagrees with a body of unknown length is an error.
            let Some(n) = decimal(value.as_bytes()) else { return Err(io::ErrorKind::InvalidData.into()) };
            match framing {
                Some(Framing::Length(m)) if m == n as u64 && repeat => continue,
                Some(_) => return Err(io::ErrorKind::InvalidData.into()),
                None => {}
            }
            if !may_have_body {
                continue;
            }
            framing = Some(Framing::Length(known.unwrap_or(n as u64)));
        } else if *name == header::TRANSFER_ENCODING {
            if !may_have_body {
                continue;
            }
            if framing.is_some_and(|f| f != Framing::Chunked) {
                return Err(io::ErrorKind::InvalidData.into());
            }
            framing = Some(Framing::Chunked);
            out.extend_from_slice(b"transfer-encoding: ");
            out.extend_from_slice(value.as_bytes());
            if !value.as_bytes().trim_ascii_end().ends_with(b"chunked") {
                out.extend_from_slice(b", chunked");
            }
            out.extend_from_slice(b"\r\n");
            continue;
        } else if *name == header::CONNECTION {
            if connection_close(value.as_bytes()).unwrap_or(false) {
                keep_alive = false;
                said_close = true;
            }
        } else if *name == header::DATE {
            wrote_date = true;
        }
        out.extend_from_slice(name.as_str().as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    if !keep_alive && !said_close {
        out.extend_from_slice(b"connection: close\r\n");
    }
    let framing = match framing {
        Some(f) => f,
        None if !may_have_body => Framing::Length(0),
        None => {
            if let Some(n) = known {
                out.extend_from_slice(b"content-length: ");
                out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
                out.extend_from_slice(b"\r\n");
                Framing::Length(n)
            } else {
                out.extend_from_slice(b"transfer-encoding: chunked\r\n");
                Framing::Chunked
            }
        }
    };
    if wrote_date {
        out.extend_from_slice(b"\r\n");
    } else {
        date_line(out);
    }
    let mut left = match framing {
        Framing::Length(n) => n,
        Framing::Chunked => u64::MAX,
    };
    if framing == Framing::Length(0) {
        tcp.write_all(out).await?;
        return Ok(keep_alive);
    }
    // A frame of a body with a length waits here, uncopied, to go out with the head in
    // one write.
    let mut queued = Bytes::new();
    loop {
        // A frame ready now joins what is waiting to be written; before waiting for
        // one, what is waiting goes out (a stream's frames are never held back).
        let frame = match std::future::poll_fn(|cx| Poll::Ready(Pin::new(&mut body).poll_frame(cx))).await {
            Poll::Ready(f) => f,
            Poll::Pending => {
                flush(tcp, out, &mut queued).await?;
                match while_reading(tcp, buf, body.frame()).await {
                    Some(f) => f,
                    None => return Ok(false),
                }
            }
        };
        let Some(frame) = frame else { break };
        // A body error ends the connection mid-answer, as hyper does.
        let frame: Frame<Bytes> = frame.map_err(io::Error::other)?;
        // Trailers are not sent (hyper sends them only to a client that asked, with `te`).
        let Ok(data) = frame.into_data() else { continue };
        if data.is_empty() {
            continue;
        }
        match framing {
            Framing::Length(_) => {
                let n = data.len() as u64;
                if n > left {
                    return Err(io::ErrorKind::InvalidData.into());
                }
                left -= n;
                if !queued.is_empty() {
                    flush(tcp, out, &mut queued).await?;
                }
                queued = data;
                if left == 0 && body.is_end_stream() {
                    // The last byte, and the body says it has nothing more (so asking
                    // would give its end): not asked again.
                    break;
                }
            }
            Framing::Chunked => {
                hex(out, data.len() as u64);
                out.extend_from_slice(b"\r\n");
                put(tcp, out, &data).await?;
                out.extend_from_slice(b"\r\n");
            }
        }
    }
    match framing {
        Framing::Length(_) if left != 0 => return Err(io::ErrorKind::UnexpectedEof.into()),
        Framing::Length(_) => {}
        Framing::Chunked => out.extend_from_slice(b"0\r\n\r\n"),
    }
    flush(tcp, out, &mut queued).await?;
    Ok(keep_alive)
}

/// Write what waits: `out`, then `queued` (one vectored write when the socket takes both).
async fn flush(tcp: &mut TcpStream, out: &mut Vec<u8>, queued: &mut Bytes) -> io::Result<()> {
    let mut written = 0;
    while written < out.len() || !queued.is_empty() {
        let first = out.get(written..).unwrap_or_default();
        let n = tcp.write_vectored(&[io::IoSlice::new(first), io::IoSlice::new(queued)]).await?;
        if n == 0 {
            return Err(io::ErrorKind::WriteZero.into());
        }
        let from_out = n.min(first.len());
        written += from_out;
        queued.advance(n - from_out);
    }
    out.clear();
    Ok(())
}

/// `n` in hexadecimal (a chunk's size).
fn hex(out: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 16];
    let mut at = digits.len();
    loop {
        at -= 1;
        if let Some(d) = digits.get_mut(at) {
            *d = b"0123456789abcdef".get((n % 16) as usize).copied().unwrap_or(b'0');
        }
        n /= 16;
        if n == 0 || at == 0 {
            break;
        }
    }
    out.extend_from_slice(digits.get(at..).unwrap_or_default());
}

/// Queue `data` behind what is waiting, or write both if it is long (what waits never
/// grows past [`COALESCE`] and a frame: a body whose frames are always ready is written
/// as it goes, not gathered whole).
async fn put(tcp: &mut TcpStream, out: &mut Vec<u8>, data: &[u8]) -> io::Result<()> {
    if data.len() <= COALESCE {
        out.extend_from_slice(data);
        if out.len() >= COALESCE {
            tcp.write_all(out).await?;
            out.clear();
        }
        return Ok(());
    }
    if !out.is_empty() {
        tcp.write_all(out).await?;
        out.clear();
    }
    tcp.write_all(data).await
}

/// `date: <now>\r\n\r\n`, the value formatted once a second per thread (as hyper does).
fn date_line(out: &mut Vec<u8>) {
    thread_local! {
        static DATE: RefCell<(u64, String)> = const { RefCell::new((u64::MAX, String::new())) };
    }
    let now = SystemTime::now();
    let second = now.duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    DATE.with_borrow_mut(|(at, text)| {
        if *at != second {
            *at = second;
            *text = httpdate::fmt_http_date(now);
        }
        out.extend_from_slice(b"date: ");
        out.extend_from_slice(text.as_bytes());
        out.extend_from_slice(b"\r\n\r\n");
    });
}

/// Serve the rest of a connection with the general stack, `read` replayed first.
async fn hand_over(front: &Front, tcp: TcpStream, read: Bytes, mut stopping: watch::Receiver<bool>) {
    let io = TokioIo::new(Replay { read, tcp });
    let service = TowerToHyperService::new(front.router.clone());
    let mut builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
    // The same bound on a head as the fast path's (hyper has one only with a timer).
    builder.http1().timer(TokioTimer::new()).header_read_timeout(front.head_timeout);
    let mut conn = pin!(builder.serve_connection_with_upgrades(io, service));
    let mut signalled = false;
    loop {
        tokio::select! {
            _ = conn.as_mut() => break,
            _ = stopping.wait_for(|s| *s), if !signalled => {
                signalled = true;
                conn.as_mut().graceful_shutdown();
            }
        }
    }
}

/// A connection with bytes already read from it put back in front.
#[derive(Debug)]
struct Replay {
    read: Bytes,
    tcp: TcpStream,
}

impl AsyncRead for Replay {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, out: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        if !self.read.is_empty() {
            let n = self.read.len().min(out.remaining());
            let first = self.read.split_to(n);
            out.put_slice(&first);
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut self.tcp).poll_read(cx, out)
    }
}

impl AsyncWrite for Replay {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, data: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.tcp).poll_write(cx, data)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.tcp).poll_write_vectored(cx, data)
    }

    fn is_write_vectored(&self) -> bool {
        self.tcp.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.tcp).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.tcp).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::{Fields, Line, MAX_HEADERS, Parsed, Span, connection_close, decimal, parse_head};
    use proptest::prelude::*;

    fn parse(head: &str) -> Parsed {
        let mut fields: Fields = [(Span::default(), Span::default()); MAX_HEADERS];
        parse_head(head.as_bytes(), &mut fields)
    }

    fn fast(head: &str) -> Option<(usize, bool)> {
        match parse(head) {
            Parsed::Head(h) => Some((h.length?, h.close)),
            _ => None,
        }
    }

    #[test]
    fn only_the_common_shape_is_served_here() {
        let p = "POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\n";
        assert_eq!(fast(&format!("{p}content-length: 12\r\n\r\n")), Some((12, false)));
        assert_eq!(fast(&format!("{p}Content-Length: 0\r\nConnection: keep-alive, Close\r\n\r\n")), Some((0, true)));
        for other in [
            format!("{p}\r\n"),                                                    // no length
            format!("{p}content-length: 1\r\ncontent-length: 1\r\n\r\n"),          // twice
            format!("{p}content-length: +1\r\n\r\n"),                              // not digits
            format!("{p}content-length: 1, 1\r\n\r\n"),                            // a list
            format!("{p}content-length: 1234567890123456\r\n\r\n"),                // too long
            format!("{p}content-length: 1\r\ntransfer-encoding: chunked\r\n\r\n"), // both
            format!("{p}content-length: 1\r\nexpect: 100-continue\r\n\r\n"),
            format!("{p}content-length: 1\r\nupgrade: h2c\r\nconnection: upgrade\r\n\r\n"),
            format!("{p}content-length: 1\r\nte: trailers\r\n\r\n"),
            format!("{p}content-length: 1\r\nconnection: upgrade\r\n\r\n"),
            "GET /v1/chat/completions HTTP/1.1\r\ncontent-length: 1\r\n\r\n".to_owned(),
            "POST /v1/chat/completions HTTP/1.0\r\ncontent-length: 1\r\n\r\n".to_owned(),
            "POST http://h/v1/chat/completions HTTP/1.1\r\ncontent-length: 1\r\n\r\n".to_owned(),
            "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_owned(),
            "POST /v1/chat/completions HTTP/1.1\r\nbad header\r\n\r\n".to_owned(),
        ] {
            assert!(matches!(parse(&other), Parsed::Other), "{other:?}");
        }
        assert!(matches!(parse(p), Parsed::Partial));
        let many = "x-h: y\r\n".repeat(MAX_HEADERS + 1);
        assert!(matches!(parse(&format!("{p}{many}content-length: 1\r\n\r\n")), Parsed::Other));
    }

    /// The lines left out of the request's map are exactly those every use of the map
    /// drops (`upstream::is_hop_by_hop`), in any case.
    #[test]
    fn hop_by_hop_lines_are_the_ones_never_forwarded() {
        use axum::http::HeaderName;
        for name in [
            "connection",
            "Transfer-Encoding",
            "HOST",
            "content-length",
            "te",
            "trailer",
            "Upgrade",
            "proxy-authenticate",
            "proxy-authorization",
            "keep-alive",
            "expect",
            "content-type",
            "accept",
            "authorization",
            "x-api-key",
            "hosts",
            "t",
            "keep_alive",
            "connectio",
        ] {
            let kind = Line::of(name.as_bytes());
            let never_forwarded =
                HeaderName::from_bytes(name.as_bytes()).is_ok_and(|n| crate::upstream::is_hop_by_hop(&n));
            let left_out = kind != Line::Other && !name.eq_ignore_ascii_case("expect");
            assert_eq!(left_out, never_forwarded, "{name}");
        }
        assert_eq!(Line::of(b"Content-Length"), Line::Length);
        assert_eq!(Line::of(b"CONNECTION"), Line::Connection);
        assert_eq!(Line::of(b"Expect"), Line::Refused);
    }

    /// A value byte a head may hold is one a `HeaderValue` takes, and no other: so a
    /// head read is one the map takes (its hop-by-hop lines' values are not checked again).
    #[test]
    fn head_values_are_header_values() {
        for b in 0..=255u8 {
            let mut head = b"POST /v1/messages HTTP/1.1\r\nhost: a".to_vec();
            head.extend_from_slice(&[b, b'b']);
            head.extend_from_slice(b"\r\ncontent-length: 0\r\n\r\n");
            let mut fields: Fields = [(Span::default(), Span::default()); MAX_HEADERS];
            let read = matches!(parse_head(&head, &mut fields), Parsed::Head(_));
            let mut lines = [httparse::EMPTY_HEADER; 4];
            let httparse_read = httparse::Request::new(&mut lines).parse(&head).is_ok_and(|s| s.is_complete());
            let taken = axum::http::HeaderValue::from_bytes(&[b'a', b, b'b']).is_ok();
            assert_eq!(read, taken, "{b:#x}");
            assert_eq!(httparse_read, taken, "{b:#x}");
        }
    }

    #[test]
    fn lengths_and_connection_tokens() {
        assert_eq!(decimal(b"0"), Some(0));
        assert_eq!(decimal(b"007"), Some(7));
        assert_eq!(decimal(b""), None);
        assert_eq!(decimal(b" 7"), None);
        assert_eq!(decimal(b"-1"), None);
        assert_eq!(connection_close(b"close"), Some(true));
        assert_eq!(connection_close(b" keep-alive "), Some(false));
        assert_eq!(connection_close(b"close, upgrade"), None);
        assert_eq!(connection_close(b""), None);
    }

    /// [`any_bytes_parse_safely`]'s check: a head made of `lines`, then `tail`, cut at `cut`.
    fn check_any_head(lines: &[String], tail: &[u8], cut: usize) -> Result<(), proptest::test_runner::TestCaseError> {
        let mut bytes = b"POST /v1/messages HTTP/1.1\r\n".to_vec();
        for line in lines {
            bytes.extend_from_slice(line.as_bytes());
            bytes.extend_from_slice(b"\r\n");
        }
        bytes.extend_from_slice(b"\r\n");
        bytes.extend_from_slice(tail);
        bytes.truncate(cut.max(1));
        let mut fields: Fields = [(Span::default(), Span::default()); MAX_HEADERS];
        if let Parsed::Head(h) = parse_head(&bytes, &mut fields) {
            prop_assert!(h.len <= bytes.len());
            prop_assert!(h.target.end as usize <= h.len);
            let lengths = fields[..h.count]
                .iter()
                .filter(|(name, _)| bytes[name.range()].eq_ignore_ascii_case(b"content-length"))
                .count();
            prop_assert_eq!(lengths, 1);
            // An empty line ends the head: the lines after it are body bytes.
            let head_lines = || lines.iter().take_while(|l| !l.is_empty());
            prop_assert!(!head_lines().any(|l| l.starts_with("transfer-encoding") || l.starts_with("expect")));
            for (name, value) in &fields[..h.count] {
                prop_assert!(name.end as usize <= h.len && value.end as usize <= h.len);
            }
        }
        Ok(())
    }

    /// Regression (found by the property test): an empty line ends the head, so a
    /// `transfer-encoding` line after it is body text, not a header the head refused.
    #[test]
    fn a_header_line_after_the_empty_line_is_body() {
        let lines = ["content-length: 5", "", "transfer-encoding: chunked"].map(str::to_owned);
        check_any_head(&lines, &[], 49).unwrap();
    }

    proptest! {
        /// Any bytes: no panic; a head served here has exactly one length, all digits,
        /// and its spans lie inside the head.
        #[test]
        fn any_bytes_parse_safely(
            lines in proptest::collection::vec(
                prop_oneof![
                    Just("content-length: 5".to_owned()),
                    Just("Content-Length: 12".to_owned()),
                    Just("content-length: x".to_owned()),
                    Just("transfer-encoding: chunked".to_owned()),
                    Just("connection: close".to_owned()),
                    Just("connection: upgrade".to_owned()),
                    Just("expect: 100-continue".to_owned()),
                    "[a-z-]{1,12}: [ -~]{0,20}",
                    "[ -~\\x80-\\xff]{0,30}",
                ],
                0..8,
            ),
            tail in proptest::collection::vec(any::<u8>(), 0..40),
            cut in 0usize..600,
        ) {
            check_any_head(&lines, &tail, cut)?;
        }
    }
}
