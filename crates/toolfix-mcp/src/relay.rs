//! The I/O shell: two relay loops (client → server, server → client) around a
//! [`Session`], and the shutdown rules.

use crate::lines::{Frame, Frames};
use crate::session::{ClientAction, Session};
use crate::{Config, Error, Log};
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex as SyncMutex};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::process::{ChildStdin, Command};
use tokio::sync::Mutex;

/// How a wrapped session ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Ending {
    /// The client closed its side; the server was then closed (and killed if it lingered).
    ClientClosed,
    /// The server exited (or closed its stdout) while the client was still there.
    ServerExited,
}

/// The end of a session: why, and the exit code the wrapper should use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Exit {
    /// Why it ended.
    pub ending: Ending,
    /// The code to exit with: the server's own when the client closed first (0 when it
    /// had to be killed), and never 0 when the server went away first.
    pub code: i32,
}

type Shared<T> = Arc<Mutex<T>>;

/// Run `command` as an MCP server and relay between it and a client on `client_in` /
/// `client_out`, repairing `tools/call` arguments on the way (see the crate docs).
///
/// # Errors
///
/// [`Error::Spawn`] when the server cannot be started; [`Error::Io`] when waiting for it
/// fails.
pub async fn run<R, W>(
    config: Config,
    mut command: Command,
    client_in: R,
    client_out: W,
    log: Log,
) -> Result<Exit, Error>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::inherit()).kill_on_drop(true);
    let mut child = command.spawn().map_err(Error::Spawn)?;
    let (Some(server_in), Some(server_out)) = (child.stdin.take(), child.stdout.take()) else {
        return Err(Error::Spawn(std::io::Error::other("the server's pipes were not set up")));
    };
    let session = Arc::new(SyncMutex::new(Session::new(&config)));
    let server_in: Shared<Option<ChildStdin>> = Arc::new(Mutex::new(Some(server_in)));
    let client_out: Shared<W> = Arc::new(Mutex::new(client_out));
    let log = Arc::new(log);
    let client_closed = Arc::new(AtomicBool::new(false));

    let mut upstream = tokio::spawn(client_to_server(
        Arc::clone(&client_closed),
        Frames::new(BufReader::with_capacity(64 * 1024, client_in), config.max_message_bytes),
        Arc::clone(&session),
        Arc::clone(&server_in),
        Arc::clone(&client_out),
        Arc::clone(&log),
    ));
    let mut downstream = tokio::spawn(server_to_client(
        Frames::new(BufReader::with_capacity(64 * 1024, server_out), config.max_message_bytes),
        Arc::clone(&session),
        Arc::clone(&server_in),
        Arc::clone(&client_out),
        Arc::clone(&log),
    ));

    let grace = config.shutdown_grace;
    let (client_first, downstream_done) = tokio::select! {
        biased;
        _ = &mut downstream => (false, true),
        _ = &mut upstream => (true, false),
    };
    // The server's output may end first only because the client closed its input and the
    // server finished: that is the client's ending, not a crash.
    if client_first || client_closed.load(Ordering::Acquire) {
        // The client task closed the server's stdin; give the server `grace` to finish.
        let deadline = tokio::time::Instant::now() + grace;
        let status = if let Ok(status) = tokio::time::timeout_at(deadline, child.wait()).await {
            Some(status.map_err(Error::Io)?)
        } else {
            let _ = child.kill().await;
            None
        };
        // Whatever the server wrote before it went reaches the client.
        if !downstream_done {
            let _ = tokio::time::timeout(grace, &mut downstream).await;
            downstream.abort();
        }
        upstream.abort();
        // A client that closed its input may still read: what the server left unanswered
        // gets an error, as when the server goes first.
        answer_abandoned(&session, &client_out).await;
        let code = status.and_then(|s| s.code()).unwrap_or(0);
        return Ok(Exit { ending: Ending::ClientClosed, code });
    }
    // The server closed its stdout: it is gone or going. Answer what it left unanswered.
    upstream.abort();
    answer_abandoned(&session, &client_out).await;
    server_in.lock().await.take();
    let status = if let Ok(status) = tokio::time::timeout(grace, child.wait()).await {
        Some(status.map_err(Error::Io)?)
    } else {
        let _ = child.kill().await;
        None
    };
    let code = status.and_then(|s| s.code()).filter(|c| *c != 0).unwrap_or(1);
    log.write(&crate::event::Event::Warning(format!("the MCP server exited; exiting with {code}")));
    Ok(Exit { ending: Ending::ServerExited, code })
}

