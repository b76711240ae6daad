//! A call the model only shows is not a call (`extract::intent`): replies that explain,
//! quote, illustrate or ask stay prose (or are refused for a tool that may change things),
//! replies that leak a call still run it — whole, streamed at every chunking, and as a
//! property: adding a showing signal never turns a reply into a call.

#![expect(clippy::unwrap_used, reason = "tests")]

use serde_json::{Value, json};
use toolfix::extract::{Intent, LeakedCalls, Message, NoteKind, Options, extract, extract_with};
use toolfix::{CallStatus, FixOptions, FixedReply, Reply, ReplyEvent, ReplyStream, ToolSet, fix_reply};

const CASES: &str = include_str!("fixtures/intent/cases.jsonl");

fn tools() -> ToolSet {
    let object = |prop: &str| json!({"type": "object", "properties": {prop: {"type": "string"}}, "required": [prop]});
    ToolSet::new(&[
        json!({"name": "delete_file", "parameters": object("path")}),
        json!({"name": "send_money", "parameters": {"type": "object",
            "properties": {"to": {"type": "string"}, "amount": {"type": "integer"}}, "required": ["to", "amount"]}}),
        json!({"name": "get_weather", "parameters": object("city"), "x-toolfix": {"effect": "read_only"}}),
        json!({"name": "list_files", "parameters": object("path"), "x-toolfix": {"effect": "read_only"}}),
    ])
    .unwrap()
}

struct Case {
    id: String,
    content: String,
    reasoning: Option<String>,
    expect: String,
}

fn cases() -> Vec<Case> {
    CASES
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            Case {
                id: v["id"].as_str().unwrap().to_owned(),
                content: v["content"].as_str().unwrap().to_owned(),
                reasoning: v["reasoning_content"].as_str().map(str::to_owned),
                expect: v["expect"].as_str().unwrap().to_owned(),
            }
        })
        .collect()
}

fn reply(c: &Case) -> Reply<'_> {
    let r = Reply::new(&c.content);
    match &c.reasoning {
        Some(t) => r.with_reasoning_content(t),
        None => r,
    }
}

/// The reply streamed in chunks of `size` bytes (on character boundaries).
fn streamed(c: &Case, tools: &ToolSet, size: usize) -> FixedReply {
    let mut stream = ReplyStream::new(Some(tools), None, FixOptions::default());
    for piece in pieces(c.reasoning.as_deref().unwrap_or(""), size) {
        stream.push_reasoning(piece).unwrap();
    }
    let mut shown = String::new();
    for piece in pieces(&c.content, size) {
        for e in stream.push_content(piece).unwrap() {
            if let ReplyEvent::Content(t) = e {
                shown.push_str(&t);
            }
        }
    }
    let (events, fixed) = stream.finish(Some("stop"));
    for e in events {
        if let ReplyEvent::Content(t) = e {
            shown.push_str(&t);
        }
    }
    assert_eq!(shown, fixed.content, "{}: the text sent is the content", c.id);
    fixed
}

fn pieces(text: &str, size: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < text.len() {
        let mut end = (at + size).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        out.push(&text[at..end]);
        at = end;
    }
    out
}

fn summary(f: &FixedReply) -> Vec<(String, CallStatus, Intent)> {
    f.calls.iter().map(|c| (c.name.clone(), c.status, c.intent)).collect()
}

