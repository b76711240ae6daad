//! The client for a plain `http://` upstream: HTTP/1.1 over a small pool of kept-alive
//! `TcpStream`s, written by hand.
//!
//! A request is written, and its answer read, in the task that asks for it: there is no
//! connection task, so no channel hand-off or wake-up between two tasks on either side
//! (hyper's client connection runs as a task of its own; that hand-off was most of what
//! the client side of the proxy's second hop cost). Only what the proxy needs is here:
//! one request at a time per connection, a head read by `crate::head` (or `httparse`, when
//! it is not of the common shape), bodies framed by
//! `content-length`, `chunked` or the end of the connection, each piece handed on as it
//! arrives (a streamed answer is never held back).
//!
//! A connection goes back to the pool only when its answer was read to the end, nothing
//! came after it, and both sides keep it alive. A pooled connection the upstream closed
//! meanwhile is noticed before use (a read that does not block); one that fails before
//! any byte of the answer is tried once more on a new connection, when the request can be
//! sent again (bytes in memory, or a streamed body none of which was taken yet).
//!
//! An upstream may answer before it has read the whole request (`401` for a wrong key,
//! `413` for a body too large) and close the connection: writing the rest then fails.
//! The answer it sent is read then (its head within [`EARLY_ANSWER_WAIT`]) and passed on,
//! and the connection is not used again; when none came, the failure says the upstream
//! closed the connection while the request was being sent.

use super::{Answer, Inner, POOL_IDLE, POOL_MAX_IDLE, Payload, UpstreamBody, header_name, is_hop_by_hop};
use crate::error::ApiError;
use crate::head::{Field, Span, is_named};
use axum::body::Body;
use axum::http::uri::PathAndQuery;
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, header};
use bytes::{Buf as _, Bytes, BytesMut};
use http_body_util::BodyExt as _;
use hyper::body::{Body as _, Frame, SizeHint};
use std::future::Future as _;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, ready};
use std::time::{Duration, Instant};
use tokio::net::TcpStream;

/// The most header lines in an answer's head (hyper's default).
const MAX_HEADERS: usize = 100;
/// The most header lines [`crate::head::response`] reads an answer's head with (one with
/// more goes to `httparse`).
const COMMON_LINES: usize = 32;
/// The largest head of an answer (hyper's default read buffer limit); a longer one is an
/// upstream failure.
pub(super) const HEAD_LIMIT: usize = 8192 + 4096 * 100;
/// The longest chunk-size line (extensions included) and the most trailer bytes of a
/// chunked body.
const LINE_LIMIT: usize = 16 * 1024;
/// Bytes asked of the socket per read at first; doubled (up to [`READ_MAX`]) while reads
/// fill what they are given.
const READ_MIN: usize = 8 * 1024;
const READ_MAX: usize = 256 * 1024;
/// A request body at most this long is written in one buffer with the head (one write,
/// one segment).
const INLINE_BODY: usize = 64 * 1024;
/// How long, once the request could not be written in full, the head of an answer the
/// upstream sent before it stopped reading may take to come. The connection is broken by
/// then, so what the kernel kept of an answer is read at once; this only bounds the wait.
const EARLY_ANSWER_WAIT: Duration = Duration::from_secs(2);

/// The connections to a plain `http://` upstream.
#[derive(Debug)]
pub(super) struct Pool {
    /// `host:port`, to connect to.
    address: String,
    /// The `Host` header's value.
    host: HeaderValue,
    connect_timeout: Duration,
    /// Connections not in use, the most recently used last.
    idle: Mutex<Vec<Idle>>,
    /// Starts the task that closes connections unused for [`POOL_IDLE`].
    reaper: std::sync::Once,
    /// Request timers not in use (see [`Pool::send`]), at most [`POOL_MAX_IDLE`], each
    /// with the runtime it belongs to: a timer is used again only in its own runtime (a
    /// router may be served by one runtime after another, and a timer of a runtime that
    /// has shut down panics when polled).
    timers: Mutex<Vec<(tokio::runtime::Id, Pin<Box<tokio::time::Sleep>>)>>,
}

#[derive(Debug)]
struct Idle {
    conn: Conn,
    since: Instant,
}

/// One connection, and the bytes read from it not handed on yet.
#[derive(Debug)]
struct Conn {
    tcp: TcpStream,
    buf: BytesMut,
    /// The next read's size.
    read_size: usize,
}

