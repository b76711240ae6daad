//! Added latency per `tools/call` round trip: wrapper versus direct, over pipes.
//!
//! ```text
//! cargo build --release -p toolfix-cli -p toolfix-mcp --example latency
//! target/release/examples/latency                              # wrapper = toolfix_mcp::run in this binary
//! target/release/examples/latency --wrapper target/release/toolfix   # the real `toolfix mcp`
//! target/release/examples/latency --calls 5000 --repair        # calls that need a repair
//! ```
//!
//! The server is this binary in another role: a minimal line server that answers
//! `tools/list` with one tool and every `tools/call` with a short text result. The client
//! sends one call, waits for its answer, and repeats; the figures are round-trip
//! percentiles of both setups and their difference.

#![expect(clippy::unwrap_used, clippy::expect_used, reason = "benchmark program")]

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

const ROLE: &str = "TOOLFIX_MCP_BENCH_ROLE";

fn main() {
    match std::env::var(ROLE).as_deref() {
        Ok("server") => server(),
        Ok("wrapper") => wrapper(),
        _ => bench(),
    }
}

fn server() {
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    for line in stdin.lock().lines() {
        let line = line.unwrap();
        let Ok(msg) = serde_json::from_str::<serde_json::Value>(&line) else { continue };
        let id = &msg["id"];
        let answer = match msg["method"].as_str() {
            Some("tools/list") => serde_json::json!({"jsonrpc": "2.0", "id": id, "result": {"tools": [{
                "name": "search", "annotations": {"readOnlyHint": true},
                "inputSchema": {"type": "object", "properties": {
                    "query": {"type": "string"}, "limit": {"type": "integer", "minimum": 1},
                    "tags": {"type": "array", "items": {"type": "string"}},
                    "mode": {"type": "string", "enum": ["fast", "full"]}},
                    "required": ["query"], "additionalProperties": false}}]}}),
            Some(_) => {
                serde_json::json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": "ok"}]}})
            }
            None => continue,
        };
        writeln!(out, "{answer}").unwrap();
        out.flush().unwrap();
    }
}

fn wrapper() {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let mut server = tokio::process::Command::new(std::env::current_exe().unwrap());
    server.env(ROLE, "server");
    let config = toolfix_mcp::Config::default();
    let exit = runtime
        .block_on(toolfix_mcp::run(
            config,
            server,
            tokio::io::stdin(),
            tokio::io::stdout(),
            toolfix_mcp::Log::new(false),
        ))
        .unwrap();
    runtime.shutdown_background();
    std::process::exit(exit.code);
}

struct Peer {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    line: String,
}

impl Peer {
    fn spawn(mut command: Command) -> Peer {
        let mut child = command.stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Peer { child, stdin, stdout, line: String::new() }
    }

    fn round_trip(&mut self, request: &str) -> Duration {
        let start = Instant::now();
        self.stdin.write_all(request.as_bytes()).unwrap();
        self.stdin.flush().unwrap();
        self.line.clear();
        self.stdout.read_line(&mut self.line).unwrap();
        let took = start.elapsed();
        assert!(self.line.contains("\"result\""), "unexpected answer: {}", self.line);
        took
    }
}

fn run(command: Command, calls: usize, repair: bool) -> Vec<Duration> {
    let mut peer = Peer::spawn(command);
    peer.round_trip("{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"tools/list\"}\n");
    let arguments = if repair {
        r#"{"query":"rust mcp wrapper","limit":"5","tags":"[\"a\",\"b\"]","mode":"Fast"}"#
    } else {
        r#"{"query":"rust mcp wrapper","limit":5,"tags":["a","b"],"mode":"fast"}"#
    };
    let mut times = Vec::with_capacity(calls);
    for n in 0..calls + 200 {
        let request = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"tools/call\",\"params\":{{\"name\":\"search\",\"arguments\":{arguments}}}}}\n",
            n + 1
        );
        let took = peer.round_trip(&request);
        if n >= 200 {
            times.push(took);
        }
    }
    drop(peer.stdin);
    peer.child.wait().unwrap();
    times.sort_unstable();
    times
}

/// The `permille`-th per-mille of sorted durations, in milliseconds.
fn pct(sorted: &[Duration], permille: usize) -> f64 {
    let i = sorted.len().saturating_sub(1) * permille / 1000;
    sorted.get(i).map_or(0.0, |d| d.as_secs_f64() * 1e3)
}

fn bench() {
    let mut args = std::env::args().skip(1);
    let mut wrapper_bin: Option<String> = None;
    let mut calls = 3000;
    let mut repair = false;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--wrapper" => wrapper_bin = args.next(),
            "--calls" => calls = args.next().and_then(|n| n.parse().ok()).expect("--calls N"),
            "--repair" => repair = true,
            other => {
                eprintln!("unknown argument {other}; usage: latency [--wrapper PATH] [--calls N] [--repair]");
                std::process::exit(2);
            }
        }
    }
    let me = std::env::current_exe().unwrap();
    let mut direct = Command::new(&me);
    direct.env(ROLE, "server");
    let wrapped = if let Some(bin) = &wrapper_bin {
        let mut c = Command::new(bin);
        c.arg("mcp").arg("--").arg(&me).env(ROLE, "server");
        c
    } else {
        let mut c = Command::new(&me);
        c.env(ROLE, "wrapper");
        c
    };
    let direct = run(direct, calls, repair);
    let wrapped = run(wrapped, calls, repair);
    println!(
        "{calls} tools/call round trips ({} arguments), wrapper: {}",
        if repair { "repaired" } else { "valid" },
        wrapper_bin.as_deref().unwrap_or("toolfix_mcp::run in-process")
    );
    println!("{:>8} {:>10} {:>10} {:>10}", "", "direct ms", "wrapped ms", "added ms");
    for (name, p) in [("p50", 500), ("p90", 900), ("p99", 990), ("max", 1000)] {
        let (d, w) = (pct(&direct, p), pct(&wrapped, p));
        println!("{name:>8} {d:>10.3} {w:>10.3} {:>10.3}", w - d);
    }
}
