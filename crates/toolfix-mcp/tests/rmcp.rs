//! End-to-end tests: the official Rust MCP SDK (`rmcp`) on both ends, the wrapper between.
//!
//! This binary plays every part (`harness = false`): run plainly it is the test runner;
//! with `TOOLFIX_MCP_TEST_ROLE` set it is the wrapper (`toolfix_mcp::run` on its stdio,
//! exactly what `toolfix mcp` does), an rmcp server, or a scripted raw server. The rmcp
//! client spawns `<this binary> as wrapper`, which spawns `<this binary> as server`.
//!
//! Run: `cargo test -p toolfix-mcp --test rmcp [-- FILTER]`.

#![expect(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult, PaginatedRequestParams,
    ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::transport::TokioChildProcess;
use rmcp::{ErrorData, ServerHandler, ServiceExt};
use serde_json::{Value, json};
use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::Command;

const ROLE: &str = "TOOLFIX_MCP_TEST_ROLE";
const SERVER_ROLE: &str = "TOOLFIX_MCP_TEST_SERVER_ROLE";
const SEEN: &str = "TOOLFIX_MCP_TEST_SEEN";
const CONFIG: &str = "TOOLFIX_MCP_TEST_CONFIG";
/// Upper bound for anything to happen; tests never wait on it when things work.
const BOUND: Duration = Duration::from_secs(20);

fn main() -> ExitCode {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    match std::env::var(ROLE).as_deref() {
        Ok("wrapper") => {
            let code = runtime.block_on(wrapper());
            runtime.shutdown_background();
            ExitCode::from(code)
        }
        Ok("server") => {
            runtime.block_on(server());
            ExitCode::SUCCESS
        }
        Ok("raw") => {
            runtime.block_on(raw_server());
            ExitCode::SUCCESS
        }
        Ok("stubborn") => {
            // Ignores its stdin closing: the wrapper must kill it.
            std::thread::sleep(Duration::from_secs(600));
            ExitCode::SUCCESS
        }
        _ => runtime.block_on(run_tests()),
    }
}

// ---------------------------------------------------------------- the parts

/// The wrapper, as `toolfix mcp -- <this binary as server>` runs it.
async fn wrapper() -> u8 {
    let config = match std::env::var(CONFIG) {
        Ok(text) => toolfix_mcp::Config::from_toml(&text).unwrap(),
        Err(_) => toolfix_mcp::Config::default(),
    };
    let mut server = Command::new(std::env::current_exe().unwrap());
    server.env(ROLE, std::env::var(SERVER_ROLE).unwrap_or_else(|_| "server".to_owned()));
    let exit =
        toolfix_mcp::run(config, server, tokio::io::stdin(), tokio::io::stdout(), toolfix_mcp::Log::new(false)).await;
    u8::try_from(exit.unwrap().code).unwrap_or(1)
}

fn tool(definition: Value) -> Tool {
    serde_json::from_value(definition).unwrap()
}

fn initial_tools() -> Vec<Tool> {
    vec![
        tool(json!({"name": "search", "annotations": {"readOnlyHint": true}, "inputSchema": {"type": "object",
            "properties": {"query": {"type": "string"}, "limit": {"type": "integer"},
                "tags": {"type": "array", "items": {"type": "string"}}},
            "required": ["query"], "additionalProperties": false}})),
        tool(json!({"name": "write_note", "annotations": {"destructiveHint": true}, "inputSchema": {"type": "object",
            "properties": {"path": {"type": "string"}, "text": {"type": "string"},
                "mode": {"type": "string", "enum": ["append", "overwrite"]}},
            "required": ["path", "text"], "additionalProperties": false}})),
        tool(json!({"name": "crash", "inputSchema": {"type": "object"}})),
        tool(json!({"name": "add_tool", "inputSchema": {"type": "object"}})),
    ]
}

/// An rmcp server with tools listed one per page, that writes every call it gets to the
/// file named by `TOOLFIX_MCP_TEST_SEEN`.
#[derive(Clone)]
struct TestServer {
    tools: Arc<Mutex<Vec<Tool>>>,
    seen: Option<PathBuf>,
}