/// Why an exchange failed.
#[derive(Debug)]
struct Failure {
    error: ApiError,
    /// Nothing of the answer came (the request may be sent again on another connection).
    before_answer: bool,
}

impl Failure {
    fn io(e: &io::Error, before_answer: bool) -> Failure {
        Failure { error: ApiError::unreachable(&e.to_string()), before_answer }
    }

    fn closed(before_answer: bool) -> Failure {
        let detail = if before_answer {
            "the connection closed before an answer"
        } else {
            "the connection closed in the middle of the answer's head"
        };
        Failure { error: ApiError::unreachable(detail), before_answer }
    }

    /// A head that is not a valid answer.
    fn head(detail: &str) -> Failure {
        Failure { error: ApiError::unreachable(detail), before_answer: false }
    }
}

/// How the head of one of the proxy's own JSON requests is made of the client's headers
/// as it is written (what `Upstream::request_headers` and a `content-type:
/// application/json` make of them, without a copy of the map): `accept-encoding` left out
/// (the answer is read), the client's `authorization` and `x-api-key` left out when
/// `drop_auth`, `content-type` written as JSON where the client's was (after the rest when
/// it sent none, as an insert into the map puts it), `add` (the upstream key) written
/// after the client's headers.
#[derive(Debug)]
pub(super) struct Json<'a> {
    pub(super) drop_auth: bool,
    pub(super) add: &'a [(HeaderName, HeaderValue)],
}

/// How a request body is framed.
#[derive(Debug, Clone, Copy)]
enum Sent {
    /// No body (no header either).
    Empty,
    Length(u64),
    Chunked,
}

/// One header line.
fn put(out: &mut Vec<u8>, name: &HeaderName, value: &HeaderValue) {
    out.extend_from_slice(name.as_str().as_bytes());
    out.extend_from_slice(b": ");
    out.extend_from_slice(value.as_bytes());
    out.extend_from_slice(b"\r\n");
}

impl Pool {
    pub(super) fn new(address: String, host: HeaderValue, connect_timeout: Duration) -> Pool {
        Pool {
            address,
            host,
            connect_timeout,
            idle: Mutex::new(Vec::new()),
            reaper: std::sync::Once::new(),
            timers: Mutex::new(Vec::new()),
        }
    }

    /// Send a request and read the head of its answer, within `timeout` (the request
    /// timeout: as `tokio::time::timeout` around the exchange, a `504` when it runs out).
    ///
    /// The timer is one the pool keeps, reset for each request: registering a new timer
    /// with the runtime's wheel and taking it out again when the answer comes cost ~600
    /// instructions per request, where resetting a registered timer to a later deadline
    /// only stores the deadline (the wheel moves it when the earlier one comes). A kept
    /// timer whose deadline passes while unused wakes the task that last used it once;
    /// that task finds nothing to do.
    pub(super) async fn send(
        self: &Arc<Self>,
        method: Method,
        target: &PathAndQuery,
        headers: &HeaderMap,
        json: Option<&Json<'_>>,
        body: Payload,
        timeout: Duration,
    ) -> Result<Answer, ApiError> {
        let deadline = tokio::time::Instant::now() + timeout;
        let runtime = tokio::runtime::Handle::current().id();
        let mut timer = match self.timers.lock().ok().and_then(|mut t| t.pop()) {
            Some((id, mut t)) if id == runtime => {
                t.as_mut().reset(deadline);
                t
            }
            // None kept, or one of another runtime (dropped here).
            _ => Box::pin(tokio::time::sleep_until(deadline)),
        };
        let mut exchange = std::pin::pin!(self.exchange(method, target, headers, json, body));
        let answer = std::future::poll_fn(|cx| {
            // As `tokio::time::Timeout`: the exchange first; the timer then, outside the
            // task's budget when the exchange used it up (so it is always looked at).
            let had_budget = tokio::task::coop::has_budget_remaining();
            if let Poll::Ready(answer) = exchange.as_mut().poll(cx) {
                return Poll::Ready(answer);
            }
            let elapsed = if had_budget && !tokio::task::coop::has_budget_remaining() {
                Pin::new(&mut tokio::task::coop::unconstrained(timer.as_mut())).poll(cx)
            } else {
                timer.as_mut().poll(cx)
            };
            elapsed.map(|()| Err(ApiError::timeout()))
        })
        .await;
        if let Ok(mut timers) = self.timers.lock()
            && timers.len() < POOL_MAX_IDLE
        {
            timers.push((runtime, timer));
        }
        answer
    }

