use super::*;
use serde_json::json;

fn tools_page() -> Value {
    crate::fuzzing::listing()
}

fn session() -> Session {
    let mut s = Session::new(&Config::default());
    let mut events = Vec::new();
    assert!(matches!(
        s.on_client(br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#, &mut events),
        ClientAction::Forward
    ));
    let answer = json!({"jsonrpc": "2.0", "id": 1, "result": tools_page()}).to_string();
    let step = s.on_server(answer.as_bytes());
    assert!(!step.swallow);
    assert_eq!(s.tools().len(), 2);
    s
}

fn client(s: &mut Session, line: &str) -> ClientAction {
    s.on_client(line.as_bytes(), &mut Vec::new())
}

fn text(bytes: &[u8]) -> &str {
    std::str::from_utf8(bytes).unwrap()
}

#[test]
fn valid_calls_and_other_messages_are_forwarded_as_they_came() {
    let mut s = session();
    for line in [
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search","arguments":{"query": "rust" ,"limit":5}}}"#,
        r#"{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"unlisted","arguments":{"a":"1"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{}}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"prompts/list"}"#,
        "not json at all",
        "",
    ] {
        assert!(matches!(client(&mut s, line), ClientAction::Forward), "{line}");
    }
}

#[test]
fn repairable_arguments_are_spliced_into_the_line() {
    let mut s = session();
    let line = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search","arguments":{"query":"rust","limit":"5","tags":"[\"a\"]"},"_meta":{"progressToken":7}}}"#;
    let ClientAction::Replace(new) = client(&mut s, line) else { panic!("not replaced") };
    assert_eq!(
        text(&new),
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"search\",\"arguments\":{\"query\": \"rust\", \"limit\": 5, \"tags\": [\"a\"]},\"_meta\":{\"progressToken\":7}}}\n"
    );
    // A renamed tool and arguments sent as a string holding JSON.
    let line =
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"Search","arguments":"{\"query\":\"x\"}"}}"#;
    let ClientAction::Replace(new) = client(&mut s, line) else { panic!("not replaced") };
    assert_eq!(
        text(&new),
        "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"search\",\"arguments\":{\"query\":\"x\"}}}\n"
    );
}

#[test]
fn null_or_absent_arguments_are_an_empty_object() {
    let mut s = Session::new(&Config::default().with_guard_enabled(false));
    let list = json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [
        {"name": "now", "inputSchema": {"type": "object"}},
        {"name": "stamp", "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}}]}});
    client(&mut s, r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
    s.on_server(list.to_string().as_bytes());
    for line in [
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"now"}}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"now","arguments":null}}"#,
    ] {
        assert!(matches!(client(&mut s, line), ClientAction::Forward), "{line}");
    }
    for line in [
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"stamp"}}"#,
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"stamp","arguments":null}}"#,
    ] {
        assert!(matches!(client(&mut s, line), ClientAction::Answer(_)), "{line}");
    }
    // Renamed with arguments null: the null is replaced in place, never a second key.
    let ClientAction::Replace(new) =
        client(&mut s, r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"NOW","arguments":null}}"#)
    else {
        panic!("not replaced")
    };
    assert_eq!(
        text(&new),
        "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":{\"name\":\"now\",\"arguments\":null}}\n"
    );
}

#[test]
fn unrepairable_arguments_are_answered_by_the_wrapper() {
    let mut s = session();
    let mut events = Vec::new();
    let line = r#"{"jsonrpc":"2.0","id":"a-1","method":"tools/call","params":{"name":"delete_file","arguments":{}}}"#;
    let ClientAction::Answer(answer) = s.on_client(line.as_bytes(), &mut events) else { panic!("not answered") };
    let v: Value = serde_json::from_slice(&answer).unwrap();
    assert_eq!(v["id"], "a-1");
    assert_eq!(v["result"]["isError"], true);
    assert!(v["result"]["content"][0]["text"].as_str().unwrap().contains("/path"));
    assert!(matches!(events.as_slice(), [Event::Refused { .. }]));
    // Nothing is pending for it: a server crash must not answer it twice.
    assert!(s.abandon("gone").is_empty());
}

