//! `toolfix`: repair LLM tool calls from the command line.
//!
//! Every subcommand reads a file or stdin, writes JSON to stdout and diagnostics to
//! stderr, and exits 0 on success, 1 when the input cannot be recovered, 2 on usage
//! errors. `--batch` switches to JSON Lines in and out (see `batch`).

mod batch;
mod check_cmd;
mod extract_cmd;
mod json_cmd;
mod mcp_cmd;
mod out;
mod repair_cmd;
mod serve_cmd;
mod tools;

use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand};
use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;

/// Make LLM tool calls land: salvage broken JSON, repair arguments against a tool's
/// schema, extract calls from model-specific formats.
#[derive(Debug, Parser)]
#[command(name = "toolfix", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Repair almost-JSON into strict JSON (fences, prose, quotes, commas, truncation...).
    Json(JsonArgs),
    /// Validate a call's arguments against its tool's schema; repair where certain, else
    /// say what to fix.
    Repair(RepairArgs),
    /// Find tool calls in a model's reply, in every channel and known model format.
    Extract(ExtractArgs),
    /// Extract, then salvage and repair each call against its tool's schema, and break
    /// storms of repeated calls.
    Fix(ExtractArgs),
    /// Lint tool definitions: every problem at its JSON pointer; exit 1 on an error, 0 with
    /// warnings only.
    Check(CheckArgs),
    /// Run the OpenAI-compatible repair proxy in front of a model server.
    Serve(serve_cmd::ServeArgs),
    /// Wrap a stdio MCP server: repair `tools/call` arguments against its own schemas.
    Mcp(mcp_cmd::McpArgs),
}

#[derive(Debug, Args)]
struct ExtractArgs {
    #[command(flatten)]
    io: Io,
    /// Tool definitions (batch lines may carry their own `tools`, which win).
    #[arg(long, value_name = "FILE")]
    tools: Option<PathBuf>,
}

#[derive(Debug, Args)]
struct RepairArgs {
    #[command(flatten)]
    io: Io,
    /// Tool definitions: a JSON array in OpenAI, bare or MCP form (batch lines may carry
    /// their own `tools`, which win).
    #[arg(long, value_name = "FILE")]
    tools: Option<PathBuf>,
    /// The tool called (single mode; batch lines give `tool`).
    #[arg(long, value_name = "NAME")]
    tool: Option<String>,
    /// Print text fixes, repairs and notes to stderr.
    #[arg(long)]
    report: bool,
}

#[derive(Debug, Args)]
struct CheckArgs {
    /// Tool definitions to lint.
    #[arg(long, value_name = "FILE")]
    tools: PathBuf,
}

/// Options shared by every subcommand.
#[derive(Debug, Args)]
struct Io {
    /// Input file (default: stdin).
    file: Option<PathBuf>,
    /// JSON Lines in, JSON Lines out: one answer per input line, exit 0 whatever the lines
    /// held.
    #[arg(long)]
    batch: bool,
    /// Largest input accepted, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = toolfix::Limits::DEFAULT_MAX_INPUT_BYTES)]
    max_input_bytes: usize,
}

impl Io {
    fn limits(&self) -> toolfix::Limits {
        toolfix::Limits::default().with_max_input_bytes(self.max_input_bytes)
    }

    fn read(&self) -> Result<String> {
        let mut text = String::new();
        match &self.file {
            Some(path) => {
                text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
            }
            None => {
                std::io::stdin().read_to_string(&mut text).context("cannot read stdin")?;
            }
        }
        Ok(text)
    }
}

#[derive(Debug, Args)]
struct JsonArgs {
    #[command(flatten)]
    io: Io,
    /// Print each fix (kind and byte span) to stderr.
    #[arg(long)]
    report: bool,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("toolfix: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Json(args) => json_cmd::run(&args),
        Command::Repair(args) => repair_cmd::run(&args),
        Command::Extract(args) => extract_cmd::run(&args, extract_cmd::Mode::Extract),
        Command::Fix(args) => extract_cmd::run(&args, extract_cmd::Mode::Fix),
        Command::Check(args) => check_cmd::run(&args),
        Command::Serve(args) => serve_cmd::run(args),
        Command::Mcp(args) => mcp_cmd::run(&args),
    }
}
