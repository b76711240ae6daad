//! The wrapper's session driven from bytes, each decision checked: for the fuzz target
//! (`fuzz/`, feature `fuzzing`) and the property tests below. Not part of the wrapper's
//! API: nothing outside the fuzz targets calls it, and its items may change with any
//! release.
//!
//! [`lines`] feeds a session that knows two tools (`search`, read-only; `delete_file`) one
//! line at a time, from the client or from the server, and checks what it decides about
//! each client line. The check reads the line as most servers would: a JSON reader that
//! keeps the last of a repeated member.
//! - Forwarded as it came: when that reading is a `tools/call` to a listed tool, the
//!   library, given the same arguments afresh, leaves them untouched (a call it would
//!   repair or refuse never reaches the server as sent).
//! - Forwarded repaired: one line, the same request (id, method), whose arguments the
//!   library accepts untouched.
//! - Answered: one line of JSON, an answer (not a request) to the request's id.

#![expect(clippy::panic, reason = "an invariant that does not hold is what a fuzzer looks for: a panic")]

use crate::Config;
use crate::session::{ClientAction, Session};
use serde_json::{Value, json};
use std::sync::LazyLock;
use toolfix::{Outcome, ToolSet};

/// The tools the session learns, as the server lists them (the unit tests' too).
pub(crate) fn listing() -> Value {
    json!({"tools": [
        {"name": "search", "inputSchema": {"type": "object", "properties": {
            "query": {"type": "string"}, "limit": {"type": "integer"},
            "tags": {"type": "array", "items": {"type": "string"}}},
            "required": ["query"], "additionalProperties": false},
         "annotations": {"readOnlyHint": true}},
        {"name": "delete_file", "inputSchema": {"type": "object", "properties": {
            "path": {"type": "string"}}, "required": ["path"], "additionalProperties": false}}
    ]})
}

