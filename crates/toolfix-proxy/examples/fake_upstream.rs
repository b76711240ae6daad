//! A fake OpenAI-compatible model server for trying the proxy without a model: it answers
//! chat completions with a Hermes-style tool call leaked into `content` (see
//! `toolfix_proxy::fake::demo`).
//!
//!     cargo run -p toolfix-proxy --example fake_upstream            # 127.0.0.1:8000
//!     cargo run -p toolfix-proxy --example fake_upstream -- 127.0.0.1:9000

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let addr = std::env::args().nth(1).unwrap_or_else(|| "127.0.0.1:8000".to_owned());
    let upstream = toolfix_proxy::fake::FakeUpstream::start(&addr, toolfix_proxy::fake::demo).await?;
    println!("fake upstream on {} (Ctrl-C to stop)", upstream.url());
    tokio::signal::ctrl_c().await?;
    Ok(())
}
