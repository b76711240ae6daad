//! A fake OpenAI-compatible model server for trying the proxy without a model: it answers
//! chat completions with a Hermes-style tool call leaked into `content` (see
//! `toolfix_proxy::fake::demo`).
//!
//!     cargo run -p toolfix-proxy --example fake_upstream            # 127.0.0.1:8000
//!     cargo run -p toolfix-proxy --example fake_upstream -- 127.0.0.1:9000
//!     cargo run -p toolfix-proxy --example fake_upstream -- 127.0.0.1:9000 agents
//!
//! The second word picks the script: `demo` (default) or `agents`, the model the real
//! agent clients are tried with (`toolfix_proxy::fake::agents`, `scripts/proxy-agents.sh`).

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let addr = std::env::args().nth(1).unwrap_or_else(|| "127.0.0.1:8000".to_owned());
    let script = if std::env::args().nth(2).as_deref() == Some("agents") {
        toolfix_proxy::fake::agents
    } else {
        toolfix_proxy::fake::demo
    };
    let upstream = toolfix_proxy::fake::FakeUpstream::start(&addr, script).await?;
    println!("fake upstream on {} (Ctrl-C to stop)", upstream.url());
    tokio::signal::ctrl_c().await?;
    Ok(())
}
