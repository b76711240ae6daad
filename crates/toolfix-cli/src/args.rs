//! The command line: every subcommand's flags, and the input options they share.

use crate::batch;
use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand};
use std::ffi::OsString;
use std::io::Read;
use std::net::SocketAddr;
use std::path::PathBuf;

/// Make LLM tool calls land: salvage broken JSON, repair arguments against a tool's
/// schema, extract calls from model-specific formats.
#[derive(Debug, Parser)]
#[command(name = "toolfix", version, about)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Repair almost-JSON into strict JSON (fences, prose, quotes, commas, truncation...).
    Json(JsonArgs),
    /// Validate a call's arguments against its tool's schema; repair where certain, else
    /// say what to fix.
    Repair(RepairArgs),
    /// Find tool calls in a model's reply, in every channel and known model format.
    Extract(ExtractArgs),
    /// Find the calls in a model's reply, repair each against its tool's schema (or refuse
    /// it with a message for the model), and break storms of repeated calls.
    Fix(FixArgs),
    /// Lint tool definitions: every problem at its JSON pointer; exit 1 on an error, 0 with
    /// warnings only.
    Check(CheckArgs),
    /// Run the OpenAI-compatible repair proxy in front of a model server.
    Serve(ServeArgs),
    /// Wrap a stdio MCP server: repair `tools/call` arguments against its own schemas.
    Mcp(McpArgs),
}

#[derive(Debug, Args)]
pub(crate) struct ExtractArgs {
    #[command(flatten)]
    pub(crate) io: Io,
    /// Tool definitions (batch lines may carry their own `tools`, which win).
    #[arg(long, value_name = "FILE")]
    pub(crate) tools: Option<PathBuf>,
    /// Single mode: the input is a whole assistant message (`{"role":"assistant",
    /// "content",...}`) or a whole chat completion response (its first choice is read),
    /// not the bare content text.
    #[arg(long, conflicts_with = "batch")]
    pub(crate) message: bool,
    /// What becomes of reasoning blocks (`<think>...</think>` and the like) found in
    /// `content`: move them to `reasoning_content` (the default), keep them in `content`,
    /// or strip them.
    #[arg(long, value_enum, value_name = "WHAT", default_value_t = Think::Move)]
    pub(crate) think: Think,
    /// How calls written in the reply's text are taken: infer (from the reply: a call the
    /// model only shows — an example, a quote, a question asking first — is not one),
    /// trust (every one is a call) or never (none is).
    #[arg(long, value_enum, value_name = "POLICY", default_value_t = Leaked::Infer)]
    pub(crate) leaked_calls: Leaked,
}

/// How calls written in text are taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Leaked {
    /// Decided from the reply's structure.
    Infer,
    /// Every call written in text is a call.
    Trust,
    /// No call written in text is one.
    Never,
}

impl From<Leaked> for toolfix::schema::LeakedCalls {
    fn from(l: Leaked) -> Self {
        match l {
            Leaked::Infer => toolfix::schema::LeakedCalls::Infer,
            Leaked::Trust => toolfix::schema::LeakedCalls::Trust,
            Leaked::Never => toolfix::schema::LeakedCalls::Never,
        }
    }
}

#[derive(Debug, Args)]
pub(crate) struct FixArgs {
    #[command(flatten)]
    pub(crate) reply: ExtractArgs,
    /// The output was cut by the model's token limit (as `finish_reason: "length"` says
    /// in a message or response): every unclosed call counts as cut off, and is refused
    /// for a tool that may change things.
    #[arg(long)]
    pub(crate) hit_token_limit: bool,
}

/// What becomes of reasoning blocks in `content`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Think {
    /// Left in `content` as written.
    Keep,
    /// Taken out of `content` and dropped.
    Strip,
    /// Taken out of `content` and added to `reasoning_content`.
    Move,
}

#[derive(Debug, Args)]
pub(crate) struct RepairArgs {
    #[command(flatten)]
    pub(crate) io: Io,
    /// Tool definitions: a JSON array in OpenAI, bare or MCP form (batch lines may carry
    /// their own `tools`, which win).
    #[arg(long, value_name = "FILE")]
    pub(crate) tools: Option<PathBuf>,
    /// The tool called (single mode; batch lines give `tool`).
    #[arg(long, value_name = "NAME")]
    pub(crate) tool: Option<String>,
    /// Print text fixes, repairs and notes to stderr.
    #[arg(long)]
    pub(crate) report: bool,
    /// The arguments were cut by the model's token limit (`finish_reason: "length"`):
    /// unclosed arguments count as cut off, and are refused for a tool that may change
    /// things (batch: every line).
    #[arg(long)]
    pub(crate) hit_token_limit: bool,
}

#[derive(Debug, Args)]
pub(crate) struct CheckArgs {
    /// Tool definitions to lint.
    #[arg(long, value_name = "FILE")]
    pub(crate) tools: PathBuf,
}

/// Options shared by every subcommand.
#[derive(Debug, Args)]
pub(crate) struct Io {
    /// Input file (default: stdin).
    pub(crate) file: Option<PathBuf>,
    /// JSON Lines in, JSON Lines out: one answer per non-blank input line, in order, each
    /// written as soon as its line is read; a line that is not UTF-8 or not JSON gets an
    /// error line with its number. Exits 0 whatever the lines held.
    #[arg(long)]
    pub(crate) batch: bool,
    /// Largest input accepted, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = toolfix::Limits::DEFAULT_MAX_INPUT_BYTES)]
    pub(crate) max_input_bytes: usize,
}