impl ServerHandler for TestServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_tool_list_changed().build())
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools = self.tools.lock().unwrap().clone();
        let at: usize = request.and_then(|r| r.cursor).and_then(|c| c.parse().ok()).unwrap_or(0);
        let page: Vec<&Tool> = tools.iter().skip(at).take(1).collect();
        let next = (at + 1 < tools.len()).then(|| (at + 1).to_string());
        Ok(serde_json::from_value(json!({"tools": page, "nextCursor": next})).unwrap())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = Value::Object(request.arguments.clone().unwrap_or_default());
        if let Some(path) = &self.seen {
            let mut f = std::fs::OpenOptions::new().create(true).append(true).open(path).unwrap();
            writeln!(f, "{}", json!({"tool": request.name, "arguments": arguments})).unwrap();
        }
        match request.name.as_ref() {
            "crash" => std::process::exit(3),
            "add_tool" => {
                self.tools.lock().unwrap().push(tool(json!({"name": "late", "inputSchema": {"type": "object",
                    "properties": {"n": {"type": "integer"}}, "required": ["n"]}})));
                context.peer.notify_tool_list_changed().await.unwrap();
            }
            _ => {}
        }
        Ok(CallToolResult::success(vec![ContentBlock::text(arguments.to_string())]).into())
    }
}

async fn server() {
    let seen = std::env::var_os(SEEN).map(PathBuf::from);
    let server = TestServer { tools: Arc::new(Mutex::new(initial_tools())), seen };
    let running = server.serve(rmcp::transport::stdio()).await.unwrap();
    let _ = running.waiting().await;
}

/// A raw line server: answers each request with the exact line it received, and starts
/// with a server-to-client request, a non-JSON line and a notification.
async fn raw_server() {
    let mut out = tokio::io::stdout();
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    out.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":\"srv-1\",\"method\":\"roots/list\"}\nthis is not json\n{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"hi\"}}\n").await.unwrap();
    out.flush().await.unwrap();
    while let Ok(Some(line)) = lines.next_line().await {
        let msg = serde_json::from_str::<Value>(&line).unwrap_or(Value::Null);
        let answer = match (msg.get("method").and_then(Value::as_str), msg.get("id")) {
            (Some("tools/list"), Some(id)) => json!({"jsonrpc": "2.0", "id": id, "result": {"tools": [
                {"name": "search", "inputSchema": {"type": "object", "properties": {"limit": {"type": "integer"}}}}]}}),
            (Some(_), Some(id)) => json!({"jsonrpc": "2.0", "id": id, "result": {"seen": line}}),
            _ => json!({"jsonrpc": "2.0", "method": "test/seen", "params": {"seen": line}}),
        };
        out.write_all(format!("{answer}\n").as_bytes()).await.unwrap();
        out.flush().await.unwrap();
    }
}

// ---------------------------------------------------------------- helpers

/// A file in the temporary directory the wrapper writes what the server saw to; removed
/// when the test ends (passed or not).
struct Scratch(PathBuf);

