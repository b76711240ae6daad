#![expect(clippy::unwrap_used, reason = "tests")]
//! `toolfix mcp` through the real binary: flags, exit codes and the fault paths. The
//! protocol itself is tested end to end with rmcp in `crates/toolfix-mcp/tests/rmcp.rs`.

use assert_cmd::Command;

fn toolfix() -> Command {
    Command::cargo_bin("toolfix").unwrap()
}

#[test]
fn without_a_server_command_it_is_a_usage_error() {
    toolfix().arg("mcp").assert().code(2);
}

#[test]
fn a_server_that_ends_with_its_input_ends_the_session_cleanly() {
    let line = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n";
    let out = toolfix().args(["mcp", "--", "cat"]).write_stdin(line).assert().code(0);
    // `cat` echoes the notification: relayed as it came.
    assert_eq!(String::from_utf8_lossy(&out.get_output().stdout), line);
}

#[test]
fn a_server_that_dies_leaves_no_request_unanswered_and_a_non_zero_exit() {
    let out = toolfix()
        .args(["mcp", "--", "sh", "-c", "read line; exit 5"])
        .write_stdin("{\"jsonrpc\":\"2.0\",\"id\":\"r1\",\"method\":\"ping\"}\n")
        .assert()
        .code(5);
    let stdout = String::from_utf8_lossy(&out.get_output().stdout);
    let answer: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(answer["id"], "r1");
    assert_eq!(answer["error"]["code"], -32603);
}

#[test]
fn a_missing_server_program_is_reported() {
    let out = toolfix().args(["mcp", "--", "/nonexistent/toolfix-test-server"]).assert().code(2);
    assert!(String::from_utf8_lossy(&out.get_output().stderr).contains("cannot start the MCP server"));
}

#[test]
fn a_bad_config_file_is_reported() {
    let dir = tempfile::Builder::new().prefix("toolfix-mcp-cli-").tempdir().unwrap();
    let config = dir.path().join("mcp.toml");
    std::fs::write(&config, "max_mesage_bytes = 3\n").unwrap();
    let out = toolfix().args(["mcp", "--config"]).arg(&config).args(["--", "cat"]).assert().code(2);
    assert!(String::from_utf8_lossy(&out.get_output().stderr).contains("max_mesage_bytes"));
}
