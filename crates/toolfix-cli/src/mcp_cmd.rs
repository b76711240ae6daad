//! `toolfix mcp`: the transparent MCP wrapper (crate `toolfix-mcp`). The client launches
//! `toolfix mcp -- CMD ARGS` instead of `CMD ARGS`; stdout carries only protocol messages,
//! diagnostics go to stderr with the server's own.

use anyhow::{Context, Result};
use clap::Args;
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;
use toolfix_mcp::{Config, Log};

/// Flags of `toolfix mcp`.
#[derive(Debug, Args)]
pub(crate) struct McpArgs {
    /// A TOML configuration file (see docs/mcp.md).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Also write one JSON object per repaired or refused call to this file (appended).
    #[arg(long, value_name = "FILE")]
    log_file: Option<PathBuf>,
    /// Show argument values and whole refusal messages in diagnostics.
    #[arg(long)]
    verbose: bool,
    /// Turn the storm guard off.
    #[arg(long)]
    no_guard: bool,
    /// The MCP server to run, after `--`: CMD [ARGS...].
    #[arg(last = true, required = true, value_name = "CMD")]
    command: Vec<OsString>,
}

pub(crate) fn run(args: &McpArgs) -> Result<ExitCode> {
    let mut config = match &args.config {
        Some(path) => {
            let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
            Config::from_toml(&text).with_context(|| format!("in {}", path.display()))?
        }
        None => Config::default(),
    };
    if args.no_guard {
        config = config.with_guard_enabled(false);
    }
    let mut log = Log::new(args.verbose);
    if let Some(path) = &args.log_file {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .with_context(|| format!("cannot open {}", path.display()))?;
        log = log.with_file(file);
    }
    let (program, rest) = args.command.split_first().context("no server command given after --")?;
    let mut command = tokio::process::Command::new(program);
    command.args(rest);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start tokio")?;
    let result = runtime.block_on(toolfix_mcp::run(config, command, tokio::io::stdin(), tokio::io::stdout(), log));
    // A read of stdin cannot be cancelled: do not wait for it.
    runtime.shutdown_background();
    let exit = result.with_context(|| format!("cannot run {}", program.to_string_lossy()))?;
    Ok(ExitCode::from(u8::try_from(exit.code).unwrap_or(1)))
}