#[test]
fn shown_calls_stay_prose_and_leaked_calls_run() {
    let tools = tools();
    let mut failures = Vec::new();
    for c in cases() {
        let fixed = fix_reply(&reply(&c), Some(&tools), None, &FixOptions::default()).unwrap();
        let ok = match c.expect.as_str() {
            "prose" => {
                fixed.calls.is_empty()
                    && fixed.notes.iter().any(|n| n.kind == NoteKind::ShownCall)
                    && (c.reasoning.is_some() || fixed.content == c.content)
            }
            "call" => !fixed.calls.is_empty() && fixed.calls.iter().all(|f| f.status.is_usable()),
            "uncertain" => {
                !fixed.calls.is_empty()
                    && fixed.calls.iter().all(|f| {
                        f.intent == Intent::Uncertain
                            && match f.name.as_str() {
                                "get_weather" | "list_files" => f.status.is_usable(),
                                _ => f.status == CallStatus::Refused,
                            }
                    })
            }
            other => panic!("{}: unknown expectation {other}", c.id),
        };
        if !ok {
            failures.push(format!("{} (expected {}): {}", c.id, c.expect, serde_json::to_string(&fixed).unwrap()));
        }
        // Streamed == whole, at several chunkings.
        for size in [1, 3, 7, 64] {
            let s = streamed(&c, &tools, size);
            assert_eq!(summary(&s), summary(&fixed), "{}: chunks of {size}", c.id);
            assert_eq!(s.content, fixed.content, "{}: chunks of {size}", c.id);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_refusal_of_an_uncertain_call_tells_the_model_what_to_do() {
    let tools = tools();
    let text = "For example:\n<tool_call>{\"name\": \"delete_file\", \"arguments\": {\"path\": \"/a\"}}</tool_call>";
    let fixed = fix_reply(&Reply::new(text), Some(&tools), None, &FixOptions::default()).unwrap();
    let call = &fixed.calls[0];
    assert_eq!(call.status, CallStatus::Refused);
    let json = serde_json::to_value(call).unwrap();
    assert_eq!(json["intent"], "uncertain");
    assert_eq!(json["signals"], json!(["example", "ends_reply"]));
    insta::assert_snapshot!(call.message().unwrap());
}

#[test]
fn a_call_in_content_beside_the_servers_own_calls_is_uncertain_when_text_goes_on() {
    let tools = tools();
    let server = json!([{"id": "s1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Rome\"}"}}]);
    // The server made its call; the text shows another and goes on.
    let text =
        "<tool_call>{\"name\": \"delete_file\", \"arguments\": {\"path\": \"/a\"}}</tool_call>\nThat one can wait.";
    let fixed =
        fix_reply(&Reply::new(text).with_tool_calls(&server), Some(&tools), None, &FixOptions::default()).unwrap();
    let delete = fixed.calls.iter().find(|c| c.name == "delete_file").unwrap();
    assert_eq!((delete.intent, delete.status), (Intent::Uncertain, CallStatus::Refused));
    let weather = fixed.calls.iter().find(|c| c.name == "get_weather").unwrap();
    assert_eq!((weather.id.as_str(), weather.status), ("s1", CallStatus::Untouched));
}

#[test]
fn policies_trust_and_never_globally_and_per_tool() {
    let shown = "For example, <tool_call>{\"name\": \"delete_file\", \"arguments\": {\"path\": \"/a\"}}</tool_call> deletes a file.";
    let leak = "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}</tool_call>";
    let trust = Options::default().with_leaked_calls(LeakedCalls::Trust);
    assert_eq!(extract_with(&Message::new(shown), None, &trust).calls.len(), 1);
    let never = Options::default().with_leaked_calls(LeakedCalls::Never);
    let out = extract_with(&Message::new(leak), None, &never);
    assert!(out.calls.is_empty());
    assert_eq!(out.content, leak);
    // A tool's own policy wins for calls to it.
    let tools = tools().with_leaked_calls("delete_file", LeakedCalls::Trust).unwrap();
    let fixed = fix_reply(&Reply::new(shown), Some(&tools), None, &FixOptions::default()).unwrap();
    assert_eq!(fixed.calls.len(), 1);
    let tools = self::tools().with_leaked_calls("get_weather", LeakedCalls::Never).unwrap();
    let fixed = fix_reply(&Reply::new(leak), Some(&tools), None, &FixOptions::default()).unwrap();
    assert!(fixed.calls.is_empty());
    // A definition is never a call, trusted or not.
    let def = r#"{"name": "list_files", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}"#;
    assert!(extract_with(&Message::new(def), None, &trust).calls.is_empty());
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    const MARKUP: &[&str] = &[
        "<tool_call>{\"name\": \"delete_file\", \"arguments\": {\"path\": \"/a\"}}</tool_call>",
        "{\"name\": \"delete_file\", \"arguments\": {\"path\": \"/a\"}}",
        "```json\n{\"name\": \"send_money\", \"arguments\": {\"to\": \"bob\", \"amount\": 5}}\n```",
        "<tool_call>\n<function=delete_file>\n<parameter=path>\n/a\n</parameter>\n</function>\n</tool_call>",
        "[TOOL_CALLS][{\"name\": \"delete_file\", \"arguments\": {\"path\": \"/a\"}}]",
        "[delete_file(path='/a')]",
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>delete_file<｜tool▁sep｜>{\"path\": \"/a\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
    ];
    const LEADS: &[&str] = &["", "Sure.\n", "Let me do that.\n", "I need the file gone. "];
    const TAILS: &[&str] = &["", "\n", "<|im_end|>", "\nDone soon.", "\nWould you like to know more?"];
    const SHOWING_BEFORE: &[&str] = &["For example, ", "It looks like this:\n", "You wrote ", "The syntax is "];
    const SHOWING_AFTER: &[&str] = &["\nShall I go ahead?", "\nDo you want me to run it?", "\nI did not run it."];

    /// prose < uncertain < call.
    fn rank(text: &str) -> u8 {
        let out = extract(&Message::new(text), Some(&tools() as &dyn toolfix::extract::ToolLookup));
        match out.calls.first() {
            None => 0,
            Some(c) if c.intent == Intent::Uncertain => 1,
            Some(_) => 2,
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// Adding a showing signal (words before the markup, a question after it) never
        /// turns a reply from prose or uncertain into a call, nor a call into a surer one.
        #[test]
        fn a_showing_signal_never_makes_a_call(
            m in 0..MARKUP.len(), l in 0..LEADS.len(), t in 0..TAILS.len(),
            before in 0..SHOWING_BEFORE.len(), after in 0..SHOWING_AFTER.len(), where_ in 0..3u8,
        ) {
            let base = format!("{}{}{}", LEADS[l], MARKUP[m], TAILS[t]);
            let shown = match where_ {
                0 => format!("{}{}{}{}", LEADS[l], SHOWING_BEFORE[before], MARKUP[m], TAILS[t]),
                1 => format!("{}{}{}", LEADS[l], MARKUP[m], SHOWING_AFTER[after]),
                _ => format!("{}{}{}{}", LEADS[l], SHOWING_BEFORE[before], MARKUP[m], SHOWING_AFTER[after]),
            };
            let (a, b) = (rank(&base), rank(&shown));
            prop_assert!(b <= a, "{base:?} ranks {a}, {shown:?} ranks {b}");
            prop_assert!(b < 2, "{shown:?} is taken as a call");
        }
    }
}
