#![expect(clippy::unwrap_used, reason = "tests")]
//! The CLI as a Unix tool: streamed batches (a co-process), error lines for unreadable
//! lines, a closed stdout, one exit-code table, `--message`, `--think`.

use assert_cmd::Command;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::Stdio;
use std::sync::mpsc;
use std::time::Duration;

fn toolfix() -> Command {
    Command::cargo_bin("toolfix").unwrap()
}

fn bin() -> std::path::PathBuf {
    assert_cmd::cargo::cargo_bin("toolfix")
}

fn examples(name: &str) -> String {
    format!("{}/../../examples/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn stdout(out: &assert_cmd::assert::Assert) -> String {
    String::from_utf8_lossy(&out.get_output().stdout).into_owned()
}

/// A file in a fresh temporary directory (removed with the directory when dropped).
fn temp_file(name: &str, bytes: &[u8]) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::Builder::new().prefix("toolfix-unix-").tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).unwrap();
    (dir, path)
}

#[test]
fn batch_is_a_co_process_answering_each_line_before_the_next_is_sent() {
    for args in [
        vec!["json", "--batch"],
        vec!["repair", "--batch", "--tools", &examples("tools.json")],
        vec!["fix", "--batch", "--tools", &examples("tools.json")],
        vec!["extract", "--batch"],
    ] {
        let mut child = std::process::Command::new(bin())
            .args(&args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let (tx, rx) = mpsc::channel();
        let mut reader = BufReader::new(child.stdout.take().unwrap());
        std::thread::spawn(move || {
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 {
                    break;
                }
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        // Each request is sent only after the answer to the previous one arrived, stdin
        // still open: a driver that read all of stdin first, or kept answers in a buffer,
        // would never answer.
        for i in 0..3 {
            let request = match args[0] {
                "json" => format!("{{\"id\":{i},\"input\":\"{{'a': {i},}}\"}}\n"),
                "repair" => format!("{{\"id\":{i},\"tool\":\"read_file\",\"arguments\":{{\"path\":\"a{i}\"}}}}\n"),
                _ => format!(
                    "{{\"id\":{i},\"content\":\"<tool_call>{{\\\"name\\\":\\\"read_file\\\",\\\"arguments\\\":{{\\\"path\\\":\\\"f{i}\\\"}}}}</tool_call>\"}}\n"
                ),
            };
            stdin.write_all(request.as_bytes()).unwrap();
            stdin.flush().unwrap();
            let answer = rx.recv_timeout(Duration::from_secs(20)).expect("an answer while stdin is still open");
            assert!(answer.starts_with(&format!("{{\"id\":{i},")), "{args:?}: {answer}");
            assert!(!answer.contains("\"error\""), "{args:?}: {answer}");
        }
        drop(stdin);
        assert!(child.wait().unwrap().success(), "{args:?}");
    }
}

#[test]
fn batch_answers_unreadable_lines_with_their_number_and_goes_on() {
    let mut input = Vec::new();
    input.extend_from_slice(b"{\"id\":1,\"input\":\"[1,\"}\n");
    input.extend_from_slice(b"\n   \n");
    input.extend_from_slice(b"{\"id\":2,\"input\":\"caf\xe9\"}\n");
    input.extend_from_slice(b"not json\n");
    input.extend_from_slice(b"[1, 2]\n");
    input.extend_from_slice(b"{\"id\":3,\"input\":\"{'b': 2}\"}\r\n");
    input.extend_from_slice(b"{\"id\":4,\"input\":5}\n");
    input.extend_from_slice(b"{\"id\":5,\"input\":\"{}\"");
    let out = toolfix().args(["json", "--batch"]).write_stdin(input).assert().code(0);
    insta::assert_snapshot!(stdout(&out));
}

#[test]
fn batch_line_over_the_limit_gets_an_error_line_and_the_batch_goes_on() {
    let long = format!("{{\"id\":1,\"input\":\"{}\"}}\n{{\"id\":2,\"input\":\"[1\"}}\n", "x".repeat(2 << 20));
    let out = toolfix().args(["json", "--batch", "--max-input-bytes", "1000"]).write_stdin(long).assert().code(0);
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text:.300}");
    assert!(lines[0].starts_with("{\"id\":null,\"line\":1,\"error\":\"line 1 is too large"), "{}", lines[0]);
    assert_eq!(
        lines[1],
        "{\"id\":2,\"output\":[1],\"fixes\":[{\"kind\":\"uncertain_number\",\"span\":[1,2]},{\"kind\":\"truncated_container\",\"span\":[2,2]}]}"
    );
}

#[test]
fn every_batch_subcommand_answers_a_bad_line_and_exits_0() {
    let bad = b"\xff\xfe\n{oops\n".to_vec();
    for args in [vec!["json", "--batch"], vec!["repair", "--batch"], vec!["extract", "--batch"], vec!["fix", "--batch"]]
    {
        let out = toolfix().args(&args).write_stdin(bad.clone()).assert().code(0);
        let text = stdout(&out);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "{args:?}: {text}");
        assert!(lines[0].contains("\"line\":1") && lines[0].contains("not valid UTF-8"), "{args:?}: {text}");
        assert!(lines[1].contains("\"line\":2") && lines[1].contains("not a"), "{args:?}: {text}");
    }
}

/// Run `args` on `input` with stdout closed before anything is written: the run ends
/// quietly (no panic, nothing on stderr) with exit code 0.
fn closed_stdout(args: &[&str], input: &[u8]) {
    let mut child = std::process::Command::new(bin())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let mut stdin = child.stdin.take().unwrap();
    let _ = stdin.write_all(input);
    drop(stdin);
    let mut stderr = String::new();
    child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    let status = child.wait().unwrap();
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    assert_eq!(status.code(), Some(0), "{args:?}: {stderr}");
    assert!(stderr.is_empty(), "{args:?}: {stderr}");
}

#[test]
fn a_closed_stdout_ends_every_subcommand_quietly() {
    let tools = examples("tools.json");
    let call = b"<tool_call>{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}</tool_call>";
    closed_stdout(&["json"], b"{'a': 1}");
    closed_stdout(&["repair", "--tools", &tools, "--tool", "read_file"], b"{\"path\": \"a\"}");
    closed_stdout(&["extract"], call);
    closed_stdout(&["fix", "--tools", &tools], call);
    closed_stdout(&["check", "--tools", &tools], b"");
    let lines = "{\"id\":1,\"input\":\"{'a': 1}\"}\n".repeat(10_000);
    closed_stdout(&["json", "--batch"], lines.as_bytes());
    closed_stdout(&["fix", "--batch"], "{\"id\":1,\"content\":\"hi\"}\n".repeat(10_000).as_bytes());
}

#[test]
fn fix_piped_into_head_ends_quietly() {
    let big = format!(
        "{}<tool_call>{{\"name\": \"read_file\", \"arguments\": {{\"path\": \"a\"}}}}</tool_call>",
        "prose ".repeat(40_000)
    );
    let (_dir, file) = temp_file("big.txt", big.as_bytes());
    let script = format!("set -o pipefail; '{}' fix '{}' | head -c 5", bin().display(), file.display());
    let out = std::process::Command::new("bash").args(["-c", &script]).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "{\"too");
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success());
}