/// The same tools, for checking arguments afresh.
static TOOLS: LazyLock<ToolSet> = LazyLock::new(|| {
    let tools: Vec<Value> = listing()["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| json!({"name": t["name"], "parameters": t["inputSchema"]}))
        .collect();
    ToolSet::new_partial(&tools).0
});

/// A session that has seen the client list the tools.
fn session() -> Session {
    let mut s = Session::new(&Config::default());
    let _ = s.on_client(br#"{"jsonrpc":"2.0","id":"list","method":"tools/list"}"#, &mut Vec::new());
    let answer = json!({"jsonrpc": "2.0", "id": "list", "result": listing()}).to_string();
    let _ = s.on_server(answer.as_bytes());
    s
}

/// Lines split at `\n`; each line's first byte says who sent the rest (even: the client,
/// odd: the server).
///
/// # Panics
///
/// When a decision breaks an invariant (see the module docs).
pub fn lines(data: &[u8]) {
    let mut s = session();
    for line in data.split(|b| *b == b'\n') {
        let Some((who, line)) = line.split_first() else { continue };
        if who % 2 == 0 {
            client(&mut s, line);
        } else {
            let _ = s.on_server(line);
        }
    }
}

/// A `tools/call` as a last-wins reader sees the line: its id, tool name and arguments.
fn as_call(line: &[u8]) -> Option<(Value, String, Value)> {
    let v: Value = serde_json::from_slice(line).ok()?;
    if v.get("method").and_then(Value::as_str) != Some("tools/call") {
        return None;
    }
    let id = v.get("id").filter(|i| !i.is_null())?.clone();
    let params = v.get("params")?;
    let name = params.get("name")?.as_str()?.to_owned();
    let arguments = params.get("arguments").cloned().unwrap_or(Value::Null);
    Some((id, name, arguments))
}

/// Arguments the library leaves untouched, given afresh (no storm guard, no history).
fn untouched(name: &str, arguments: &Value) -> bool {
    let text = match arguments {
        Value::Null => "{}".to_owned(),
        v => v.to_string(),
    };
    TOOLS.repair_call(name, &text).outcome() == Outcome::Untouched
}

fn client(s: &mut Session, line: &[u8]) {
    let action = s.on_client(line, &mut Vec::new());
    match action {
        ClientAction::Forward => {
            if let Some((_, name, arguments)) = as_call(line)
                && TOOLS.tool(&name).is_ok()
            {
                // The text as sent: a repeated key inside the arguments is the library's
                // to judge (a `Value` keeps the last).
                let sent: Value = serde_json::from_slice(line).unwrap_or_default();
                let raw = raw_arguments(line).unwrap_or_else(|| arguments.to_string());
                let outcome = TOOLS.repair_call(&name, if raw == "null" { "{}" } else { &raw }).outcome();
                assert!(
                    outcome == Outcome::Untouched,
                    "a call forwarded as sent that the library would not leave alone ({outcome:?}): {sent}"
                );
            }
        }
        ClientAction::Replace(new) => {
            assert!(new.ends_with(b"\n") && !new[..new.len() - 1].contains(&b'\n'), "a replaced call is not one line");
            let (id, name, arguments) = as_call(&new).unwrap_or_else(|| panic!("a replaced line is no call: {new:?}"));
            let (old_id, ..) = as_call(line).unwrap_or_else(|| panic!("a line replaced was no call: {line:?}"));
            assert_eq!(id, old_id, "a replaced call has another id");
            assert!(untouched(&name, &arguments), "a call forwarded repaired that the library does not accept");
        }
        ClientAction::Answer(answer) => {
            assert!(
                answer.ends_with(b"\n") && !answer[..answer.len() - 1].contains(&b'\n'),
                "an answer is not one line"
            );
            let v: Value = serde_json::from_slice(&answer).unwrap_or_else(|e| panic!("an answer is no JSON: {e}"));
            let answers = v.as_array().cloned().unwrap_or_else(|| vec![v]);
            for a in &answers {
                assert!(a.get("id").is_some() && a.get("method").is_none(), "an answer is no answer: {a}");
                assert!(
                    a.get("result").is_some() != a.get("error").is_some(),
                    "an answer holds no result or error: {a}"
                );
            }
        }
        ClientAction::Drop => {}
    }
}

/// The arguments of a `tools/call` line as written (a repeated key kept), when its
/// envelope reads without repeats.
fn raw_arguments(line: &[u8]) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Line<'a> {
        #[serde(borrow)]
        params: &'a serde_json::value::RawValue,
    }
    #[derive(serde::Deserialize)]
    struct Params<'a> {
        #[serde(borrow)]
        arguments: Option<&'a serde_json::value::RawValue>,
    }
    let l: Line<'_> = serde_json::from_slice(line).ok()?;
    let p: Params<'_> = serde_json::from_str(l.params.get()).ok()?;
    Some(p.arguments.map_or("{}", serde_json::value::RawValue::get).to_owned())
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    fn arguments() -> impl Strategy<Value = String> {
        prop_oneof![
            Just(r#"{"query":"rust"}"#.to_owned()),
            Just(r#"{"query":"rust","limit":"5"}"#.to_owned()),
            Just(r#"{"query":"a","query":"b"}"#.to_owned()),
            Just(r#"{"path":"a","path":"a"}"#.to_owned()),
            Just(r#"{"path":7}"#.to_owned()),
            Just(r#"{"Path":"x"}"#.to_owned()),
            Just(r#""{\"path\": \"x\"}""#.to_owned()),
            Just(r#""{\"path\": \"x"#.to_owned()),
            Just("null".to_owned()),
            Just("{}".to_owned()),
            Just("[]".to_owned()),
        ]
    }

    fn name() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("search".to_owned()),
            Just("delete_file".to_owned()),
            Just("Delete_File".to_owned()),
            Just("unlisted".to_owned())
        ]
    }

    /// A client line: a call, sometimes with a member given twice, sometimes in a batch;
    /// or a line of the server's (a result, a list change).
    fn line() -> impl Strategy<Value = Vec<u8>> {
        (any::<u8>(), name(), arguments(), arguments(), 0u8..6).prop_map(|(id, name, args, other, shape)| {
            let call = format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{name}","arguments":{args}}}}}"#
            );
            let text = match shape {
                0 => call,
                1 => format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{name}","arguments":{args},"arguments":{other}}}}}"#
                ),
                2 => format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{name}","arguments":{args}}},"params":{{"name":"{name}","arguments":{other}}}}}"#
                ),
                3 => format!("[{call}]"),
                4 => format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[]}}}}"#),
                _ => r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#.to_owned(),
            };
            let who = u8::from(shape >= 4);
            let mut out = vec![who];
            out.extend_from_slice(text.as_bytes());
            out
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

        /// Sessions of calls in every shape, answers and list changes between them, and
        /// the same lines cut at a byte.
        #[test]
        fn every_decision_keeps_the_invariants(lines in prop::collection::vec(line(), 1..8),
                                               cut in any::<prop::sample::Index>()) {
            let data = lines.join(&b'\n');
            super::lines(&data);
            super::lines(&data[..cut.index(data.len() + 1)]);
        }
    }
}