#[test]
fn a_cut_off_value_for_a_tool_with_side_effects_is_refused() {
    let mut s = session();
    let line = r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"delete_file","arguments":"{\"path\": \"/tmp/a"}}"#;
    assert!(matches!(client(&mut s, line), ClientAction::Answer(_)));
}

#[test]
fn repeated_calls_to_a_tool_with_side_effects_are_stopped() {
    let mut s = session();
    let call = |id: u32| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"delete_file","arguments":{{"path":"a"}}}}}}"#
        )
    };
    assert!(matches!(client(&mut s, &call(1)), ClientAction::Forward));
    assert!(matches!(client(&mut s, &call(2)), ClientAction::Forward));
    let ClientAction::Answer(a) = client(&mut s, &call(3)) else { panic!("not stopped") };
    assert!(text(&a).contains("\"isError\":true"));
    // A read-only tool repeated with the same result is stopped too, as `fix` stops it
    // (the same guard: the library's per-call entry)...
    let read = |id: u32| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"search","arguments":{{"query":"a"}}}}}}"#
        )
    };
    let result = |id: u32, text: &str| {
        format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"{text}"}}]}}}}"#)
    };
    for id in 10..12 {
        assert!(matches!(client(&mut s, &read(id)), ClientAction::Forward));
        let _ = s.on_server(result(id, "same").as_bytes());
    }
    assert!(matches!(client(&mut s, &read(12)), ClientAction::Answer(_)));
    // ...but polling whose result changes is not a storm.
    for (id, text) in [(20, "running"), (21, "running 2"), (22, "done")] {
        let line = read(id).replace(r#""query":"a""#, r#""query":"b""#);
        assert!(matches!(client(&mut s, &line), ClientAction::Forward));
        let _ = s.on_server(result(id, text).as_bytes());
    }
}

