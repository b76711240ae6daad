//! `toolfix mcp`: a transparent wrapper for MCP servers that speak the stdio transport.
//! The client launches the wrapper instead of the server; the wrapper starts the server
//! as its child and relays newline-delimited JSON-RPC both ways, unchanged, except
//! `tools/call` requests:
//!
//! - arguments the tool's `inputSchema` accepts are forwarded as the exact bytes the
//!   client sent;
//! - repairable arguments (JSON-encoded arrays and objects, lossless scalars, `null`
//!   optionals, field names, arguments sent as a string holding JSON, ...) are forwarded
//!   repaired, every other byte of the message as it came;
//! - arguments that cannot be repaired with certainty, and any cut-off value for a tool
//!   that may have side effects, are not forwarded: the wrapper answers the request with
//!   a tool result `{"content":[{"type":"text","text":"<refusal>"}],"isError":true}`, so
//!   the model can correct itself;
//! - a call that gives a member of the request or its parameters more than once (which
//!   one a server reads depends on its JSON reader), or a batch holding a call, is not
//!   forwarded: it is answered with an error;
//! - a call to a tool not (yet) listed is forwarded unchanged;
//! - repeated identical calls to a tool that may have side effects are answered with the
//!   storm guard's message instead of being run again.
//!
//! The wrapper learns the tools from the server's `tools/list` results as the client
//! pages through them, and after `notifications/tools/list_changed` by `tools/list`
//! requests of its own (string ids under a `toolfix-mcp/<pid>/` prefix), whose answers it
//! keeps to itself. `annotations.readOnlyHint: true` marks a tool without side effects;
//! without it a tool may have side effects.
//!
//! Faults: when the server exits, every request it left unanswered gets a JSON-RPC
//! error and [`run`] returns an [`Exit`] with a non-zero code; when the client closes its
//! side, the server's stdin is closed, the server gets [`Config::shutdown_grace`] to
//! exit, then it is killed. Lines that are not JSON pass through; lines longer than
//! [`Config::max_message_bytes`] pass through unread, in pieces.
//!
//! ```no_run
//! # async fn demo() -> Result<(), toolfix_mcp::Error> {
//! use toolfix_mcp::{Config, Log, run};
//!
//! let mut server = tokio::process::Command::new("my-mcp-server");
//! server.arg("--stdio");
//! let exit = run(Config::default(), server, tokio::io::stdin(), tokio::io::stdout(), Log::new(false)).await?;
//! std::process::exit(exit.code);
//! # }
//! ```

mod config;
mod envelope;
mod event;
#[cfg(any(test, feature = "fuzzing"))]
#[doc(hidden)]
pub mod fuzzing;
mod lines;
mod relay;
mod session;

pub use config::{Config, GuardSettings};
pub use event::Log;
pub use relay::{Ending, Exit, run};

/// What can stop the wrapper.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The server could not be started.
    #[error("cannot start the MCP server: {0}")]
    Spawn(#[source] std::io::Error),
    /// Waiting for the server failed.
    #[error("i/o error: {0}")]
    Io(#[source] std::io::Error),
    /// The configuration file is invalid.
    #[error("invalid configuration: {0}")]
    Config(String),
}