impl std::ops::Deref for Scratch {
    type Target = PathBuf;
    fn deref(&self) -> &PathBuf {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn scratch(name: &str) -> Scratch {
    let path = std::env::temp_dir().join(format!("toolfix-mcp-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_file(&path);
    Scratch(path)
}

fn wrapper_command(seen: &PathBuf) -> Command {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.env(ROLE, "wrapper").env(SEEN, seen).env_remove(SERVER_ROLE).env_remove(CONFIG);
    cmd
}

fn seen_calls(path: &PathBuf) -> Vec<Value> {
    std::fs::read_to_string(path).unwrap_or_default().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

type Client = rmcp::service::RunningService<rmcp::RoleClient, ()>;

async fn connect(seen: &PathBuf) -> Client {
    let transport = TokioChildProcess::new(wrapper_command(seen)).unwrap();
    let client = ().serve(transport).await.unwrap();
    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(tools.len(), 4, "the client pages through every tool");
    client
}

async fn call(client: &Client, name: &'static str, arguments: Value) -> Value {
    let Value::Object(arguments) = arguments else { panic!("arguments must be an object") };
    let result = client.call_tool(CallToolRequestParams::new(name).with_arguments(arguments)).await.unwrap();
    serde_json::to_value(result).unwrap()
}

fn text_of(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap()
}

fn is_error(result: &Value) -> bool {
    result["isError"] == true
}

// ---------------------------------------------------------------- tests

async fn passthrough_and_pagination() {
    let seen = scratch("passthrough");
    let client = connect(&seen).await;
    let args = json!({"query": "rust mcp", "limit": 5, "tags": ["a", "b"]});
    let result = call(&client, "search", args.clone()).await;
    assert!(!is_error(&result));
    assert_eq!(serde_json::from_str::<Value>(text_of(&result)).unwrap(), args);
    // A tool the server does not list is forwarded unchanged; the server decides.
    let result = call(&client, "nope", json!({"x": "1"})).await;
    assert_eq!(text_of(&result), r#"{"x":"1"}"#);
    assert_eq!(seen_calls(&seen).len(), 2);
    client.cancel().await.unwrap();
}

async fn each_repair() {
    let seen = scratch("repair");
    let client = connect(&seen).await;
    let cases = [
        ("search", json!({"query": "q", "limit": "5"}), json!({"query": "q", "limit": 5})),
        ("search", json!({"query": "q", "tags": "[\"a\",\"b\"]"}), json!({"query": "q", "tags": ["a", "b"]})),
        ("search", json!({"query": "q", "tags": "solo"}), json!({"query": "q", "tags": ["solo"]})),
        ("search", json!({"query": "q", "limit": null}), json!({"query": "q"})),
        ("search", json!({"Query": "q"}), json!({"query": "q"})),
        (
            "write_note",
            json!({"path": "a.md", "text": "hi", "mode": "Append"}),
            json!({"path": "a.md", "text": "hi", "mode": "append"}),
        ),
        ("write_note", json!({"path": "a.md", "text": 42}), json!({"path": "a.md", "text": "42"})),
    ];
    for (n, (tool, sent, expected)) in cases.iter().enumerate() {
        let result = call(&client, tool, sent.clone()).await;
        assert!(!is_error(&result), "{sent}: {result}");
        assert_eq!(&serde_json::from_str::<Value>(text_of(&result)).unwrap(), expected, "{sent}");
        assert_eq!(&seen_calls(&seen)[n]["arguments"], expected);
    }
    client.cancel().await.unwrap();
}

async fn each_refusal() {
    let seen = scratch("refusal");
    let client = connect(&seen).await;
    let cases = [
        ("write_note", json!({"text": "hi"}), "/path"),
        ("write_note", json!({"path": "a", "text": "hi", "mode": "replace"}), "/mode"),
        ("search", json!({"query": "q", "limit": "many"}), "/limit"),
        ("search", json!({"query": "q", "limit": 2.5}), "/limit"),
        ("search", json!({"query": ["a", "b"]}), "/query"),
        ("write_note", json!({"path": "a", "text": "hi", "extra": 1}), "extra"),
    ];
    for (tool, sent, mentions) in cases {
        let result = call(&client, tool, sent.clone()).await;
        assert!(is_error(&result), "{sent}: {result}");
        assert!(text_of(&result).contains(mentions), "{sent}: {}", text_of(&result));
    }
    assert!(seen_calls(&seen).is_empty(), "the server never sees a refused call");
    client.cancel().await.unwrap();
}

async fn storm_guard() {
    let seen = scratch("storm");
    let client = connect(&seen).await;
    let args = json!({"path": "a.md", "text": "same"});
    assert!(!is_error(&call(&client, "write_note", args.clone()).await));
    assert!(!is_error(&call(&client, "write_note", args.clone()).await));
    let third = call(&client, "write_note", args).await;
    assert!(is_error(&third) && text_of(&third).contains("`write_note`"), "{third}");
    assert_eq!(seen_calls(&seen).len(), 2);
    // A read-only tool that keeps getting the same result is stopped the same way, as
    // `toolfix fix` and `serve` stop it (one guard: the library's per-call entry).
    for _ in 0..2 {
        assert!(!is_error(&call(&client, "search", json!({"query": "q"})).await));
    }
    let third = call(&client, "search", json!({"query": "q"})).await;
    assert!(is_error(&third) && text_of(&third).contains("same result"), "{third}");
    client.cancel().await.unwrap();
}

async fn list_changed() {
    let seen = scratch("list-changed");
    let client = connect(&seen).await;
    assert!(!is_error(&call(&client, "add_tool", json!({})).await));
    // The wrapper lists the tools itself after the notification; its answer races the
    // next call, so try again until it lands, within the bound (no sleeping).
    let mut repaired = false;
    let start = std::time::Instant::now();
    while start.elapsed() < BOUND {
        let result = call(&client, "late", json!({"n": "7"})).await;
        if serde_json::from_str::<Value>(text_of(&result)).unwrap() == json!({"n": 7}) {
            repaired = true;
            break;
        }
    }
    assert!(repaired, "calls to a tool added later are repaired");
    let refused = call(&client, "late", json!({"n": "seven"})).await;
    assert!(is_error(&refused));
    // The client still pages through the whole list itself.
    assert_eq!(client.list_all_tools().await.unwrap().len(), 5);
    client.cancel().await.unwrap();
}

async fn large_messages() {
    let seen = scratch("large");
    let client = connect(&seen).await;
    let big = "x".repeat(6 << 20);
    let result = call(&client, "search", json!({"query": big, "limit": "3"})).await;
    let echoed: Value = serde_json::from_str(text_of(&result)).unwrap();
    assert_eq!(echoed["query"].as_str().map(str::len), Some(6 << 20));
    assert_eq!(echoed["limit"], 3);
    client.cancel().await.unwrap();
}

/// A raw client on the wrapper's stdio.
struct Raw {
    child: tokio::process::Child,
    stdin: Option<tokio::process::ChildStdin>,
    lines: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
}

impl Raw {
    fn spawn(server_role: &str, config: &str, seen: &PathBuf) -> Raw {
        let mut cmd = wrapper_command(seen);
        cmd.env(SERVER_ROLE, server_role).env(CONFIG, config);
        cmd.stdin(std::process::Stdio::piped()).stdout(std::process::Stdio::piped()).kill_on_drop(true);
        let mut child = cmd.spawn().unwrap();
        let stdin = child.stdin.take();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        Raw { child, stdin, lines }
    }

    async fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(line.as_bytes()).await.unwrap();
        stdin.write_all(b"\n").await.unwrap();
        stdin.flush().await.unwrap();
    }

    async fn line(&mut self) -> String {
        tokio::time::timeout(BOUND, self.lines.next_line()).await.unwrap().unwrap().expect("a line")
    }

    /// Lines until one whose `id` is `id`.
    async fn answer(&mut self, id: &Value) -> Value {
        loop {
            let line = self.line().await;
            if let Ok(v) = serde_json::from_str::<Value>(&line)
                && v.get("id") == Some(id)
                && v.get("method").is_none()
            {
                return v;
            }
        }
    }

    async fn initialize(&mut self) {
        self.send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#).await;
        let answer = self.answer(&json!(0)).await;
        assert!(answer.get("result").is_some(), "{answer}");
        self.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).await;
    }

    async fn exit_code(&mut self) -> Option<i32> {
        tokio::time::timeout(BOUND, self.child.wait()).await.unwrap().unwrap().code()
    }
}

async fn raw_lines_pass_byte_for_byte() {
    let seen = scratch("raw");
    let mut raw = Raw::spawn("raw", "", &seen);
    // What the server sends first reaches the client unchanged, the non-JSON line too.
    assert_eq!(raw.line().await, r#"{"jsonrpc":"2.0","id":"srv-1","method":"roots/list"}"#);
    assert_eq!(raw.line().await, "this is not json");
    assert!(raw.line().await.contains("notifications/message"));
    // The client's answer to the server's request, and odd lines, reach the server.
    let lines = [
        r#"{"jsonrpc":"2.0","id":"srv-1","result":{"roots":[]}}"#,
        "not json from the client",
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"x"}}"#,
    ];
    for line in lines {
        raw.send(line).await;
        let v: Value = serde_json::from_str(&raw.line().await).unwrap();
        assert_eq!(v["params"]["seen"], line);
    }
    // String and number ids, unknown methods, odd spacing: byte for byte.
    raw.send(r#"{"jsonrpc":"2.0","id":"list","method":"tools/list"}"#).await;
    raw.answer(&json!("list")).await;
    for (id, line) in [
        (
            json!("a\u{e9}"),
            r#"{"jsonrpc":"2.0","id":"a\u00e9","method":"tools/call","params":{"name":"search","arguments":{ "limit" : 3 }}}"#,
        ),
        (json!(7), r#"{"jsonrpc":"2.0","id":7,"method":"vendor/unknown","params":[1,2]}"#),
        (json!(8), r#"{"params":{"arguments":{},"name":"unlisted"},"method":"tools/call","id":8,"jsonrpc":"2.0"}"#),
    ] {
        raw.send(line).await;
        assert_eq!(raw.answer(&id).await["result"]["seen"], line);
    }
    // Arguments sent as a string holding JSON are decoded; the rest of the line is kept.
    raw.send(r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"search","arguments":"{\"limit\": \"4\"}","_meta":{"k":1}}}"#).await;
    assert_eq!(
        raw.answer(&json!(9)).await["result"]["seen"],
        r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"search","arguments":{"limit": 4},"_meta":{"k":1}}}"#
    );
    drop(raw.stdin.take());
    assert_eq!(raw.exit_code().await, Some(0));
}

async fn server_crash_mid_call() {
    let seen = scratch("crash");
    let mut raw = Raw::spawn("server", "", &seen);
    raw.initialize().await;
    raw.send(r#"{"jsonrpc":"2.0","id":"p","method":"tools/call","params":{"name":"crash","arguments":{}}}"#).await;
    let answer = raw.answer(&json!("p")).await;
    assert_eq!(answer["error"]["code"], -32603, "{answer}");
    let code = raw.exit_code().await;
    assert!(matches!(code, Some(c) if c != 0), "{code:?}");
}

async fn client_closes_stdin() {
    let seen = scratch("close");
    let mut raw = Raw::spawn("server", "", &seen);
    raw.initialize().await;
    drop(raw.stdin.take());
    assert_eq!(raw.exit_code().await, Some(0));
    // A server that ignores it is killed after the grace period.
    let mut raw = Raw::spawn("stubborn", "shutdown_grace_ms = 100", &seen);
    drop(raw.stdin.take());
    assert_eq!(raw.exit_code().await, Some(0));
}

async fn over_the_limit_passes_unrepaired() {
    let seen = scratch("limit");
    let mut raw = Raw::spawn("raw", "max_message_bytes = 256", &seen);
    for _ in 0..3 {
        raw.line().await;
    }
    raw.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#).await;
    raw.answer(&json!(1)).await;
    let pad = "p".repeat(400);
    let long = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"search","arguments":{{"limit":"5"}},"_meta":{{"pad":"{pad}"}}}}}}"#
    );
    raw.send(&long).await;
    assert_eq!(raw.answer(&json!(2)).await["result"]["seen"], long.as_str());
    raw.send(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"search","arguments":{"limit":"5"}}}"#)
        .await;
    let short = raw.answer(&json!(3)).await;
    let seen: Value = serde_json::from_str(short["result"]["seen"].as_str().unwrap()).unwrap();
    assert_eq!(seen["params"]["arguments"], json!({"limit": 5}));
}

