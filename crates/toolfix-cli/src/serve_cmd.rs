//! `toolfix serve`: the repair proxy (crate `toolfix-proxy`), configured
//! from flags and an optional TOML file (flags win).

use anyhow::{Context, Result, bail};
use clap::Args;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;
use toolfix_proxy::{Config, GiveUp, LengthRecovery};

/// Flags of `toolfix serve`.
#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    /// The upstream's base URL, standing for the proxy's `/v1`
    /// (e.g. http://127.0.0.1:8000/v1); required unless the config file gives it.
    #[arg(long, value_name = "URL")]
    upstream: Option<String>,
    /// Where to listen [default: 127.0.0.1:8787].
    #[arg(long, value_name = "ADDR")]
    listen: Option<SocketAddr>,
    /// A TOML configuration file (see docs/proxy.md); flags override it.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// The key clients must send as `Authorization: Bearer KEY` (needed to listen beyond
    /// loopback).
    #[arg(long, value_name = "KEY", env = "TOOLFIX_API_KEY", hide_env_values = true)]
    api_key: Option<String>,
    /// The key sent to the upstream as `Authorization: Bearer KEY` (without it, the
    /// client's header is passed through unless --api-key is set).
    #[arg(long, value_name = "KEY", env = "TOOLFIX_UPSTREAM_API_KEY", hide_env_values = true)]
    upstream_api_key: Option<String>,
    /// Listen beyond loopback without an API key.
    #[arg(long)]
    allow_remote: bool,
    /// Corrective re-prompts per request, 0 to 5 [default: 1].
    #[arg(long, value_name = "N")]
    max_reprompts: Option<u8>,
    /// What the client gets for a call still unusable when the attempts ran out: explain
    /// (left out, the text says why) or as_sent (passed on unrepaired) [default: explain].
    #[arg(long, value_name = "MODE")]
    on_give_up: Option<String>,
    /// How a call cut off by the token limit is recovered: off, retry or continue
    /// [default: retry].
    #[arg(long, value_name = "MODE")]
    length: Option<String>,
    /// How calls written in a reply's text are taken: infer (a call the model only shows
    /// is not run), trust or never [default: infer].
    #[arg(long, value_name = "POLICY")]
    leaked_calls: Option<String>,
    /// Leave the request's history as it came (no request-side repair).
    #[arg(long)]
    no_history_repair: bool,
    /// Put the upstream's original messages into each response's `x_toolfix`.
    #[arg(long)]
    detail: bool,
    /// Seconds to wait for a whole answer (for a stream: its first event).
    #[arg(long, value_name = "SECS")]
    timeout: Option<f64>,
    /// The largest request body, in bytes [default: 16 MiB].
    #[arg(long, value_name = "BYTES")]
    body_limit: Option<usize>,
}

/// Build the configuration, bind, and serve until SIGTERM or Ctrl-C (in-flight requests
/// finish first).
pub(crate) fn run(args: ServeArgs) -> Result<ExitCode> {
    init_logging();
    let config = config(args)?;
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().context("cannot start tokio")?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(config.listen)
            .await
            .with_context(|| format!("cannot listen on {}", config.listen))?;
        let local = listener.local_addr().context("no local address")?;
        tracing::info!(listen = %local, upstream = %config.upstream, "toolfix proxy ready");
        eprintln!("toolfix: proxy on http://{local}/v1 -> {}", config.upstream);
        toolfix_proxy::serve(listener, config, shutdown_signal()).await.context("the proxy stopped")
    })?;
    Ok(ExitCode::SUCCESS)
}

fn config(args: ServeArgs) -> Result<Config> {
    let mut config = match (&args.config, &args.upstream) {
        (Some(path), upstream) => {
            let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
            let base = match upstream {
                Some(u) => Config::new(u)?.merge_toml(&text)?,
                None => Config::from_toml(&text)?,
            };
            match upstream {
                // The flag wins over the file.
                Some(u) => {
                    let mut c = base;
                    c.upstream = Config::new(u)?.upstream;
                    c
                }
                None => base,
            }
        }
        (None, Some(u)) => Config::new(u)?,
        (None, None) => bail!("--upstream URL is required (or a --config file that sets `upstream`)"),
    };
    if let Some(l) = args.listen {
        config.listen = l;
    }
    if args.api_key.is_some() {
        config.api_key = args.api_key;
    }
    if args.upstream_api_key.is_some() {
        config.upstream_api_key = args.upstream_api_key;
    }
    config.allow_remote |= args.allow_remote;
    if let Some(n) = args.max_reprompts {
        config = config.with_max_reprompts(n)?;
    }
    if let Some(mode) = args.on_give_up {
        config.on_give_up =
            GiveUp::from_name(&mode).with_context(|| format!("--on-give-up {mode}: expected explain or as_sent"))?;
    }
    if let Some(p) = args.leaked_calls {
        config.leaked_calls = toolfix::schema::LeakedCalls::from_name(&p)
            .with_context(|| format!("--leaked-calls {p}: expected infer, trust or never"))?;
    }
    if let Some(mode) = args.length {
        config.length_recovery = LengthRecovery::from_name(&mode)
            .with_context(|| format!("--length {mode}: expected off, retry or continue"))?;
    }
    if args.no_history_repair {
        config.repair_history = false;
    }
    config.detail |= args.detail;
    if let Some(t) = args.timeout {
        config.timeouts.request = Duration::try_from_secs_f64(t).context("--timeout: not a number of seconds")?;
    }
    if let Some(b) = args.body_limit {
        config.body_limit = b;
    }
    config.validate()?;
    Ok(config)
}

/// Logs to stderr; `RUST_LOG` sets the level (default `info`). Credentials, prompts and
/// arguments are not logged at any level the proxy itself emits.
fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).try_init();
}

/// SIGTERM or Ctrl-C.
async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = term => {},
    }
    tracing::info!("shutting down: finishing the requests in flight");
}
