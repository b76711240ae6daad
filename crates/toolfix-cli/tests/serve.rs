//! `toolfix serve` end to end: the binary in front of a fake upstream, driven by the
//! official OpenAI Python SDK (installed by `scripts/python-env.sh` into a virtual
//! environment under the target dir, on first use), then stopped with SIGTERM.

#![expect(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The virtual environment's python (created when missing).
fn python() -> PathBuf {
    let out = Command::new("bash")
        .arg(root().join("scripts/python-env.sh"))
        .stderr(Stdio::inherit())
        .output()
        .expect("bash runs");
    assert!(out.status.success(), "scripts/python-env.sh failed");
    PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
}

/// Start `toolfix serve` with these flags; its address, read from its first words.
fn serve(args: &[&str]) -> (std::process::Child, String) {
    let mut child =
        Command::new(env!("CARGO_BIN_EXE_toolfix")).arg("serve").args(args).stderr(Stdio::piped()).spawn().unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let addr = loop {
        let line = lines.next().expect("the proxy says where it listens").unwrap();
        if let Some(rest) = line.strip_prefix("toolfix: proxy on ") {
            break rest.split_whitespace().next().unwrap().to_owned();
        }
    };
    // Keep draining its logs.
    std::thread::spawn(move || lines.for_each(drop));
    (child, addr)
}

#[tokio::test(flavor = "multi_thread")]
async fn the_openai_sdk_gets_repaired_calls_streaming_and_not() {
    let python = tokio::task::spawn_blocking(python).await.unwrap();
    let upstream = toolfix_proxy::fake::FakeUpstream::start("127.0.0.1:0", toolfix_proxy::fake::demo).await.unwrap();
    let (mut child, base) = serve(&["--upstream", &upstream.url(), "--listen", "127.0.0.1:0"]);
    let (mut as_sent, as_sent_base) =
        serve(&["--upstream", &upstream.url(), "--listen", "127.0.0.1:0", "--on-give-up", "as_sent"]);
    let script = root().join("scripts/e2e/openai_sdk.py");
    let out = tokio::task::spawn_blocking(move || {
        Command::new(python).arg(script).arg(&base).arg(&as_sent_base).output().unwrap()
    })
    .await
    .unwrap();
    let _ = as_sent.kill();
    let _ = as_sent.wait();
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "the SDK checks failed");
    assert!(stdout.contains("all checks passed"));
    // SIGTERM: in-flight requests drain, then a clean exit.
    let killed = Command::new("kill").arg("-TERM").arg(child.id().to_string()).status().unwrap();
    assert!(killed.success());
    let status = tokio::task::spawn_blocking(move || child.wait().unwrap()).await.unwrap();
    assert!(status.success(), "{status:?}");
}

/// Run an SDK check script against `toolfix serve` in front of the demo upstream.
async fn sdk_checks(script: &str, base_suffix: &str) {
    let python = tokio::task::spawn_blocking(python).await.unwrap();
    let upstream = toolfix_proxy::fake::FakeUpstream::start("127.0.0.1:0", toolfix_proxy::fake::demo).await.unwrap();
    let (mut child, base) = serve(&["--upstream", &upstream.url(), "--listen", "127.0.0.1:0"]);
    let base = format!("{}{base_suffix}", base.trim_end_matches("/v1"));
    let script = root().join(script);
    let out = tokio::task::spawn_blocking(move || Command::new(python).arg(script).arg(&base).output().unwrap())
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}{}", String::from_utf8_lossy(&out.stderr));
    let _ = child.kill();
    let _ = child.wait();
    assert!(out.status.success(), "the SDK checks failed");
    assert!(stdout.contains("all checks passed"));
}

#[tokio::test(flavor = "multi_thread")]
async fn the_anthropic_sdk_gets_repaired_tool_use_blocks_streaming_and_not() {
    sdk_checks("scripts/e2e/anthropic_sdk.py", "").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_openai_sdk_gets_repaired_function_calls_from_responses_streaming_and_not() {
    sdk_checks("scripts/e2e/openai_responses.py", "/v1").await;
}

#[test]
fn listening_beyond_loopback_without_a_key_is_refused() {
    let out = Command::new(env!("CARGO_BIN_EXE_toolfix"))
        .args(["serve", "--upstream", "http://127.0.0.1:1/v1", "--listen", "0.0.0.0:0"])
        .env_remove("TOOLFIX_API_KEY")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--api-key"));
}
