//! `toolfix`: repair LLM tool calls from the command line.
//!
//! Every subcommand reads a file or stdin, writes JSON to stdout and diagnostics to
//! stderr. Exit codes, the same for every subcommand: 0 = done, and every call found is
//! usable (plain prose with no call is a valid answer for `extract` and `fix`); 1 = some
//! input could not be recovered, or a call was refused; 2 = usage or I/O error. `--batch`
//! switches to JSON Lines in and out (see `batch`) and exits 0 whatever the lines held. A
//! closed stdout (`toolfix ... | head`) ends the run quietly.

mod args;
mod batch;
mod check_cmd;
mod extract_cmd;
mod json_cmd;
mod mcp_cmd;
mod out;
mod repair_cmd;
mod serve_cmd;
mod tools;

use anyhow::Result;
use args::{Cli, Command};
use clap::Parser as _;
use std::process::ExitCode;

/// jemalloc with its background threads, not the system's malloc: memory freed after a
/// burst (1,000 concurrent streams through `toolfix serve`) goes back to the system within
/// jemalloc's decay time, ~10 s, even when the process then sits idle. glibc kept it in
/// per-thread arenas (~70 MiB above idle, more after each burst); mimalloc gives it back
/// only when the thread that freed it allocates again.
#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

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