/// Every client request the server left unanswered gets a JSON-RPC error.
async fn answer_abandoned<W: AsyncWrite + Unpin>(session: &SyncMutex<Session>, client_out: &Mutex<W>) {
    let errors = lock(session).abandon("the MCP server exited before answering (toolfix mcp)");
    if errors.is_empty() {
        return;
    }
    let mut out = client_out.lock().await;
    for line in errors {
        if out.write_all(&line).await.is_err() {
            break;
        }
    }
    let _ = out.flush().await;
}

fn lock(session: &SyncMutex<Session>) -> std::sync::MutexGuard<'_, Session> {
    session.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

async fn send<T: AsyncWrite + Unpin>(to: &Mutex<T>, bytes: &[u8]) -> std::io::Result<()> {
    let mut to = to.lock().await;
    to.write_all(bytes).await?;
    to.flush().await
}

async fn send_server(to: &Mutex<Option<ChildStdin>>, bytes: &[u8]) -> std::io::Result<()> {
    let mut guard = to.lock().await;
    let Some(stdin) = guard.as_mut() else {
        return Err(std::io::ErrorKind::BrokenPipe.into());
    };
    stdin.write_all(bytes).await?;
    stdin.flush().await
}

async fn client_to_server<R, W>(
    closed: Arc<AtomicBool>,
    mut frames: Frames<BufReader<R>>,
    session: Arc<SyncMutex<Session>>,
    server_in: Shared<Option<ChildStdin>>,
    client_out: Shared<W>,
    log: Arc<Log>,
) where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut events = Vec::new();
    loop {
        let frame = match frames.next().await {
            Ok(frame) => frame,
            Err(_) => Frame::Eof,
        };
        match frame {
            Frame::Eof => break,
            Frame::Part(bytes) => {
                // Over the limit: passed through unread. A failed write means the server is
                // gone; the other loop sees that and ends the session.
                let _ = send_server(&server_in, &bytes).await;
            }
            Frame::Line(line) => {
                let action = lock(&session).on_client(&line, &mut events);
                for e in events.drain(..) {
                    log.write(&e);
                }
                let _ = match action {
                    ClientAction::Forward => send_server(&server_in, &line).await,
                    ClientAction::Replace(new) => send_server(&server_in, &new).await,
                    ClientAction::Answer(answer) => send(&client_out, &answer).await,
                    ClientAction::Drop => Ok(()),
                };
            }
        }
    }
    // The client is gone: close the server's stdin so it can finish.
    closed.store(true, Ordering::Release);
    server_in.lock().await.take();
}

async fn server_to_client<R, W>(
    mut frames: Frames<BufReader<R>>,
    session: Arc<SyncMutex<Session>>,
    server_in: Shared<Option<ChildStdin>>,
    client_out: Shared<W>,
    log: Arc<Log>,
) where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    loop {
        let frame = match frames.next().await {
            Ok(frame) => frame,
            Err(_) => Frame::Eof,
        };
        match frame {
            Frame::Eof => break,
            Frame::Part(bytes) => {
                let _ = send(&client_out, &bytes).await;
            }
            Frame::Line(line) => {
                let step = lock(&session).on_server(&line);
                for e in &step.events {
                    log.write(e);
                }
                if !step.requests.is_empty() {
                    // Written from another task: this loop must keep reading the server's
                    // output, or a server blocked on writing it would never read these.
                    let server_in = Arc::clone(&server_in);
                    tokio::spawn(async move {
                        for request in step.requests {
                            let _ = send_server(&server_in, &request).await;
                        }
                    });
                }
                if !step.swallow {
                    let _ = send(&client_out, &line).await;
                }
            }
        }
    }
}
