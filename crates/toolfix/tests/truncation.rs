//! Issue 9 §1: every value that touches the cut of truncated text is reported as
//! uncertain (kind, span, pointer), and "evidently cut" is told apart from "only closers
//! missing".
#![expect(clippy::unwrap_used, clippy::panic, reason = "tests")]

use toolfix::salvage::{FixKind, UncertainKind as U, salvage};

/// `(evident, [(kind, pointer, kept)])` for `input`, and the repaired text.
fn cut(input: &str) -> (bool, Vec<(U, String, bool)>, String) {
    let out = salvage(input).unwrap();
    let t = out.truncation().unwrap_or_else(|| panic!("no truncation for {input:?}"));
    assert_eq!(t.at(), input.len(), "{input:?}");
    let list = t.uncertain().iter().map(|u| (u.kind, u.pointer.clone(), u.kept)).collect();
    if t.is_evident() {
        for u in t.uncertain() {
            assert!(
                out.fixes().iter().any(|f| f.kind == u.kind.fix_kind() && f.span == u.span),
                "{input:?}: {u:?} not in the fixes {:?}",
                out.fixes()
            );
            assert_eq!(u.span.end, input.len());
        }
    }
    (t.is_evident(), list, out.text().to_owned())
}

fn one(kind: U, pointer: &str, kept: bool) -> Vec<(U, String, bool)> {
    vec![(kind, pointer.to_owned(), kept)]
}

