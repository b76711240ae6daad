//! Load benchmark over loopback: the same chat completion straight to a fake upstream and
//! through the proxy, at concurrency 1 and 32. The answer is 4 KB of prose with one server
//! call whose arguments need a repair (`"days": "3"` for an integer), so the proxy does
//! its whole job on every request (parse, fix, re-serialise).
//!
//!     cargo run --release -p toolfix-proxy --example load
//!     cargo run --release -p toolfix-proxy --example load -- --requests 4000 --rounds 3
//!     cargo run --release -p toolfix-proxy --example load -- --api messages   # or responses
//!
//! Prints, per concurrency, p50 and p99 latency direct and through the proxy, the added
//! latency (proxy minus direct, at the same percentile) and the throughput ratio.
//!
//! `--only direct|passthrough|proxy --requests N` sends N requests one way and nothing
//! else: for counting instructions with callgrind (`scripts/proxy-instructions.sh`);
//! `passthrough` goes through the proxy without tools (the second HTTP hop alone).
//! `--answer untouched` makes the server call valid (`"days": 3`): the proxy then has
//! nothing to change and answers with the upstream's bytes.

#![expect(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout, reason = "a benchmark program")]
#![expect(clippy::cast_sign_loss, reason = "percentiles are positive")]

use serde_json::json;
use std::time::{Duration, Instant};
use toolfix_proxy::Config;
use toolfix_proxy::fake::{Canned, FakeUpstream, completion};

/// The allocator `toolfix serve` ships with (jemalloc; see the CLI's `main.rs`), so the
/// figures are those of the binary users run, not of the system's malloc.
#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// The API spoken: `chat` (Chat Completions), `messages` (Anthropic), `responses`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Api {
    Chat,
    Messages,
    Responses,
}

impl Api {
    fn path(self) -> &'static str {
        match self {
            Api::Chat => "chat/completions",
            Api::Messages => "messages",
            Api::Responses => "responses",
        }
    }
}

/// The 4 KB answer in the API's shape: prose and one server call, valid (`untouched`) or
/// with `days` as a string.
fn answer(api: Api, untouched: bool) -> Canned {
    let prose = "The forecast service covers every city on the list. ".repeat(70);
    let prose = prose.trim_end();
    let arguments =
        if untouched { "{\"city\": \"Paris\", \"days\": 3}" } else { "{\"city\": \"Paris\", \"days\": \"3\"}" };
    let body = match api {
        Api::Chat => {
            let message = json!({"role": "assistant", "content": prose, "tool_calls": [
                {"id": "call_1", "type": "function",
                 "function": {"name": "get_weather", "arguments": arguments}}]});
            completion(&message, "tool_calls")
        }
        Api::Messages => {
            let input: serde_json::Value = serde_json::from_str(arguments).unwrap();
            json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "fake-model",
                   "content": [{"type": "text", "text": prose},
                               {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": input}],
                   "stop_reason": "tool_use", "stop_sequence": null, "usage": {"input_tokens": 10, "output_tokens": 20}})
        }
        Api::Responses => json!({"id": "resp_1", "object": "response", "created_at": 1, "status": "completed",
            "model": "fake-model", "output": [
                {"type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
                 "content": [{"type": "output_text", "text": prose, "annotations": []}]},
                {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "get_weather",
                 "arguments": arguments, "status": "completed"}],
            "usage": {"input_tokens": 10, "output_tokens": 20, "total_tokens": 30}}),
    };
    let text = body.to_string();
    assert!((3900..4700).contains(&text.len()), "answer is {} bytes", text.len());
    Canned::json(&body)
}

