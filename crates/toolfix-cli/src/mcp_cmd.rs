//! `toolfix mcp`: the transparent MCP wrapper (crate `toolfix-mcp`). The client launches
//! `toolfix mcp -- CMD ARGS` instead of `CMD ARGS`; stdout carries only protocol messages,
//! diagnostics go to stderr with the server's own.

use crate::args::McpArgs;
use anyhow::{Context, Result};
use std::process::ExitCode;
use toolfix_mcp::{Config, Log};

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