#[test]
fn exit_codes_follow_one_table() {
    let tools = examples("tools.json");
    // 0: done and every call usable; prose alone is a valid answer.
    toolfix().arg("extract").write_stdin("just prose").assert().code(0);
    toolfix().args(["fix", "--tools", &tools]).write_stdin("just prose").assert().code(0);
    toolfix()
        .args(["fix", "--tools", &tools])
        .write_stdin(
            "<tool_call>{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\", \"limit\": \"5\"}}</tool_call>",
        )
        .assert()
        .code(0);
    toolfix().args(["json"]).write_stdin("{'a': 1}").assert().code(0);
    // 1: input not recovered, or a call refused.
    toolfix().args(["json"]).write_stdin("no json here").assert().code(1);
    toolfix()
        .args(["fix", "--tools", &tools])
        .write_stdin("<tool_call>{\"name\": \"read_file\", \"arguments\": {\"offset\": 3}}</tool_call>")
        .assert()
        .code(1);
    toolfix()
        .args(["fix", "--tools", &tools])
        .write_stdin("<tool_call>{\"name\": \"no_such_tool\", \"arguments\": {}}</tool_call>")
        .assert()
        .code(1);
    toolfix()
        .args(["repair", "--tools", &tools, "--tool", "read_file"])
        .write_stdin("{\"offset\": 3}")
        .assert()
        .code(1);
    toolfix().args(["json", "--max-input-bytes", "4"]).write_stdin("[1, 2, 3]").assert().code(1);
    // 2: usage or I/O error.
    toolfix().args(["json", "--no-such-flag"]).assert().code(2);
    toolfix().args(["json", "/no/such/file"]).assert().code(2);
    toolfix().args(["fix", "--tools", "/no/such/tools.json"]).write_stdin("x").assert().code(2);
    toolfix().args(["json"]).write_stdin(b"\xff\xfe".to_vec()).assert().code(2);
    toolfix().args(["check", "--tools", "/no/such/tools.json"]).assert().code(2);
    // Batch: 0 whatever the lines held.
    toolfix().args(["json", "--batch"]).write_stdin("no\n{\"input\":\"nothing\"}\n").assert().code(0);
}

