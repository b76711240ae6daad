//! `toolfix`: repair LLM tool calls from the command line.
//!
//! Every subcommand reads a file or stdin, writes JSON to stdout and diagnostics to
//! stderr. Exit codes, the same for every subcommand: 0 = done, and every call found is
//! usable (plain prose with no call is a valid answer for `extract` and `fix`); 1 = some
//! input could not be recovered, or a call was refused; 2 = usage or I/O error. `--batch`
//! switches to JSON Lines in and out (see `batch`) and exits 0 whatever the lines held. A
//! closed stdout (`toolfix ... | head`) ends the run quietly.

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
    /// Find the calls in a model's reply, repair each against its tool's schema (or refuse
    /// it with a message for the model), and break storms of repeated calls.
    Fix(FixArgs),
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
    /// Single mode: the input is a whole assistant message (`{"role":"assistant",
    /// "content",...}`) or a whole chat completion response (its first choice is read),
    /// not the bare content text.
    #[arg(long, conflicts_with = "batch")]
    message: bool,
    /// What becomes of reasoning blocks (`<think>...</think>` and the like) found in
    /// `content`: move them to `reasoning_content` (the default), keep them in `content`,
    /// or strip them.
    #[arg(long, value_enum, value_name = "WHAT", default_value_t = Think::Move)]
    think: Think,
    /// How calls written in the reply's text are taken: infer (from the reply: a call the
    /// model only shows — an example, a quote, a question asking first — is not one),
    /// trust (every one is a call) or never (none is).
    #[arg(long, value_enum, value_name = "POLICY", default_value_t = Leaked::Infer)]
    leaked_calls: Leaked,
}

/// How calls written in text are taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Leaked {
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
struct FixArgs {
    #[command(flatten)]
    reply: ExtractArgs,
    /// The output was cut by the model's token limit (as `finish_reason: "length"` says
    /// in a message or response): every unclosed call counts as cut off, and is refused
    /// for a tool that may change things.
    #[arg(long)]
    hit_token_limit: bool,
}

/// What becomes of reasoning blocks in `content`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Think {
    /// Left in `content` as written.
    Keep,
    /// Taken out of `content` and dropped.
    Strip,
    /// Taken out of `content` and added to `reasoning_content`.
    Move,
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
    /// The arguments were cut by the model's token limit (`finish_reason: "length"`):
    /// unclosed arguments count as cut off, and are refused for a tool that may change
    /// things (batch: every line).
    #[arg(long)]
    hit_token_limit: bool,
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
    /// JSON Lines in, JSON Lines out: one answer per non-blank input line, in order, each
    /// written as soon as its line is read; a line that is not UTF-8 or not JSON gets an
    /// error line with its number. Exits 0 whatever the lines held.
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

    /// The input, opened for reading.
    fn open(&self) -> Result<batch::Input> {
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
    fn read(&self, limit: usize) -> Result<std::result::Result<String, usize>> {
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
        // The reader went away (`toolfix ... | head`): nothing more to say to anyone.
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("toolfix: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// True when `e` comes from writing to a closed pipe.
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| c.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe))
}

/// Exit code 1: some input could not be recovered, or a call was refused.
const UNRECOVERED: u8 = 1;

fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Json(args) => json_cmd::run(&args),
        Command::Repair(args) => repair_cmd::run(&args),
        Command::Extract(args) => extract_cmd::run(&args, None),
        Command::Fix(args) => extract_cmd::run(&args.reply, Some(&args)),
        Command::Check(args) => check_cmd::run(&args),
        Command::Serve(args) => serve_cmd::run(args),
        Command::Mcp(args) => mcp_cmd::run(&args),
    }
}