#[test]
fn list_changed_makes_the_wrapper_list_the_tools_itself() {
    let mut s = session();
    let step = s.on_server(br#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#);
    assert!(!step.swallow);
    let [request] = step.requests.as_slice() else { panic!("no request") };
    let request: Value = serde_json::from_slice(request).unwrap();
    assert_eq!(request["method"], "tools/list");
    let id = request["id"].clone();
    assert!(id.as_str().unwrap().starts_with("toolfix-mcp/"));
    let page = json!({"jsonrpc": "2.0", "id": id, "result": {"tools": [{"name": "only", "inputSchema": {"type": "object",
        "properties": {"n": {"type": "integer"}}}}], "nextCursor": "p2"}});
    let step = s.on_server(page.to_string().as_bytes());
    assert!(step.swallow);
    let [next] = step.requests.as_slice() else { panic!("no next page") };
    let next: Value = serde_json::from_slice(next).unwrap();
    assert_eq!(next["params"]["cursor"], "p2");
    let page = json!({"jsonrpc": "2.0", "id": next["id"], "result": {"tools": [{"name": "two", "inputSchema": {"type": "object"}}]}});
    let step = s.on_server(page.to_string().as_bytes());
    assert!(step.swallow && step.requests.is_empty());
    let names: Vec<&str> = s.tools().iter().map(Tool::name).collect();
    assert_eq!(names, ["only", "two"]);
}

#[test]
fn unanswered_requests_get_errors_with_their_own_ids() {
    let mut s = session();
    client(&mut s, r#"{"jsonrpc":"2.0","id":"s\u0031","method":"ping"}"#);
    client(
        &mut s,
        r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"search","arguments":{"query":"a"}}}"#,
    );
    s.on_server(br#"{"jsonrpc":"2.0","id":"s1","result":{}}"#);
    let errors = s.abandon("gone");
    let [e] = errors.as_slice() else { panic!("{errors:?}") };
    assert_eq!(text(e), "{\"jsonrpc\":\"2.0\",\"id\":7,\"error\":{\"code\":-32603,\"message\":\"gone\"}}\n");
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    /// Arguments the `search` tool accepts, written with arbitrary spacing and key order.
    fn valid_arguments() -> impl Strategy<Value = String> {
        let query = "[a-zA-Z0-9 \\\\\"é☃]{0,12}".prop_map(|s| Value::String(s).to_string());
        let limit = prop::option::of(any::<i32>().prop_map(|n| n.to_string()));
        let tags = prop::option::of(prop::collection::vec("[a-z\\\\n\"]{0,5}", 0..4).prop_map(|v| {
            let items: Vec<String> = v.into_iter().map(|s| Value::String(s).to_string()).collect();
            format!("[{}]", items.join(" , "))
        }));
        (query, limit, tags, prop::sample::select(vec!["", " ", "  ", "\t"]), any::<bool>()).prop_map(
            |(query, limit, tags, ws, reverse)| {
                let mut members = vec![format!("\"query\"{ws}:{ws}{query}")];
                if let Some(l) = limit {
                    members.push(format!("\"limit\":{ws}{l}"));
                }
                if let Some(t) = tags {
                    members.push(format!("{ws}\"tags\":{t}"));
                }
                if reverse {
                    members.reverse();
                }
                format!("{{{ws}{}{ws}}}", members.join(&format!(",{ws}")))
            },
        )
    }

    fn id() -> impl Strategy<Value = String> {
        prop_oneof![
            any::<i64>().prop_map(|n| n.to_string()),
            "[a-z0-9\\-]{0,10}".prop_map(|s| Value::String(s).to_string()),
        ]
    }

    proptest! {
        #[test]
        fn valid_calls_come_out_byte_identical(arguments in valid_arguments(), id in id(),
                                               meta in any::<bool>(), crlf in any::<bool>()) {
            let mut s = session();
            let meta = if meta { r#","_meta":{"progressToken":"t"}"# } else { "" };
            let end = if crlf { "\r\n" } else { "\n" };
            let line = format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"search","arguments":{arguments}{meta}}}}}{end}"#
            );
            let mut events = Vec::new();
            prop_assert!(matches!(s.on_client(line.as_bytes(), &mut events), ClientAction::Forward), "{}", line);
            prop_assert!(events.is_empty());
        }

        #[test]
        fn no_line_makes_the_session_panic_or_swallow_answers(line in any::<Vec<u8>>()) {
            let mut s = session();
            let _ = s.on_client(&line, &mut Vec::new());
            prop_assert!(!s.on_server(&line).swallow);
        }
    }
}

#[test]
fn a_key_given_twice_with_different_values_is_refused_for_every_tool() {
    // Which value a server reads is not certain (parsers disagree): never forwarded, for a
    // read-only tool either; given twice with the same value, it is sent once.
    let mut s = session();
    for (tool, args) in [("delete_file", r#"{"path":"a","path":"b"}"#), ("search", r#"{"query":"a","query":"b"}"#)] {
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{{"name":"{tool}","arguments":{args}}}}}"#
        );
        let ClientAction::Answer(answer) = client(&mut s, &line) else { panic!("{tool}: forwarded") };
        assert!(text(&answer).contains("more than once with different values"), "{}", text(&answer));
    }
    let line = r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"delete_file","arguments":{"path":"a","path":"a"}}}"#;
    let ClientAction::Replace(sent) = client(&mut s, line) else { panic!("not replaced") };
    let sent: Value = serde_json::from_slice(&sent).unwrap();
    assert_eq!(sent["params"]["arguments"], json!({"path": "a"}));
}