#[test]
fn fix_reads_a_whole_message_or_response() {
    let tools = examples("tools.json");
    let message = r#"{"role": "assistant", "content": "Looking.<tool_call>{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.txt\"}}</tool_call>"}"#;
    let out = toolfix().args(["fix", "--message", "--tools", &tools]).write_stdin(message).assert().code(0);
    let text = stdout(&out);
    assert!(
        text.contains("\"arguments\":{\"path\": \"a.txt\"}") && text.contains("\"content\":\"Looking.\""),
        "{text}"
    );

    // A response's `finish_reason` comes along: a cut call whose text stopped inside a
    // value is refused either way (the `length` rule itself: see below).
    let response = r#"{"id": "chatcmpl-1", "object": "chat.completion", "choices": [{"index": 0, "finish_reason": "length",
        "message": {"role": "assistant", "content": "On it.", "tool_calls": [{"id": "call_1", "type": "function",
        "function": {"name": "create_ticket", "arguments": "{\"ticketTitle\": \"Login fa"}}]}}]}"#;
    let out = toolfix().args(["fix", "--message", "--tools", &tools]).write_stdin(response).assert().code(1);
    let text = stdout(&out);
    assert!(text.contains("\"id\":\"call_1\"") && text.contains("\"status\":\"refused\""), "{text}");
    assert!(text.contains("\"content\":\"On it.\""), "{text}");

    // Not a message: exit 1 with a message on stderr.
    let out = toolfix().args(["fix", "--message"]).write_stdin("plain text").assert().code(1);
    assert!(String::from_utf8_lossy(&out.get_output().stderr).contains("--message"));
    toolfix().args(["fix", "--message", "--batch"]).write_stdin("").assert().code(2);
}

#[test]
fn extract_reads_a_whole_message() {
    let message = r#"{"role": "assistant", "content": "Hi", "reasoning_content": "<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>"}"#;
    let out = toolfix().args(["extract", "--message"]).write_stdin(message).assert().code(0);
    let text = stdout(&out);
    assert!(text.contains("\"name\":\"f\"") && text.contains("\"content\":\"Hi\""), "{text}");
}

/// A call cut off inside a value is shown closed but marked `"cut": true`, and `extract`
/// exits 1 (issue 24 §3); a call whose closers only are missing is not marked.
#[test]
fn extract_marks_a_cut_call() {
    for cut in [
        "<tool_call>{\"name\": \"f\", \"arguments\": {\"arg1\":",
        "<tool_call>\n<function=f>\n<parameter=title>\nLogin fa",
        "<|tool_call>call:f{title:<|\"|>Login fa",
    ] {
        let out = toolfix().arg("extract").write_stdin(cut).assert().code(1);
        assert!(stdout(&out).contains("\"cut\":true"), "{cut}: {}", stdout(&out));
    }
    let closed = "<tool_call>\n<function=f>\n<parameter=title>Login</parameter>\n";
    let out = toolfix().arg("extract").write_stdin(closed).assert().code(0);
    assert!(!stdout(&out).contains("\"cut\""), "{}", stdout(&out));
}

#[test]
fn think_blocks_are_kept_stripped_or_moved() {
    let reply = "<think>Read it first.</think>Reading.<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>";
    let mut seen = Vec::new();
    for think in ["keep", "strip", "move"] {
        let out = toolfix().args(["extract", "--think", think]).write_stdin(reply).assert().code(0);
        seen.push(format!("--think {think}: {}", stdout(&out)));
    }
    insta::assert_snapshot!(seen.join(""));
}