fn request(api: Api) -> Vec<u8> {
    let schema = json!({"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                        "required": ["city"]});
    let ask = json!([{"role": "user", "content": "Weather in Paris for 3 days?"}]);
    match api {
        Api::Chat => json!({"model": "fake-model", "messages": ask,
            "tools": [{"type": "function", "function": {"name": "get_weather", "description": "Forecast", "parameters": schema}}]}),
        Api::Messages => json!({"model": "fake-model", "max_tokens": 1024, "messages": ask,
            "tools": [{"name": "get_weather", "description": "Forecast", "input_schema": schema}]}),
        Api::Responses => json!({"model": "fake-model", "input": ask,
            "tools": [{"type": "function", "name": "get_weather", "description": "Forecast", "parameters": schema}]}),
    }
    .to_string()
    .into_bytes()
}

struct Run {
    latencies: Vec<Duration>,
    elapsed: Duration,
}

impl Run {
    fn pct(&self, p: f64) -> Duration {
        let mut l = self.latencies.clone();
        l.sort_unstable();
        let i = (l.len().saturating_sub(1) * (p * 1000.0) as usize).div_ceil(1000);
        l.get(i).copied().unwrap_or_default()
    }

    fn rps(&self) -> f64 {
        self.latencies.len() as f64 / self.elapsed.as_secs_f64()
    }
}

async fn run(client: &reqwest::Client, url: &str, body: &[u8], requests: usize, concurrency: usize) -> Run {
    let per = requests / concurrency;
    let started = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..concurrency {
        let client = client.clone();
        let url = url.to_owned();
        let body = body.to_vec();
        tasks.push(tokio::spawn(async move {
            let mut out = Vec::with_capacity(per);
            for _ in 0..per {
                let t = Instant::now();
                let r = client.post(&url).header("content-type", "application/json").body(body.clone()).send().await;
                let r = r.expect("request");
                assert!(r.status().is_success());
                let bytes = r.bytes().await.expect("body");
                assert!(bytes.len() > 3800);
                out.push(t.elapsed());
            }
            out
        }));
    }
    let mut latencies = Vec::with_capacity(requests);
    for t in tasks {
        latencies.extend(t.await.unwrap());
    }
    Run { latencies, elapsed: started.elapsed() }
}

fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1).cloned())
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

#[tokio::main]
async fn main() {
    let requests: usize = arg("--requests").map_or(4000, |r| r.parse().unwrap());
    let rounds: usize = arg("--rounds").map_or(3, |r| r.parse().unwrap());
    let untouched = arg("--answer").is_some_and(|a| a == "untouched");
    let api = match arg("--api").as_deref() {
        Some("messages") => Api::Messages,
        Some("responses") => Api::Responses,
        _ => Api::Chat,
    };
    let canned = answer(api, untouched);
    let upstream = FakeUpstream::start("127.0.0.1:0", move |_| canned.clone()).await.unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let proxy = listener.local_addr().unwrap();
    let mut config = Config::new(&upstream.url()).unwrap();
    config.listen = proxy;
    tokio::spawn(toolfix_proxy::serve(listener, config, std::future::pending()));
    let client = reqwest::Client::builder().no_proxy().pool_max_idle_per_host(64).build().unwrap();
    let direct = format!("{}/{}", upstream.url(), api.path());
    let through = format!("http://{proxy}/v1/{}", api.path());
    let body = request(api);
    // Check the proxy does its job.
    let r = client.post(&through).body(body.clone()).send().await.unwrap().bytes().await.unwrap();
    let r: serde_json::Value = serde_json::from_slice(&r).unwrap();
    let arguments = match api {
        Api::Chat => r["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"].clone(),
        Api::Messages => json!(r["content"][1]["input"].to_string()),
        Api::Responses => r["output"][1]["arguments"].clone(),
    };
    let want =
        if api == Api::Messages { "{\"city\":\"Paris\",\"days\":3}" } else { "{\"city\": \"Paris\", \"days\": 3}" };
    assert_eq!(arguments, want, "{r}");

    if let Some(only) = arg("--only") {
        let url = if only == "direct" { &direct } else { &through };
        // `passthrough`: through the proxy without tools (nothing to fix: the request and
        // the answer pass as bytes), the cost of the second HTTP hop alone.
        let body = if only == "passthrough" {
            let mut v: serde_json::Value = serde_json::from_slice(&body).unwrap();
            v.as_object_mut().unwrap().remove("tools");
            v.to_string().into_bytes()
        } else {
            body.clone()
        };
        let r = run(&client, url, &body, requests, 1).await;
        println!("{only}: {} requests, p50 {:.0} us", r.latencies.len(), us(r.pct(0.5)));
        return;
    }

    for concurrency in [1usize, 32] {
        let n = requests.div_ceil(concurrency) * concurrency;
        // Warm both paths (connections, caches).
        run(&client, &direct, &body, n / 4, concurrency).await;
        run(&client, &through, &body, n / 4, concurrency).await;
        for round in 1..=rounds {
            let d = run(&client, &direct, &body, n, concurrency).await;
            let p = run(&client, &through, &body, n, concurrency).await;
            println!(
                "c={concurrency:<2} round {round}: direct p50 {:>6.0} us p99 {:>6.0} us {:>7.0} rps | proxy p50 {:>6.0} us p99 {:>6.0} us {:>7.0} rps | added p50 {:>5.0} us p99 {:>5.0} us | throughput {:.2}x",
                us(d.pct(0.5)),
                us(d.pct(0.99)),
                d.rps(),
                us(p.pct(0.5)),
                us(p.pct(0.99)),
                p.rps(),
                us(p.pct(0.5)) - us(d.pct(0.5)),
                us(p.pct(0.99)) - us(d.pct(0.99)),
                p.rps() / d.rps(),
            );
        }
    }
}