/// One table of call sequences through the wrapper and through `fix` (the library's
/// whole-reply entry with the conversation as history): a repeat is stopped by one exactly
/// when the other stops it.
#[test]
fn the_wrapper_stops_a_repeat_exactly_when_fix_does() {
    // (tool, arguments, result) per call, in order.
    type Row = &'static [(&'static str, &'static str, &'static str)];
    let table: &[Row] = &[
        &[
            ("delete_file", r#"{"path":"a"}"#, "ok"),
            ("delete_file", r#"{"path":"a"}"#, "ok"),
            ("delete_file", r#"{"path":"a"}"#, "ok"),
        ],
        &[
            ("search", r#"{"query":"a"}"#, "x"),
            ("search", r#"{"query":"a"}"#, "x"),
            ("search", r#"{"query":"a"}"#, "x"),
        ],
        &[
            ("search", r#"{"query":"a"}"#, "1"),
            ("search", r#"{"query":"a"}"#, "2"),
            ("search", r#"{"query":"a"}"#, "3"),
        ],
        &[
            ("search", r#"{"query":"a"}"#, "x"),
            ("delete_file", r#"{"path":"a"}"#, "ok"),
            ("search", r#"{"query":"a"}"#, "x"),
            ("search", r#"{"query":"a"}"#, "x"),
        ],
        &[
            ("delete_file", r#"{"path":"a"}"#, "ok"),
            ("delete_file", r#"{"path":"b"}"#, "ok"),
            ("delete_file", r#"{"path":"a"}"#, "ok"),
        ],
    ];
    // Which call of each row is stopped (by both).
    let expected: &[&[bool]] = &[
        &[false, false, true],
        &[false, false, true],
        &[false, false, false],
        &[false, false, false, false],
        &[false, false, false],
    ];
    let tools = ToolSet::new(tools_page()["tools"].as_array().unwrap()).unwrap();
    for (r, row) in table.iter().enumerate() {
        let mut s = session();
        let mut history: Vec<Value> = Vec::new();
        for (i, (tool, args, result)) in row.iter().enumerate() {
            let id = 100 + i;
            let line = format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{args}}}}}"#
            );
            let stopped_by_mcp = match client(&mut s, &line) {
                ClientAction::Answer(a) => text(&a).contains("Not run"),
                _ => false,
            };
            let calls =
                json!([{"id": format!("c{i}"), "type": "function", "function": {"name": tool, "arguments": args}}]);
            let reply = toolfix::Reply::new("").with_tool_calls(&calls);
            let fixed = toolfix::fix_reply(
                &reply,
                Some(&tools),
                Some(&Value::Array(history.clone())),
                &toolfix::FixOptions::default(),
            )
            .unwrap();
            let stopped_by_fix = fixed.calls[0].status == CallStatus::Suppressed;
            assert_eq!(stopped_by_mcp, stopped_by_fix, "row {r}, call {i}");
            assert_eq!(stopped_by_mcp, expected[r][i], "row {r}, call {i}");
            if !stopped_by_mcp {
                let answer = format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"{result}"}}]}}}}"#
                );
                let _ = s.on_server(answer.as_bytes());
                history.push(json!({"role": "assistant", "content": null, "tool_calls": calls}));
                let content = json!({"content": [{"type": "text", "text": result}]}).to_string();
                history.push(json!({"role": "tool", "tool_call_id": format!("c{i}"), "content": content}));
            }
        }
    }
}

/// Regression: a `tools/call` whose envelope or parameters give a member twice was
/// forwarded unchecked (the envelope reader refuses such a line, and a line it cannot read
/// went to the server as it came), while a server that keeps the last member runs the call
/// with arguments nobody checked. Answered now; a call with no id is dropped; a repeat in a
/// line that is no `tools/call` by any reading still passes.
#[test]
fn a_call_giving_a_member_twice_is_not_forwarded() {
    let mut s = session();
    for (line, member) in [
        (
            r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"delete_file","arguments":{"path":"a"}},"params":{"name":"delete_file","arguments":{"path":7}}}"#,
            "params",
        ),
        (
            r#"{"jsonrpc":"2.0","id":9,"method":"tools/list","method":"tools/call","params":{"name":"delete_file","arguments":{"path":7}}}"#,
            "method",
        ),
        (
            r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"delete_file","arguments":{"path":"a"},"arguments":{"path":7}}}"#,
            "arguments",
        ),
        (
            r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"search","name":"delete_file","arguments":{"path":7}}}"#,
            "name",
        ),
        (
            r#"{"jsonrpc":"2.0","id":8,"id":9,"method":"tools/call","params":{"name":"delete_file","arguments":{}}}"#,
            "id",
        ),
    ] {
        let mut events = Vec::new();
        let ClientAction::Answer(answer) = s.on_client(line.as_bytes(), &mut events) else {
            panic!("forwarded: {line}")
        };
        let answer: Value = serde_json::from_slice(&answer).unwrap();
        assert_eq!(answer["id"], 9, "{line}");
        assert_eq!(answer["result"]["isError"], true, "{line}");
        let text = answer["result"]["content"][0]["text"].as_str().unwrap();
        assert!(text.contains(&format!("`{member}` more than once")), "{line}: {text}");
        assert_eq!(events.len(), 1, "{line}");
    }
    let notification =
        r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"delete_file","arguments":{}},"params":{}}"#;
    assert!(matches!(client(&mut s, notification), ClientAction::Drop));
    let other = r#"{"jsonrpc":"2.0","id":3,"method":"prompts/get","params":{"name":"a","name":"b"},"params":{}}"#;
    assert!(matches!(client(&mut s, other), ClientAction::Forward));
}

