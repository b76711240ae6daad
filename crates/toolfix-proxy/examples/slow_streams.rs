//! Many slow streams through one proxy: a fake upstream that sends a token every 50 ms
//! for 30 s, `--streams` (default 1,000) clients streaming at once through it.
//!
//!     cargo run --release -p toolfix-proxy --example slow_streams -- --streams 1000
//!
//! runs upstream, proxy and clients in one process. To measure the proxy's own memory
//! (`scripts/proxy-slow-streams.sh`), run the parts apart: `--upstream-only ADDR` serves
//! the paced upstream until killed; `--proxy URL` runs the clients only, against a
//! `toolfix serve` at URL.
//!
//! Prints how many streams completed with the right text, how many failed, and the longest
//! gap between two pieces a client saw (a stalled stream shows as a long gap).

#![expect(clippy::unwrap_used, clippy::print_stdout, reason = "a benchmark program")]

use bytes::Bytes;
use futures_util::StreamExt as _;
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use toolfix_proxy::Config;
use toolfix_proxy::fake::{Canned, FakeUpstream, content_chunks, sse_events};

fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1).cloned())
}

#[tokio::main]
async fn main() {
    let streams: usize = arg("--streams").map_or(1000, |s| s.parse().unwrap());
    let seconds: u64 = arg("--seconds").map_or(30, |s| s.parse().unwrap());
    let interval = Duration::from_millis(50);
    let tokens = usize::try_from(seconds * 1000 / 50).unwrap();
    let words: Vec<String> = (0..tokens).map(|i| format!(" word{i}")).collect();
    let pieces: Vec<&str> = words.iter().map(String::as_str).collect();
    let expected: String = words.concat();
    let events: Vec<Bytes> = sse_events(&content_chunks(&pieces, "stop"));
    let paced = move |_: &toolfix_proxy::fake::Seen| Canned::SsePaced(events.clone(), interval);
    if let Some(addr) = arg("--upstream-only") {
        let upstream = FakeUpstream::start(&addr, paced.clone()).await.unwrap();
        println!("upstream on {}", upstream.url());
        std::future::pending::<()>().await;
    }
    let mut in_process = None;
    let proxy = if let Some(p) = arg("--proxy") {
        p
    } else {
        let upstream = FakeUpstream::start("127.0.0.1:0", paced).await.unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let mut config = Config::new(&upstream.url()).unwrap();
        config.listen = addr;
        tokio::spawn(toolfix_proxy::serve(listener, config, std::future::pending()));
        in_process = Some(upstream);
        format!("http://{addr}")
    };
    let request = json!({"model": "fake-model", "stream": true, "messages": [{"role": "user", "content": "go"}],
        "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object",
            "properties": {"city": {"type": "string"}}}}}]})
    .to_string();
    let client = reqwest::Client::builder().no_proxy().pool_max_idle_per_host(0).build().unwrap();
    let url = format!("{proxy}/v1/chat/completions");
    let started = Instant::now();
    let mut tasks = Vec::with_capacity(streams);
    for _ in 0..streams {
        let client = client.clone();
        let url = url.clone();
        let request = request.clone();
        tasks.push(tokio::spawn(async move {
            let r = client.post(&url).header("content-type", "application/json").body(request).send().await.ok()?;
            if !r.status().is_success() {
                return None;
            }
            let mut body = r.bytes_stream();
            let mut got = Vec::new();
            let mut last = Instant::now();
            let mut gap = Duration::ZERO;
            while let Some(piece) = body.next().await {
                got.extend_from_slice(&piece.ok()?);
                gap = gap.max(last.elapsed());
                last = Instant::now();
            }
            Some((got, gap))
        }));
    }
    let mut ok = 0usize;
    let mut failed = 0usize;
    let mut worst = Duration::ZERO;
    for t in tasks {
        match t.await.unwrap() {
            Some((body, gap)) => {
                let text = String::from_utf8_lossy(&body);
                let content: String = text
                    .split("\n\n")
                    .filter_map(|e| e.strip_prefix("data: "))
                    .filter(|d| *d != "[DONE]")
                    .filter_map(|d| serde_json::from_str::<Value>(d).ok())
                    .filter_map(|v| v["choices"][0]["delta"]["content"].as_str().map(str::to_owned))
                    .collect();
                if content == expected && text.contains("[DONE]") {
                    ok += 1;
                } else {
                    failed += 1;
                }
                worst = worst.max(gap);
            }
            None => failed += 1,
        }
    }
    println!(
        "{streams} streams of {tokens} tokens every {} ms: {ok} complete and intact, {failed} failed; longest gap between two pieces {} ms; {:.1} s in all",
        interval.as_millis(),
        worst.as_millis(),
        started.elapsed().as_secs_f64()
    );
    drop(in_process);
}