    /// Send a request and read the head of its answer (no time limit: see [`Pool::send`]).
    async fn exchange(
        self: &Arc<Self>,
        method: Method,
        target: &PathAndQuery,
        headers: &HeaderMap,
        json: Option<&Json<'_>>,
        body: Payload,
    ) -> Result<Answer, ApiError> {
        let head_request = method == Method::HEAD;
        match body {
            Payload::Bytes(body) => {
                let framing = if body.is_empty() { Sent::Empty } else { Sent::Length(body.len() as u64) };
                let inline = body.len() <= INLINE_BODY;
                let mut request =
                    self.head(&method, target, headers, json, framing, if inline { body.len() } else { 0 });
                if inline {
                    request.extend_from_slice(&body);
                }
                let mut fresh = false;
                loop {
                    let (mut conn, reused) = self.conn(fresh).await?;
                    let mut written = write_all(&conn.tcp, &request).await;
                    if written.is_ok() && !inline {
                        written = write_all(&conn.tcp, &body).await;
                    }
                    let read = match written {
                        Ok(()) => read_head(&mut conn, head_request).await,
                        Err(e) => early_answer(&mut conn, head_request, &e, !body.is_empty()).await,
                    };
                    match read {
                        Ok(head) => return Ok(self.answer(conn, head)),
                        Err(f) if f.before_answer && reused && !fresh => fresh = true,
                        Err(f) => return Err(f.error),
                    }
                }
            }
            Payload::Stream(mut body) => {
                let framing = if body.is_end_stream() {
                    Sent::Empty
                } else {
                    body.size_hint().exact().map_or(Sent::Chunked, Sent::Length)
                };
                let request = self.head(&method, target, headers, json, framing, 0);
                let mut fresh = false;
                let mut conn = loop {
                    let (conn, reused) = self.conn(fresh).await?;
                    match write_all(&conn.tcp, &request).await {
                        Ok(()) => break conn,
                        // Nothing of the body was taken yet: it can go on a new connection.
                        Err(_) if reused && !fresh => fresh = true,
                        Err(e) => return Err(Failure::io(&e, true).error),
                    }
                };
                let read = match write_body(&conn.tcp, &mut body, framing).await {
                    Ok(()) => read_head(&mut conn, head_request).await,
                    Err(BodyFailure::Write(e)) => early_answer(&mut conn, head_request, &e, true).await,
                    Err(BodyFailure::Body(e)) => return Err(e),
                };
                Ok(self.answer(conn, read.map_err(|f| f.error)?))
            }
        }
    }

    /// The request head: request line, `Host`, the headers given (less hop-by-hop ones;
    /// rewritten as `json` says for one of the proxy's own JSON requests), the body's
    /// framing; room for `extra` bytes more.
    fn head(
        &self,
        method: &Method,
        target: &PathAndQuery,
        headers: &HeaderMap,
        json: Option<&Json<'_>>,
        framing: Sent,
        extra: usize,
    ) -> Vec<u8> {
        let mut out = Vec::with_capacity(128 + headers.len() * 48 + extra);
        out.extend_from_slice(method.as_str().as_bytes());
        out.push(b' ');
        out.extend_from_slice(target.as_str().as_bytes());
        out.extend_from_slice(b" HTTP/1.1\r\nhost: ");
        out.extend_from_slice(self.host.as_bytes());
        out.extend_from_slice(b"\r\n");
        let mut typed = false;
        for (name, value) in headers {
            if is_hop_by_hop(name) {
                continue;
            }
            if let Some(j) = json {
                if *name == header::ACCEPT_ENCODING
                    || (j.drop_auth && (*name == header::AUTHORIZATION || name.as_str() == "x-api-key"))
                {
                    continue;
                }
                if *name == header::CONTENT_TYPE {
                    if !std::mem::replace(&mut typed, true) {
                        out.extend_from_slice(b"content-type: application/json\r\n");
                    }
                    continue;
                }
            }
            put(&mut out, name, value);
        }
        if let Some(j) = json {
            for (name, value) in j.add {
                put(&mut out, name, value);
            }
            if !typed {
                out.extend_from_slice(b"content-type: application/json\r\n");
            }
        }
        match framing {
            Sent::Empty => {}
            Sent::Length(n) => {
                out.extend_from_slice(b"content-length: ");
                out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
                out.extend_from_slice(b"\r\n");
            }
            Sent::Chunked => out.extend_from_slice(b"transfer-encoding: chunked\r\n"),
        }
        out.extend_from_slice(b"\r\n");
        out
    }