/// Regression: a JSON-RPC batch was relayed unread, a `tools/call` in it included, so its
/// arguments reached the server unchecked. A batch holding a call is answered, each
/// request with an error; one without a call still passes.
#[test]
fn a_batch_holding_a_call_is_not_forwarded() {
    let mut s = session();
    let line =
        r#"[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"delete_file","arguments":{"path":7}}},
                  {"jsonrpc":"2.0","method":"notifications/progress","params":{}},
                  {"jsonrpc":"2.0","id":"b","method":"prompts/list"}]"#
            .replace('\n', "");
    let mut events = Vec::new();
    let ClientAction::Answer(answer) = s.on_client(line.as_bytes(), &mut events) else { panic!("forwarded") };
    assert!(answer.ends_with(b"]\n"));
    let answer: Value = serde_json::from_slice(&answer).unwrap();
    let ids: Vec<&Value> = answer.as_array().unwrap().iter().map(|a| &a["id"]).collect();
    assert_eq!(ids, [&json!(1), &json!("b")]);
    assert!(answer[0]["error"]["message"].as_str().unwrap().contains("on a line of its own"));
    assert_eq!(events.len(), 1);
    let only_notifications =
        r#"[{"jsonrpc":"2.0","method":"tools/call","params":{"name":"delete_file","arguments":{}}}]"#;
    assert!(matches!(client(&mut s, only_notifications), ClientAction::Drop));
    for line in [r#"[{"jsonrpc":"2.0","id":1,"method":"prompts/list"}]"#, "[]", "[1, 2]"] {
        assert!(matches!(client(&mut s, line), ClientAction::Forward), "{line}");
    }
}

/// Regression: the repeat check compared each member with every later one, so a line of
/// many members (a 16 MiB line holds millions) with a repeated `params` took quadratic
/// time (100,000 members: ~5·10⁹ comparisons, minutes; this test then does not finish in
/// CI's time). One pass now.
#[test]
fn a_repeat_among_many_members_is_found_in_one_pass() {
    let mut s = session();
    let mut line = String::from(r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"search"}"#);
    for i in 0..100_000 {
        let _ = std::fmt::Write::write_fmt(&mut line, format_args!(",\"k{i}\":0"));
    }
    line.push_str(r#","params":{"name":"delete_file"}}"#);
    assert!(matches!(client(&mut s, &line), ClientAction::Answer(_)));
}