#[test]
fn fix_refuses_unclosed_calls_when_the_output_hit_the_token_limit() {
    let tools = examples("tools.json");
    // A response cut by the token limit: the unclosed call to a tool that may change
    // things is refused, not closed.
    let response = r#"{"id": "chatcmpl-1", "object": "chat.completion", "choices": [{"index": 0, "finish_reason": "length",
        "message": {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function",
        "function": {"name": "create_ticket", "arguments": "{\"ticketTitle\": \"Login fails\", \"priority\": \"high\""}}]}}]}"#;
    let out = toolfix().args(["fix", "--message", "--tools", &tools]).write_stdin(response).assert().code(1);
    let text = stdout(&out);
    assert!(text.contains("\"status\":\"refused\""), "{text}");
    // The same text without the token limit is closed and accepted.
    let stopped = response.replace("\"length\"", "\"tool_calls\"");
    let out = toolfix().args(["fix", "--message", "--tools", &tools]).write_stdin(stopped).assert().code(0);
    assert!(stdout(&out).contains("\"status\":\"repaired\""), "{}", stdout(&out));
    // `--hit-token-limit` says the same for plain text.
    let cut = "<tool_call>{\"name\": \"create_ticket\", \"arguments\": {\"ticketTitle\": \"Login fails\", \"priority\": \"high\"";
    toolfix().args(["fix", "--tools", &tools]).write_stdin(cut).assert().code(0);
    let out = toolfix().args(["fix", "--hit-token-limit", "--tools", &tools]).write_stdin(cut).assert().code(1);
    assert!(stdout(&out).contains("\"status\":\"refused\""), "{}", stdout(&out));
}

#[test]
fn harmony_markup_is_not_left_in_prose() {
    for reply in [
        "<|start|>assistant<|channel|>analysis<|message|>Need the file.<|end|><|start|>assistant<|channel|>commentary to=functions.read_file <|constrain|>json<|message|>{\"path\": \"a\"}<|call|>",
        "<|channel|>analysis<|message|>Need the file.<|end|><|start|>assistant<|channel|>final<|message|>It is there.<|return|>",
        "<|start|>assistant<|channel|>analysis<|message|>Think.<|end|><|start|>assistant<|channel|>commentary to=functions.f <|constrain|>json<|message|>{\"a\": 1}<|call|><|start|>assistant<|channel|>final<|message|>Done.<|return|>",
        "<|start|>assistant<|channel|>final<|message|>Hi there.<|end|>",
        "<|start|>assistant<|channel|>commentary<|message|>Checking.<|end|><|start|>assistant<|channel|>commentary to=functions.f<|message|>{\"a\": 1}<|call|>",
    ] {
        let out = toolfix().arg("extract").write_stdin(reply).assert().code(0);
        let answer: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
        let content = answer["content"].as_str().unwrap();
        let reasoning = answer["reasoning_content"].as_str().unwrap_or("");
        assert!(!content.contains("<|") && !content.contains("assistant"), "{reply}: {answer}");
        assert!(!reasoning.contains("<|"), "{reply}: {answer}");
    }
}

/// A small deterministic generator (xorshift), so a failure can be replayed.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        usize::try_from(self.0 % n as u64).unwrap()
    }
}

/// The lines the batch driver answers: split on `\n`, a final `\r` dropped, blank ones
/// (ASCII whitespace only) skipped.
fn answered_lines(input: &[u8]) -> usize {
    let mut lines: Vec<&[u8]> = input.split(|&b| b == b'\n').collect();
    if input.ends_with(b"\n") {
        lines.pop();
    }
    lines.iter().filter(|l| !l.iter().all(u8::is_ascii_whitespace)).count()
}