    /// A connection: a pooled one that is still open, else a new one (always a new one
    /// when `fresh`); and whether it was pooled.
    async fn conn(&self, fresh: bool) -> Result<(Conn, bool), ApiError> {
        if !fresh && let Some(c) = self.checkout() {
            return Ok((c, true));
        }
        Ok((self.connect().await?, false))
    }

    /// An open connection not in use, if there is one.
    fn checkout(&self) -> Option<Conn> {
        loop {
            let Idle { mut conn, since } = self.idle.lock().ok()?.pop()?;
            if since.elapsed() < POOL_IDLE && conn.is_open() {
                return Some(conn);
            }
        }
    }

    fn put(self: &Arc<Self>, conn: Conn) {
        if let Ok(mut idle) = self.idle.lock() {
            if idle.len() >= POOL_MAX_IDLE {
                idle.remove(0);
            }
            idle.push(Idle { conn, since: Instant::now() });
        }
        self.reaper.call_once(|| {
            let pool = Arc::downgrade(self);
            tokio::spawn(async move {
                let mut every = tokio::time::interval(POOL_IDLE / 3);
                every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                loop {
                    every.tick().await;
                    let Some(pool) = pool.upgrade() else { return };
                    pool.reap();
                }
            });
        });
    }

    /// Close the connections unused for [`POOL_IDLE`] or closed by the upstream.
    fn reap(&self) {
        if let Ok(mut idle) = self.idle.lock() {
            idle.retain_mut(|c| c.since.elapsed() < POOL_IDLE && c.conn.is_open());
        }
    }

    async fn connect(&self) -> Result<Conn, ApiError> {
        let tcp = match tokio::time::timeout(self.connect_timeout, TcpStream::connect(&self.address)).await {
            Err(_) => return Err(ApiError::timeout()),
            Ok(Err(e)) => return Err(ApiError::unreachable(&format!("cannot connect: {e}"))),
            Ok(Ok(t)) => t,
        };
        // No Nagle delay on requests (a small last write would otherwise wait for the
        // upstream's delayed ACK, ~40 ms).
        let _ = tcp.set_nodelay(true);
        Ok(Conn { tcp, buf: BytesMut::new(), read_size: READ_MIN })
    }

    /// The answer whose head was read; its body read from `conn` as it is asked for.
    fn answer(self: &Arc<Self>, conn: Conn, head: Head) -> Answer {
        let mut reader = Reader { conn: Some(conn), state: head.framing, pool: head.keep_alive.then(|| self.clone()) };
        if matches!(reader.state, State::Done) {
            reader.finish();
        }
        Answer { status: head.status, headers: head.headers, response: UpstreamBody(Inner::Plain(reader)) }
    }
}