// ---------------------------------------------------------------- runner

async fn run_tests() -> ExitCode {
    type Test = fn() -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>;
    let tests: &[(&str, Test)] = &[
        ("passthrough_and_pagination", || Box::pin(passthrough_and_pagination())),
        ("each_repair", || Box::pin(each_repair())),
        ("each_refusal", || Box::pin(each_refusal())),
        ("storm_guard", || Box::pin(storm_guard())),
        ("list_changed", || Box::pin(list_changed())),
        ("large_messages", || Box::pin(large_messages())),
        ("raw_lines_pass_byte_for_byte", || Box::pin(raw_lines_pass_byte_for_byte())),
        ("server_crash_mid_call", || Box::pin(server_crash_mid_call())),
        ("client_closes_stdin", || Box::pin(client_closes_stdin())),
        ("over_the_limit_passes_unrepaired", || Box::pin(over_the_limit_passes_unrepaired())),
    ];
    let filters: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    let mut failed = Vec::new();
    let mut ran = 0;
    for (name, test) in tests {
        if !filters.is_empty() && !filters.iter().any(|f| name.contains(f.as_str())) {
            continue;
        }
        ran += 1;
        let outcome = tokio::time::timeout(BOUND * 3, tokio::spawn(test())).await;
        match outcome {
            Ok(Ok(())) => println!("test {name} ... ok"),
            Ok(Err(e)) => {
                println!("test {name} ... FAILED: {e}");
                failed.push(*name);
            }
            Err(_) => {
                println!("test {name} ... FAILED: timed out");
                failed.push(*name);
            }
        }
    }
    println!(
        "\ntest result: {}. {} passed; {} failed",
        if failed.is_empty() { "ok" } else { "FAILED" },
        ran - failed.len(),
        failed.len()
    );
    if failed.is_empty() { ExitCode::SUCCESS } else { ExitCode::FAILURE }
}