#[test]
fn mutated_json_lines_never_crash_hang_or_go_unanswered() {
    let seeds: Vec<Vec<u8>> = ["json.jsonl", "repair.jsonl", "extract.jsonl"]
        .iter()
        .flat_map(|f| {
            std::fs::read(examples(f)).unwrap().split(|&b| b == b'\n').map(<[u8]>::to_vec).collect::<Vec<_>>()
        })
        .filter(|l| !l.is_empty())
        .collect();
    let noise: [&[u8]; 9] = [b"\xff", b"\xc3", b"\x00", b"\"", b"{", b"}", b"\\", b"\r", b"\xe2\x80\xa8"];
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut input = Vec::new();
    for _ in 0..400 {
        let mut line = seeds[rng.below(seeds.len())].clone();
        for _ in 0..=rng.below(4) {
            let at = rng.below(line.len() + 1);
            match rng.below(4) {
                0 => line.truncate(at),
                1 => {
                    let n = noise[rng.below(noise.len())];
                    line.splice(at..at, n.iter().copied());
                }
                2 if at < line.len() => line[at] ^= 1 << rng.below(8),
                _ => {
                    let end = (at + rng.below(8)).min(line.len());
                    line.drain(at..end);
                }
            }
        }
        input.extend_from_slice(&line);
        input.push(b'\n');
    }
    let expected = answered_lines(&input);
    let tools = examples("tools.json");
    for args in [
        vec!["json", "--batch"],
        vec!["repair", "--batch", "--tools", &tools],
        vec!["extract", "--batch", "--tools", &tools],
        vec!["fix", "--batch", "--tools", &tools],
    ] {
        let out = toolfix().args(&args).write_stdin(input.clone()).timeout(Duration::from_secs(60)).assert().code(0);
        let text = stdout(&out);
        assert_eq!(text.lines().count(), expected, "{args:?}");
        for line in text.lines() {
            let answer: serde_json::Value =
                serde_json::from_str(line).unwrap_or_else(|e| panic!("{args:?}: {e}: {line}"));
            assert!(answer.get("id").is_some(), "{args:?}: {line}");
        }
        assert!(!String::from_utf8_lossy(&out.get_output().stderr).contains("panicked"), "{args:?}");
    }
}

#[test]
fn repair_refuses_unclosed_arguments_when_the_output_hit_the_token_limit() {
    let tools = examples("tools.json");
    // Only the last brace is missing: closed and accepted, unless the output hit the limit.
    let unclosed = r#"{"ticketTitle": "Login fails", "priority": "high""#;
    let args = ["repair", "--tools", tools.as_str(), "--tool", "create_ticket"];
    toolfix().args(args).write_stdin(unclosed).assert().code(0);
    let out = toolfix().args(args).arg("--hit-token-limit").write_stdin(unclosed).assert().code(1);
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(err.contains("cut off"), "{err}");
    // A number at the cut is never kept, limit or not: `50` may have been `500`.
    let cut = r#"{"from_account": "A-7", "to_account": "B-2", "amount_cents": 50"#;
    let args = ["repair", "--tools", tools.as_str(), "--tool", "transfer_money"];
    toolfix().args(args).write_stdin(cut).assert().code(1);
    // In a batch the flag holds for every line.
    let line = format!("{{\"id\": 1, \"tool\": \"create_ticket\", \"arguments\": {}}}\n", serde_json::json!(unclosed));
    let out = toolfix()
        .args(["repair", "--batch", "--hit-token-limit", "--tools", tools.as_str()])
        .write_stdin(line)
        .assert()
        .code(0);
    assert!(stdout(&out).contains("\"ok\":false"), "{}", stdout(&out));
}

#[test]
fn json_reports_a_key_given_twice() {
    // Legal JSON comes out byte for byte; the duplicate is said on stderr.
    let text = "{\"area\": 1800, \"area\": 1801}\n";
    let out = toolfix().arg("json").write_stdin(text).assert().code(0);
    assert_eq!(stdout(&out), text);
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(err.contains("duplicate_key at /area: given 2 times, different values (1800, 1801)"), "{err}");
    // In a batch, as a `duplicates` member; absent when there is none.
    let lines = "{\"id\": 1, \"input\": \"{'a': 1, 'a': 2}\"}\n{\"id\": 2, \"input\": \"{'a': 1}\"}\n";
    let out = toolfix().args(["json", "--batch"]).write_stdin(lines).assert().code(0);
    let text = stdout(&out);
    let answers: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(answers[0]["duplicates"], serde_json::json!([{"pointer": "/a", "values": [1, 2]}]));
    assert!(answers[1].get("duplicates").is_none(), "{text}");
}