#[test]
fn numbers_at_the_cut_are_uncertain() {
    for (input, text) in [
        (r#"{"account": "A-7", "amount": 50"#, r#"{"account": "A-7", "amount": 50}"#),
        (r#"{"amount": 7."#, r#"{"amount": 7}"#),
        (r#"{"amount": 1e"#, r#"{"amount": 1}"#),
        (r#"{"amount": 1.5E+"#, r#"{"amount": 1.5}"#),
    ] {
        let (evident, list, got) = cut(input);
        assert!(evident, "{input}");
        assert_eq!(list, one(U::Number, "/amount", true), "{input}");
        assert_eq!(got, text);
    }
    // A number cut to nothing: its member is left out, never given `null`.
    let (evident, list, text) = cut(r#"{"id": 1, "amount": -"#);
    assert!(evident);
    assert_eq!(list, one(U::Number, "/amount", false));
    assert_eq!(text.replace(' ', ""), r#"{"id":1}"#);
}

#[test]
fn literals_at_the_cut_are_uncertain() {
    for w in ["tr", "fal", "nu", "Tru", "Non"] {
        let input = format!(r#"{{"confirm": {w}"#);
        let (evident, list, text) = cut(&input);
        assert!(evident, "{input}");
        assert_eq!(list, one(U::Literal, "/confirm", false), "{input}");
        assert_eq!(text, "{}", "{input}");
    }
    // In an array the element is left out: its place is still reported.
    let (evident, list, text) = cut(r#"{"flags": [true, fa"#);
    assert!(evident);
    assert_eq!(list, vec![(U::Array, "/flags".to_owned(), true), (U::Literal, "/flags/1".to_owned(), false)]);
    assert_eq!(text.replace(' ', ""), r#"{"flags":[true]}"#);
}

#[test]
fn complete_literals_and_strings_are_not() {
    for input in [r#"{"confirm": true"#, r#"{"confirm": null"#, r#"{"name": "Ada""#, r#"{"n": 5 "#, r#"{"a": {}"#] {
        let (evident, list, _) = cut(input);
        assert!(!evident, "{input}");
        assert!(list.is_empty(), "{input}: {list:?}");
    }
}

#[test]
fn strings_at_the_cut_are_uncertain() {
    let (evident, list, text) = cut(r#"{"path": "/a", "content": "hello wor"#);
    assert!(evident);
    assert_eq!(list, one(U::String, "/content", true));
    assert_eq!(text, r#"{"path": "/a", "content": "hello wor"}"#);
    let (_, list, _) = cut(r#"{"tags": ["a", "b"#);
    assert_eq!(list, vec![(U::Array, "/tags".to_owned(), true), (U::String, "/tags/1".to_owned(), true)]);
    // Unquoted text running into the cut.
    let (evident, list, _) = cut(r#"{"city": Par"#);
    assert!(evident);
    assert_eq!(list, one(U::String, "/city", true));
    // A top-level string.
    let (evident, list, _) = cut(r#""abc"#);
    assert!(evident);
    assert_eq!(list, one(U::String, "", true));
}

#[test]
fn keys_at_the_cut_are_uncertain() {
    for input in [r#"{"a": 1, "limit""#, r#"{"a": 1, "limit":"#, r#"{"a": 1, "limit": "#] {
        let (evident, list, text) = cut(input);
        assert!(evident, "{input}");
        // A member cut before its value is left out, as a cut key is (issue 24 §5).
        assert_eq!(list, one(U::Member, "/limit", false), "{input}");
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(value, serde_json::json!({"a": 1}), "{input}");
    }
    // An unquoted key at the cut may be cut inside (`limit` of `limits`): left out.
    let (evident, list, text) = cut(r#"{"a": 1, limit"#);
    assert!(evident);
    assert_eq!(list, one(U::Key, "", false));
    assert_eq!(text, r#"{"a": 1 }"#);
    // A key cut inside its quotes names nothing: it is left out.
    let (evident, list, text) = cut(r#"{"a": 1, "lim"#);
    assert!(evident);
    assert_eq!(list, one(U::Key, "", false));
    assert_eq!(text.replace(" }", "}"), r#"{"a": 1}"#);
}

#[test]
fn brackets_and_separators_at_the_cut_are_evident() {
    let (evident, list, text) = cut(r#"{"ids": ["#);
    assert!(evident);
    assert_eq!(list, vec![(U::Array, "/ids".to_owned(), true)]);
    assert_eq!(text, r#"{"ids": []}"#);
    let (evident, list, _) = cut(r#"{"a": 1,"#);
    assert!(evident);
    assert!(list.is_empty());
    let (evident, _, _) = cut("{");
    assert!(evident);
    let (evident, list, _) = cut(r#"{"q": {"a": 1, "b": [1, 2], "#);
    assert!(evident);
    assert_eq!(list, vec![(U::Object, "/q".to_owned(), true)]);
    // Closers missing after a complete value: only the top-level one is a dropped brace;
    // an array or object left open inside may lack members.
    for input in [r#"{"q": {"a": "x""#, r#"{"q": ["x", true"#] {
        let (evident, list, _) = cut(input);
        assert!(evident, "{input}");
        assert_eq!(list[0].1, "/q");
        let out = salvage(input).unwrap();
        assert!(out.fixes().iter().any(|f| f.kind == FixKind::UncertainContainer));
    }
    let (evident, list, _) = cut(r#"{"q": {"a": "x"}"#);
    assert!(!evident);
    assert!(list.is_empty());
}

#[test]
fn nested_pointers_are_escaped() {
    let (_, list, _) = cut(r#"{"a/b": [{"c~d": 12"#);
    assert_eq!(
        list,
        vec![
            (U::Array, "/a~1b".to_owned(), true),
            (U::Object, "/a~1b/0".to_owned(), true),
            (U::Number, "/a~1b/0/c~0d".to_owned(), true),
        ]
    );
}

#[test]
fn keys_are_named_however_they_were_quoted() {
    for (input, pointer) in [
        (r#"{"x": 1, "a\"b": 5"#, "/a\"b"),
        (r#"{"x": 1, "a\\": 5"#, "/a\\"),
        ("{'k': 5", "/k"),
        ("{k: 5", "/k"),
        ("{x: 1, long_key: 5", "/long_key"),
        ("{\u{201c}k\u{201d}: 5", "/k"),
        (r#"{"x": {"y": 1}, "k": tr"#, "/k"),
    ] {
        let (_, list, _) = cut(input);
        assert_eq!(list.last().map(|u| u.1.as_str()), Some(pointer), "{input}");
    }
}

#[test]
fn complete_text_has_no_truncation() {
    for input in [r#"{"a": 1}"#, "{'a': 1,}", "```json\n{\"a\": [1, 2]}\n```", "[1, 2] and more"] {
        assert!(salvage(input).unwrap().truncation().is_none(), "{input}");
    }
}

#[test]
fn escaped_json_keeps_the_cut() {
    let input = r#"{\"amount\": 5"#;
    let out = salvage(input).unwrap();
    let t = out.truncation().unwrap();
    assert!(t.is_evident());
    assert_eq!(t.uncertain()[0].kind, U::Number);
    assert_eq!(t.uncertain()[0].pointer, "/amount");
}

mod policy {
    use serde_json::{Value, json};
    use toolfix::{CallOptions, CallStatus, FixOptions, Reply, ToolSet, fix_reply};

    fn tools() -> ToolSet {
        ToolSet::new(&[
            json!({"name": "transfer", "parameters": {"type": "object",
                "properties": {"account": {"type": "string"}, "amount": {"type": "number"},
                    "confirm": {"type": "boolean"}, "ids": {"type": "array", "items": {"type": "integer"}},
                    "memo": {"type": "string"}},
                "required": ["account"]}}),
            json!({"name": "search", "parameters": {"type": "object",
                "properties": {"query": {"type": "string"}, "limit": {"type": "integer"},
                    "exact": {"type": "boolean"}, "tags": {"type": "array", "items": {"type": "string"}},
                    "filter": {"type": "object"}},
                "required": ["query"], "x-toolfix": {"read_only": true}}}),
        ])
        .unwrap()
    }

    /// Every kind of cut, as a tool that changes things would get it.
    const CUTS: &[&str] = &[
        r#"{"account": "A-7", "amount": 50"#,
        r#"{"account": "A-7", "amount": 50."#,
        r#"{"account": "A-7", "amount": -"#,
        r#"{"account": "A-7", "amount": 1e"#,
        r#"{"account": "A-7", "confirm": tr"#,
        r#"{"account": "A-7", "confirm": fal"#,
        r#"{"account": "A-7", "memo": nu"#,
        r#"{"account": "A-7", "memo": "rent for"#,
        r#"{"account": "A-7", "memo""#,
        r#"{"account": "A-7", "memo":"#,
        r#"{"account": "A-7", "me"#,
        r#"{"account": "A-7", "ids": ["#,
        r#"{"account": "A-7", "ids": [1, 2"#,
        r#"{"account": "A-7","#,
        r#"{"account": "A-7", "#,
        "{",
    ];

    #[test]
    fn a_tool_that_changes_things_gets_no_cut_call() {
        let tools = tools();
        for cut in CUTS {
            let out = tools.repair_call("transfer", cut);
            let refusal = out.refusal().unwrap_or_else(|| panic!("{cut}: accepted {:?}", out.arguments_text()));
            assert!(refusal.message.contains("cut off"), "{cut}: {}", refusal.message);
            assert!(refusal.message.contains("send the whole call again"), "{cut}: {}", refusal.message);
        }
    }

    #[test]
    fn only_closers_missing_is_closed_unless_the_output_hit_the_limit() {
        let tools = tools();
        for text in
            [r#"{"account": "A-7""#, r#"{"account": "A-7", "confirm": true"#, r#"{"account": "A-7", "ids": [1, 2] "#]
        {
            let out = tools.repair_call("transfer", text);
            assert!(out.is_ok(), "{text}: {:?}", out.refusal());
            let hit = CallOptions::default().with_hit_token_limit(true);
            let out = tools.repair_call_with("transfer", text, &hit);
            assert!(out.refusal().unwrap().message.contains("cut off"), "{text}");
        }
        // Complete text is complete, whatever the flag.
        let hit = CallOptions::default().with_hit_token_limit(true);
        assert!(tools.repair_call_with("transfer", r#"{"account": "A-7"}"#, &hit).is_ok());
    }

    fn args(out: &toolfix::CallOutcome) -> Value {
        serde_json::from_str(out.arguments_text().unwrap()).unwrap()
    }

    #[test]
    fn a_read_only_tool_keeps_complete_values_and_drops_uncertain_optional_ones() {
        let tools = tools();
        for (cut, want) in [
            (r#"{"query": "rust", "limit": 5"#, json!({"query": "rust"})),
            (r#"{"query": "rust", "limit": 5."#, json!({"query": "rust"})),
            (r#"{"query": "rust", "exact": tr"#, json!({"query": "rust"})),
            (r#"{"query": "rust", "tags": ["a", "b"#, json!({"query": "rust"})),
            (r#"{"query": "rust", "tags": ["a", "b"], "#, json!({"query": "rust", "tags": ["a", "b"]})),
            (r#"{"query": "rust", "filter": {"a": 1"#, json!({"query": "rust"})),
            (r#"{"query": "rust", "limit":"#, json!({"query": "rust"})),
            (r#"{"query": "rust", "lim"#, json!({"query": "rust"})),
            (r#"{"query": "rust","#, json!({"query": "rust"})),
        ] {
            let out = tools.repair_call("search", cut);
            assert!(out.is_ok(), "{cut}: {:?}", out.refusal());
            assert_eq!(args(&out), want, "{cut}");
            assert_eq!(out.arguments(), Some(&want), "{cut}");
            assert!(out.repairs().is_empty(), "{cut}");
        }
        let out = tools.repair_call("search", r#"{"query": "rust", "limit": 5"#);
        assert!(out.notes().iter().any(|n| n.contains("/limit") && n.contains("dropped")), "{:?}", out.notes());
    }

    #[test]
    fn a_read_only_tool_refuses_an_uncertain_required_value() {
        let tools = tools();
        for cut in [r#"{"query": "hello wor"#, r#"{"query": "#, r#"{"limit": 5, "query"#, r#"{"query": nu"#] {
            let out = tools.repair_call("search", cut);
            let refusal = out.refusal().unwrap_or_else(|| panic!("{cut}: accepted {:?}", out.arguments_text()));
            assert!(refusal.message.contains("/query"), "{cut}: {}", refusal.message);
        }
    }

    #[test]
    fn fix_reply_applies_the_token_limit() {
        let tools = tools();
        let calls = json!([{"id": "a", "function": {"name": "transfer", "arguments": "{\"account\": \"A-7\""}}]);
        let stop =
            fix_reply(&Reply::new("").with_tool_calls(&calls), Some(&tools), None, &FixOptions::default()).unwrap();
        assert_eq!(stop.calls[0].status, CallStatus::Repaired);
        let reply = Reply::new("").with_tool_calls(&calls).with_finish_reason("length");
        let cut = fix_reply(&reply, Some(&tools), None, &FixOptions::default()).unwrap();
        assert_eq!(cut.calls[0].status, CallStatus::Refused);
        assert!(cut.calls[0].message().unwrap().contains("cut off"));
    }

    #[test]
    fn duplicate_keys_with_different_values_are_refused() {
        let tools = tools();
        for text in [
            r#"{"account": "A-7", "amount": 1800, "amount": 1801}"#,
            r#"{"account": "A-7", "amount": 1800, "amount": 1801"#,
            "{'account': 'A-7', 'amount': 1800, 'amount': 1801,}",
        ] {
            let out = tools.repair_call("transfer", text);
            let refusal = out.refusal().unwrap_or_else(|| panic!("{text}: accepted {:?}", out.arguments_text()));
            if text.ends_with('}') {
                assert!(refusal.message.contains("/amount"), "{}", refusal.message);
                assert!(refusal.message.contains("1800, then 1801"), "{}", refusal.message);
            }
        }
        let out = tools.repair_call("search", r#"{"query": "a", "filter": {"k": 1, "k": [2]}}"#);
        assert!(out.refusal().unwrap().message.contains("/filter/k"));
    }

    #[test]
    fn duplicate_keys_with_equal_values_are_kept_once() {
        let tools = tools();
        let out = tools.repair_call("transfer", r#"{"account": "A-7", "amount": 18.50, "amount": 18.50}"#);
        assert!(out.is_ok(), "{:?}", out.refusal());
        assert_eq!(out.arguments_text(), Some(r#"{"account": "A-7", "amount": 18.50}"#));
        assert!(out.notes().iter().any(|n| n.contains("/amount")), "{:?}", out.notes());
        assert_eq!(out.outcome(), toolfix::Outcome::Repaired);
    }
}

/// Issue 24 §4: a wrapper the tool does not declare (`{"args": {...`) is not part of the
/// arguments, so a cut after a complete value inside it is read as for the arguments alone
/// (only closers missing: closed), while a cut inside a value, after `,` or `:`, or under
/// the token limit is refused as it is without the wrapper.
#[test]
fn a_wrapper_does_not_make_a_cut_evident() {
    let tools = toolfix::ToolSet::new(&[serde_json::json!({"name": "write", "parameters": {"type": "object",
        "properties": {"a": {"type": "string"}, "b": {"type": "string"}}, "required": ["a"]}})])
    .unwrap();
    for (text, ok) in [
        (r#"{"args": {"a": "x", "b": "y""#, true),
        (r#"{"arguments": {"a": "x""#, true),
        (r#"{"a": "x", "b": "y""#, true),
        (r#"{"args": {"a": "x", "b": "y"#, false),
        (r#"{"args": {"a": "x","#, false),
        (r#"{"args": {"a": "x", "b":"#, false),
        (r#"{"args": {"a": ["x""#, false),
    ] {
        let outcome = tools.repair_call("write", text);
        assert_eq!(outcome.is_ok(), ok, "{text}: {:?}", outcome.refusal());
        if ok {
            assert_eq!(outcome.arguments().unwrap()["a"], "x");
        }
        let cut = toolfix::CallOptions::default().with_hit_token_limit(true);
        assert!(!tools.repair_call_with("write", text, &cut).is_ok(), "{text} under the token limit");
    }
}