impl Io {
    pub(crate) fn limits(&self) -> toolfix::Limits {
        toolfix::Limits::default().with_max_input_bytes(self.max_input_bytes)
    }

    /// The input, opened for reading.
    pub(crate) fn open(&self) -> Result<batch::Input> {
        let reader: Box<dyn Read> = match &self.file {
            Some(path) => {
                Box::new(std::fs::File::open(path).with_context(|| format!("cannot read {}", path.display()))?)
            }
            None => Box::new(std::io::stdin().lock()),
        };
        Ok(std::io::BufReader::with_capacity(64 * 1024, reader))
    }

    /// The whole input (single mode), or `Ok(Err(size))` when it is longer than `limit`
    /// bytes (only `limit + 1` bytes are read).
    pub(crate) fn read(&self, limit: usize) -> Result<std::result::Result<String, usize>> {
        let name = || self.file.as_ref().map_or_else(|| "stdin".to_owned(), |p| p.display().to_string());
        let mut bytes = Vec::new();
        self.open()?
            .take(u64::try_from(limit).unwrap_or(u64::MAX).saturating_add(1))
            .read_to_end(&mut bytes)
            .with_context(|| format!("cannot read {}", name()))?;
        if bytes.len() > limit {
            return Ok(Err(bytes.len()));
        }
        let text = String::from_utf8(bytes)
            .map_err(|e| anyhow::anyhow!("{} is not UTF-8 text (at byte {})", name(), e.utf8_error().valid_up_to()))?;
        Ok(Ok(text))
    }
}

#[derive(Debug, Args)]
pub(crate) struct JsonArgs {
    #[command(flatten)]
    pub(crate) io: Io,
    /// Print each fix (kind and byte span) to stderr.
    #[arg(long)]
    pub(crate) report: bool,
}

/// Flags of `toolfix serve`.
#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    /// The upstream's base URL, standing for the proxy's `/v1`
    /// (e.g. http://127.0.0.1:8000/v1); required unless the config file gives it.
    #[arg(long, value_name = "URL")]
    pub(crate) upstream: Option<String>,
    /// Where to listen [default: 127.0.0.1:8787].
    #[arg(long, value_name = "ADDR")]
    pub(crate) listen: Option<SocketAddr>,
    /// A TOML configuration file (see docs/proxy.md); flags override it.
    #[arg(long, value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,
    /// The key clients must send as `Authorization: Bearer KEY` (needed to listen beyond
    /// loopback).
    #[arg(long, value_name = "KEY", env = "TOOLFIX_API_KEY", hide_env_values = true)]
    pub(crate) api_key: Option<String>,
    /// The key sent to the upstream as `Authorization: Bearer KEY` (without it, the
    /// client's header is passed through unless --api-key is set).
    #[arg(long, value_name = "KEY", env = "TOOLFIX_UPSTREAM_API_KEY", hide_env_values = true)]
    pub(crate) upstream_api_key: Option<String>,
    /// Listen beyond loopback without an API key.
    #[arg(long)]
    pub(crate) allow_remote: bool,
    /// Corrective re-prompts per request, 0 to 5 [default: 1].
    #[arg(long, value_name = "N")]
    pub(crate) max_reprompts: Option<u8>,
    /// What the client gets for a call still unusable when the attempts ran out: explain
    /// (left out, the text says why) or as_sent (passed on unrepaired) [default: explain].
    #[arg(long, value_name = "MODE")]
    pub(crate) on_give_up: Option<String>,
    /// How a call cut off by the token limit is recovered: off, retry or continue
    /// [default: retry].
    #[arg(long, value_name = "MODE")]
    pub(crate) length: Option<String>,
    /// How calls written in a reply's text are taken: infer (a call the model only shows
    /// is not run), trust or never [default: infer].
    #[arg(long, value_name = "POLICY")]
    pub(crate) leaked_calls: Option<String>,
    /// Leave the request's history as it came (no request-side repair).
    #[arg(long)]
    pub(crate) no_history_repair: bool,
    /// Put the upstream's original messages into each response's `x_toolfix`.
    #[arg(long)]
    pub(crate) detail: bool,
    /// Seconds to wait for a whole answer (for a stream: its first event).
    #[arg(long, value_name = "SECS")]
    pub(crate) timeout: Option<f64>,
    /// The largest request body, in bytes [default: 16 MiB].
    #[arg(long, value_name = "BYTES")]
    pub(crate) body_limit: Option<usize>,
}

/// Flags of `toolfix mcp`.
#[derive(Debug, Args)]
pub(crate) struct McpArgs {
    /// A TOML configuration file (see docs/mcp.md).
    #[arg(long, value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,
    /// Also write one JSON object per repaired or refused call to this file (appended).
    #[arg(long, value_name = "FILE")]
    pub(crate) log_file: Option<PathBuf>,
    /// Show argument values and whole refusal messages in diagnostics.
    #[arg(long)]
    pub(crate) verbose: bool,
    /// Turn the storm guard off.
    #[arg(long)]
    pub(crate) no_guard: bool,
    /// The MCP server to run, after `--`: CMD [ARGS...].
    #[arg(last = true, required = true, value_name = "CMD")]
    pub(crate) command: Vec<OsString>,
}

/// The message for an input longer than the limit (`size` is the bytes read: one more
/// than the limit).
pub(crate) fn too_large(size: usize, limit: usize) -> String {
    format!("error: the input is too large (over {} bytes, limit {limit}; raise `--max-input-bytes`)", size - 1)
}