impl Conn {
    /// Read what the socket has (at least one byte, or 0 at its end) into the buffer.
    fn poll_fill(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<usize>> {
        loop {
            self.buf.reserve(self.read_size);
            let room = self.buf.capacity() - self.buf.len();
            match self.tcp.try_read_buf(&mut self.buf) {
                Ok(n) => {
                    if n == room {
                        self.read_size = (self.read_size * 2).min(READ_MAX);
                    }
                    return Poll::Ready(Ok(n));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => ready!(self.tcp.poll_read_ready(cx))?,
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
    }

    async fn fill(&mut self) -> io::Result<usize> {
        std::future::poll_fn(|cx| self.poll_fill(cx)).await
    }

    /// Whether the upstream still keeps the connection open and sent nothing on it since
    /// (a read that does not wait: an end, an error or stray bytes all mean no).
    fn is_open(&mut self) -> bool {
        let mut probe = [0u8; 1];
        matches!(self.tcp.try_read(&mut probe), Err(e) if e.kind() == io::ErrorKind::WouldBlock)
    }
}

/// Write all of `bytes`.
async fn write_all(tcp: &TcpStream, mut bytes: &[u8]) -> io::Result<()> {
    while !bytes.is_empty() {
        match tcp.try_write(bytes) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => bytes = bytes.get(n..).unwrap_or_default(),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => tcp.writable().await?,
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Why a streamed request body could not be sent.
enum BodyFailure {
    /// Writing to the upstream failed.
    Write(io::Error),
    /// The body itself: it could not be read, or its length is not the one declared.
    Body(ApiError),
}

/// Write a streamed request body as it arrives, framed as announced.
async fn write_body(tcp: &TcpStream, body: &mut Body, framing: Sent) -> Result<(), BodyFailure> {
    let failed = |e: &str| BodyFailure::Body(ApiError::unreachable(e));
    let mut left = match framing {
        Sent::Empty => return Ok(()),
        Sent::Length(n) => Some(n),
        Sent::Chunked => None,
    };
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| failed(&format!("the request body could not be read: {e}")))?;
        let Ok(data) = frame.into_data() else { continue };
        if data.is_empty() {
            continue;
        }
        if let Some(n) = &mut left {
            *n = n
                .checked_sub(data.len() as u64)
                .ok_or_else(|| failed("the request body is longer than its declared length"))?;
            write_all(tcp, &data).await.map_err(BodyFailure::Write)?;
        } else {
            let mut piece = Vec::with_capacity(data.len() + 20);
            piece.extend_from_slice(format!("{:x}\r\n", data.len()).as_bytes());
            piece.extend_from_slice(&data);
            piece.extend_from_slice(b"\r\n");
            write_all(tcp, &piece).await.map_err(BodyFailure::Write)?;
        }
    }
    match left {
        Some(0) => Ok(()),
        Some(_) => Err(failed("the request body is shorter than its declared length")),
        None => write_all(tcp, b"0\r\n\r\n").await.map_err(BodyFailure::Write),
    }
}

/// The head of an answer.
#[derive(Debug)]
struct Head {
    status: StatusCode,
    headers: HeaderMap,
    framing: State,
    /// The connection may carry another request once this answer is read.
    keep_alive: bool,
}

/// An answer's head as it was read: where its lines lie in the buffer.
struct Parsed {
    len: usize,
    status: StatusCode,
    http11: bool,
    lines: Lines,
}

/// The header lines of a head, as offsets: for a head of the common shape, the first so
/// many of the fields given to [`parse`]; else (up to [`MAX_HEADERS`] of them) a vector.
enum Lines {
    Few(usize),
    Many(Vec<Field>),
}

impl Lines {
    fn as_slice<'a>(&'a self, fields: &'a [Field]) -> &'a [Field] {
        match self {
            Lines::Few(n) => fields.get(..*n).unwrap_or_default(),
            Lines::Many(lines) => lines,
        }
    }
}

/// Read the head of the answer (after any `1xx` interim ones).
async fn read_head(conn: &mut Conn, head_request: bool) -> Result<Head, Failure> {
    let mut got_any = false;
    loop {
        if !conn.buf.is_empty() {
            got_any = true;
            match read_buffered(conn, head_request)? {
                Buffered::Head(head) => return Ok(head),
                Buffered::Interim => continue,
                Buffered::Partial if conn.buf.len() > HEAD_LIMIT => {
                    return Err(Failure::head(&format!(
                        "the upstream's response head is over the proxy's limit of {HEAD_LIMIT} bytes"
                    )));
                }
                Buffered::Partial => {}
            }
        }
        match conn.fill().await {
            Ok(0) => return Err(Failure::closed(!got_any)),
            Ok(_) => {}
            Err(e) => return Err(Failure::io(&e, !got_any)),
        }
    }
}

/// What the bytes read so far hold.
enum Buffered {
    /// The answer's head (taken out of the buffer).
    Head(Head),
    /// An interim `1xx` head (taken out of the buffer).
    Interim,
    /// No whole head yet.
    Partial,
}

/// Read the head at the start of the buffer, if it is whole (its lines' offsets kept on
/// the stack here, not in the waiting future).
fn read_buffered(conn: &mut Conn, head_request: bool) -> Result<Buffered, Failure> {
    let mut fields = [Field::default(); COMMON_LINES];
    let Some(parsed) = parse(&conn.buf, &mut fields)? else { return Ok(Buffered::Partial) };
    if parsed.status.is_informational() && parsed.status != StatusCode::SWITCHING_PROTOCOLS {
        conn.buf.advance(parsed.len);
        return Ok(Buffered::Interim);
    }
    head(conn, &parsed, &fields, head_request).map(Buffered::Head)
}

/// The answer an upstream sent before it stopped reading the request, once writing the
/// request failed with `e` (the head within [`EARLY_ANSWER_WAIT`]); its connection is not
/// used again. Without one, the failure says the upstream closed the connection while the
/// request (its body, when `body`) was being sent, and whether nothing of an answer came
/// (only then may the request go on another connection; never after a wait that ran out).
async fn early_answer(conn: &mut Conn, head_request: bool, e: &io::Error, body: bool) -> Result<Head, Failure> {
    let before_answer = match tokio::time::timeout(EARLY_ANSWER_WAIT, read_head(conn, head_request)).await {
        Ok(Ok(mut head)) => {
            head.keep_alive = false;
            return Ok(head);
        }
        // Part of a head, or one that is not valid: that failure says more.
        Ok(Err(f)) if !f.before_answer => return Err(f),
        Ok(Err(_)) => true,
        Err(_) => false,
    };
    let what = if body { "the request body" } else { "the request" };
    let detail = format!("the upstream closed the connection while {what} was being sent ({e})");
    Err(Failure { error: ApiError::unreachable(&detail), before_answer })
}

/// Parse a head, if the buffer holds a whole one: one of the common shape read by
/// [`crate::head::response`], any other by `httparse`.
fn parse(buf: &[u8], fields: &mut [Field]) -> Result<Option<Parsed>, Failure> {
    if let Some(h) = crate::head::response(buf, fields) {
        return parsed(h.len, Some(h.code), true, Lines::Few(h.count)).map(Some);
    }
    let mut lines = [const { std::mem::MaybeUninit::uninit() }; MAX_HEADERS];
    let mut response = httparse::Response::new(&mut []);
    let len = match httparse::ParserConfig::default().parse_response_with_uninit_headers(&mut response, buf, &mut lines)
    {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(e) => return Err(Failure::head(&format!("the upstream's response head is not valid HTTP/1.1: {e}"))),
    };
    let at = |s: &[u8]| Span::within(buf, s);
    let lines = response.headers.iter().map(|line| (at(line.name.as_bytes()), at(line.value))).collect();
    parsed(len, response.code, response.version == Some(1), Lines::Many(lines)).map(Some)
}

/// A head read, its status checked.
fn parsed(len: usize, code: Option<u16>, http11: bool, lines: Lines) -> Result<Parsed, Failure> {
    let status = code
        .and_then(|c| StatusCode::from_u16(c).ok())
        .ok_or_else(|| Failure::head("the upstream's response has no valid status code"))?;
    Ok(Parsed { len, status, http11, lines })
}

/// The head taken out of the buffer (header values share its bytes) and how the body is
/// framed (read from the lines as they are written, not looked up after).
fn head(conn: &mut Conn, parsed: &Parsed, fields: &[Field], head_request: bool) -> Result<Head, Failure> {
    let bytes = conn.buf.split_to(parsed.len).freeze();
    let lines = parsed.lines.as_slice(fields);
    let mut close = !parsed.http11;
    // Whether the last transfer-encoding ends in `chunked`, if there is one.
    let mut chunked = None;
    // The declared length: every value (and item of a list) the same number, else `Err`.
    let mut length: Option<Result<u64, ()>> = None;
    for &(name, value) in lines {
        let name = bytes.get(name.range()).unwrap_or_default();
        let value = bytes.get(value.range()).unwrap_or_default();
        // A name read from a head is made of `tchar`s: compared a word at a time.
        if is_named(name, b"connection") {
            close |= tokens(value).any(|t| t.eq_ignore_ascii_case(b"close"));
        } else if is_named(name, b"transfer-encoding") {
            chunked = Some(tokens(value).next_back().is_some_and(|t| t.eq_ignore_ascii_case(b"chunked")));
        } else if is_named(name, b"content-length") {
            for item in tokens(value) {
                let n = decimal(item).ok_or(());
                length = Some(match length {
                    None => n,
                    Some(Ok(m)) if n == Ok(m) => n,
                    Some(_) => Err(()),
                });
            }
        }
    }
    let headers = header_map(&bytes, lines)?;
    let mut keep_alive = !close;
    let status = parsed.status;
    let framing = if head_request
        || status.is_informational()
        || status == StatusCode::NO_CONTENT
        || status == StatusCode::NOT_MODIFIED
    {
        keep_alive &= status != StatusCode::SWITCHING_PROTOCOLS;
        State::Done
    } else if let Some(chunked) = chunked {
        // Both framings at once is how requests are smuggled: read it as chunked, then
        // close the connection.
        keep_alive &= length.is_none() && chunked;
        if chunked { State::Chunked(Chunk::Size) } else { State::Close }
    } else {
        match length {
            Some(Ok(0)) => State::Done,
            Some(Ok(n)) => State::Length(n),
            Some(Err(())) => return Err(Failure::head("the upstream's response has an invalid content-length")),
            None => {
                keep_alive = false;
                State::Close
            }
        }
    };
    Ok(Head { status, headers, framing, keep_alive })
}

/// The answer's headers as a map sharing the head's bytes, every line in order but the
/// hop-by-hop ones (`content-length`, `transfer-encoding`, `connection`, ...): the framing
/// is read from the lines themselves, and an answer's map holds none (see
/// [`super::Answer::headers`]). A value the head reader passed is one a `HeaderValue`
/// takes, so leaving one out refuses no head.
fn header_map(bytes: &Bytes, lines: &[Field]) -> Result<HeaderMap, Failure> {
    let mut headers = HeaderMap::with_capacity(lines.len());
    for &(name, value) in lines {
        let name = header_name(bytes.get(name.range()).unwrap_or_default())
            .map_err(|_| Failure::head("the upstream's response has an invalid header name"))?;
        if is_hop_by_hop(&name) {
            continue;
        }
        let value = bytes
            .get(value.range())
            .and_then(|_| HeaderValue::from_maybe_shared(bytes.slice(value.range())).ok())
            .ok_or_else(|| Failure::head("the upstream's response has an invalid header value"))?;
        headers.append(name, value);
    }
    Ok(headers)
}

/// The items of a comma-separated header value, trimmed.
fn tokens(value: &[u8]) -> impl DoubleEndedIterator<Item = &[u8]> {
    value.split(|&b| b == b',').map(<[u8]>::trim_ascii)
}

/// A decimal number of at most 19 digits (so no overflow).
fn decimal(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() || digits.len() > 19 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(digits.iter().fold(0u64, |n, &d| n * 10 + u64::from(d - b'0')))
}

/// Where a body's reader is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// This many bytes to come.
    Length(u64),
    Chunked(Chunk),
    /// Everything until the upstream closes the connection.
    Close,
    Done,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Chunk {
    /// A chunk-size line.
    Size,
    /// This many bytes of chunk data to come.
    Data(u64),
    /// The `\r\n` after a chunk's data.
    DataEnd,
    /// Trailer lines (ignored) up to an empty one; this many bytes of them so far.
    Trailers(usize),
}

/// What the bytes in the buffer gave.
enum Step {
    Data(Bytes),
    /// The body is complete.
    End,
    /// More bytes are needed.
    More,
}

/// The body of an answer on a connection: read in the task that polls it.
#[derive(Debug)]
pub(super) struct Reader {
    /// `None` once the body ended (the connection went back to the pool or was closed).
    conn: Option<Conn>,
    state: State,
    /// The pool to give the connection back to at the end (the answer is keep-alive).
    pool: Option<Arc<Pool>>,
}

impl Reader {
    /// The body ended: the connection goes back to the pool if it can carry another
    /// request (nothing was sent after the answer).
    fn finish(&mut self) {
        self.state = State::Done;
        if let (Some(conn), Some(pool)) = (self.conn.take(), self.pool.take())
            && conn.buf.is_empty()
        {
            pool.put(conn);
        }
    }

    /// The whole body at once when its length is known and all of it is buffered
    /// already (a small answer arrives with its head): what reading its frames would
    /// give, joined, without a poll per frame; `None` otherwise (nothing is taken).
    pub(super) fn take_whole(&mut self) -> Option<Bytes> {
        let State::Length(left) = self.state else { return None };
        let conn = self.conn.as_mut()?;
        let n = usize::try_from(left).ok().filter(|&n| n <= conn.buf.len())?;
        let whole = conn.buf.split_to(n).freeze();
        self.finish();
        Some(whole)
    }

    fn fail(&mut self, message: &'static str) -> io::Error {
        self.state = State::Done;
        self.conn = None;
        io::Error::new(io::ErrorKind::InvalidData, message)
    }
}

/// Take what the buffer holds of the body.
fn step(state: &mut State, buf: &mut BytesMut) -> Result<Step, &'static str> {
    loop {
        match state {
            State::Done => return Ok(Step::End),
            State::Close => {
                return Ok(if buf.is_empty() { Step::More } else { Step::Data(buf.split().freeze()) });
            }
            State::Length(left) => {
                let Some((data, ended)) = take_up_to(buf, left) else { return Ok(Step::More) };
                if ended {
                    *state = State::Done;
                }
                return Ok(Step::Data(data));
            }
            State::Chunked(Chunk::Data(left)) => {
                let Some((data, ended)) = take_up_to(buf, left) else { return Ok(Step::More) };
                if ended {
                    *state = State::Chunked(Chunk::DataEnd);
                }
                return Ok(Step::Data(data));
            }
            State::Chunked(Chunk::DataEnd) => {
                let Some(end) = buf.get(..2) else { return Ok(Step::More) };
                if end != b"\r\n" {
                    return Err("the upstream's chunked body has no line end after a chunk");
                }
                buf.advance(2);
                *state = State::Chunked(Chunk::Size);
            }
            State::Chunked(Chunk::Size) => {
                let Some(line) = line(buf)? else { return Ok(Step::More) };
                let size = buf
                    .get(..line - 2)
                    .and_then(chunk_size)
                    .ok_or("the upstream's chunked body has an invalid chunk size")?;
                buf.advance(line);
                *state = State::Chunked(if size == 0 { Chunk::Trailers(0) } else { Chunk::Data(size) });
            }
            State::Chunked(Chunk::Trailers(seen)) => {
                let Some(line) = line(buf)? else { return Ok(Step::More) };
                buf.advance(line);
                if line == 2 {
                    *state = State::Done;
                    return Ok(Step::End);
                }
                let seen = *seen + line;
                if seen > LINE_LIMIT {
                    return Err("the upstream's chunked body has trailers over the proxy's limit");
                }
                *state = State::Chunked(Chunk::Trailers(seen));
            }
        }
    }
}

/// Up to `left` of the buffered bytes, taken off `left` (`None` when nothing is
/// buffered), and whether they were the last.
fn take_up_to(buf: &mut BytesMut, left: &mut u64) -> Option<(Bytes, bool)> {
    if buf.is_empty() {
        return None;
    }
    let n = buf.len().min(usize::try_from(*left).unwrap_or(usize::MAX));
    *left -= n as u64;
    Some((buf.split_to(n).freeze(), *left == 0))
}

/// The length of the `\r\n`-ended line the buffer starts with, ending included, if it
/// holds all of it.
fn line(buf: &BytesMut) -> Result<Option<usize>, &'static str> {
    match memchr::memchr(b'\n', buf) {
        Some(i) if i > 0 && buf.get(i - 1) == Some(&b'\r') => Ok(Some(i + 1)),
        Some(_) => Err("the upstream's chunked body has a line not ended by CRLF"),
        None if buf.len() > LINE_LIMIT => Err("the upstream's chunked body has a line over the proxy's limit"),
        None => Ok(None),
    }
}

/// A chunk-size line's number (hex digits, then optional whitespace and extensions).
fn chunk_size(line: &[u8]) -> Option<u64> {
    let digits = line.iter().take_while(|b| b.is_ascii_hexdigit()).count();
    if digits == 0 || digits > 16 {
        return None;
    }
    let (number, rest) = line.split_at(digits);
    let rest = rest.trim_ascii_start();
    if !(rest.is_empty() || rest.starts_with(b";")) {
        return None;
    }
    let text = std::str::from_utf8(number).ok()?;
    u64::from_str_radix(text, 16).ok()
}

impl hyper::body::Body for Reader {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        let this = &mut *self;
        loop {
            let Some(conn) = this.conn.as_mut() else { return Poll::Ready(None) };
            match step(&mut this.state, &mut conn.buf) {
                Ok(Step::Data(data)) => {
                    // A reader that knows the length stops at the last byte without
                    // asking for the end: the last piece is the end too.
                    if this.state == State::Done {
                        this.finish();
                    }
                    return Poll::Ready(Some(Ok(Frame::data(data))));
                }
                Ok(Step::End) => {
                    this.finish();
                    return Poll::Ready(None);
                }
                Ok(Step::More) => {}
                Err(message) => return Poll::Ready(Some(Err(this.fail(message)))),
            }
            match ready!(conn.poll_fill(cx)) {
                Ok(0) if this.state == State::Close => {
                    this.state = State::Done;
                    this.conn = None;
                    return Poll::Ready(None);
                }
                Ok(0) => {
                    return Poll::Ready(Some(Err(
                        this.fail("the upstream closed the connection before the end of the body")
                    )));
                }
                Ok(_) => {}
                Err(e) => {
                    this.state = State::Done;
                    this.conn = None;
                    return Poll::Ready(Some(Err(e)));
                }
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.state == State::Done
    }

    fn size_hint(&self) -> SizeHint {
        match self.state {
            State::Length(n) => SizeHint::with_exact(n),
            State::Done => SizeHint::with_exact(0),
            State::Chunked(_) | State::Close => SizeHint::default(),
        }
    }
}

#[cfg(test)]
mod tests;
