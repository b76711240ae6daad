//! The streaming core fed upstream bodies split at every byte: the client gets the same
//! thing each time, and it is what the whole-reply API gives for the same reply.

use super::Fixer;
use crate::recover::Fixed;
use crate::sse;
use crate::summary::Summary;
use bytes::Bytes;
use serde_json::{Value, json};
use toolfix::{FixOptions, Reply, ToolSet, fix_reply};

fn tools() -> ToolSet {
    ToolSet::new(&[
        json!({"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}, "required": ["city"]}}}),
        json!({"type": "function", "function": {"name": "tag_files", "parameters": {"type": "object",
            "properties": {"paths": {"type": "array", "items": {"type": "string"}}}, "required": ["paths"]}}}),
    ])
    .unwrap()
}

fn chunk(delta: &Value, finish: Option<&str>) -> String {
    let c = json!({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
                   "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
    format!("data: {c}\n\n")
}

/// An upstream body: content pieces, reasoning pieces, tool-call deltas, a usage chunk.
fn body(reasoning: &[&str], content: &[&str], calls: &[Value], finish: &str) -> Vec<u8> {
    let mut out = chunk(&json!({"role": "assistant", "content": ""}), None);
    for r in reasoning {
        out += &chunk(&json!({"reasoning_content": r}), None);
    }
    for t in content {
        out += &chunk(&json!({"content": t}), None);
    }
    for c in calls {
        out += &chunk(&json!({"tool_calls": [c]}), None);
    }
    out += &chunk(&json!({}), Some(finish));
    out += "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[],\"usage\":{\"total_tokens\":9}}\r\n\r\n";
    out += "data: [DONE]\n\n";
    out.into_bytes()
}

/// What a client assembling deltas sees (as the official SDK does).
#[derive(Debug, PartialEq)]
struct Seen {
    content: String,
    reasoning: String,
    calls: Vec<(String, String, String)>,
    finish: Option<String>,
    usage: bool,
    done: bool,
}

fn assemble(frames: &[Bytes]) -> Seen {
    let mut p = sse::Parser::new(1 << 20);
    let mut events = Vec::new();
    for f in frames {
        events.extend(p.push(f).unwrap());
    }
    let mut seen = Seen {
        content: String::new(),
        reasoning: String::new(),
        calls: Vec::new(),
        finish: None,
        usage: false,
        done: false,
    };
    for e in events {
        if e.data == "[DONE]" {
            seen.done = true;
            continue;
        }
        let v: Value = serde_json::from_str(&e.data).unwrap();
        seen.usage |= v.get("usage").is_some_and(|u| !u.is_null());
        for c in v["choices"].as_array().unwrap() {
            let d = &c["delta"];
            seen.content += d["content"].as_str().unwrap_or("");
            seen.reasoning += d["reasoning_content"].as_str().unwrap_or("");
            for call in d["tool_calls"].as_array().into_iter().flatten() {
                let i = call["index"].as_u64().unwrap() as usize;
                if seen.calls.len() <= i {
                    seen.calls.resize(i + 1, Default::default());
                }
                let slot = &mut seen.calls[i];
                slot.0 += call["id"].as_str().unwrap_or("");
                slot.1 += call["function"]["name"].as_str().unwrap_or("");
                slot.2 += call["function"]["arguments"].as_str().unwrap_or("");
            }
            if let Some(f) = c["finish_reason"].as_str() {
                seen.finish = Some(f.to_owned());
            }
        }
    }
    seen
}

fn run(tools: &ToolSet, pieces: &[&[u8]]) -> (Seen, Value) {
    let mut fixer = Fixer::new(tools, None, FixOptions::default(), 1 << 20);
    let mut frames = Vec::new();
    for p in pieces {
        frames.extend(fixer.push(p).unwrap());
    }
    let ended = fixer.finish();
    frames.extend(ended.text);
    let answer = Fixed { response: ended.response, bytes: None, replies: ended.fixed };
    frames.extend(ended.closing.frames(&answer, false, &Summary::default()));
    (assemble(&frames), answer.response)
}

/// Every split of `input` gives what the whole does, and that is `fix_reply`'s answer.
fn check(input: &[u8]) -> Seen {
    let tools = tools();
    let (whole, response) = run(&tools, &[input]);
    for cut in 0..=input.len() {
        let (a, b) = input.split_at(cut);
        assert_eq!(run(&tools, &[a, b]).0, whole, "split at {cut}");
    }
    let bytes: Vec<&[u8]> = input.chunks(1).collect();
    assert_eq!(run(&tools, &bytes).0, whole, "byte by byte");
    let choice = &response["choices"][0];
    let fixed = fix_reply(&Reply::from_choice(choice), Some(&tools), None, &FixOptions::default()).unwrap();
    assert_eq!(whole.content, fixed.content);
    let calls: Vec<(String, String)> = whole.calls.iter().map(|c| (c.1.clone(), c.2.clone())).collect();
    let expected: Vec<(String, String)> = fixed
        .calls
        .iter()
        .filter(|c| c.status.is_usable())
        .map(|c| (c.name.clone(), c.arguments_text().unwrap().to_owned()))
        .collect();
    assert_eq!(calls, expected);
    assert!(whole.usage && whole.done);
    whole
}

#[test]
fn a_call_leaked_into_content_at_every_split() {
    let input = body(
        &[],
        &[
            "Let me ",
            "check.\n<tool",
            "_call>\n{\"name\": \"get_",
            "weather\", \"arguments\": {\"city\": \"Par",
            "is\", \"days\": \"3\"}}\n</tool_call>",
        ],
        &[],
        "stop",
    );
    let seen = check(&input);
    assert_eq!(seen.content, "Let me check.\n");
    assert_eq!(seen.calls.len(), 1);
    assert_eq!(seen.calls[0].2, "{\"city\": \"Paris\", \"days\": 3}");
    assert_eq!(seen.finish.as_deref(), Some("tool_calls"));
}

#[test]
fn server_call_deltas_at_every_split() {
    let calls = [
        json!({"index": 0, "id": "a", "type": "function", "function": {"name": "tag_files", "arguments": ""}}),
        json!({"index": 0, "function": {"arguments": "{\"paths\": \"[\\\"x\\\", "}}),
        json!({"index": 0, "function": {"arguments": "\\\"y\\\"]\"}"}}),
        json!({"index": 1, "id": "b", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Oslo\"}"}}),
    ];
    let input = body(&["thinking"], &[], &calls, "tool_calls");
    let seen = check(&input);
    assert_eq!(seen.reasoning, "thinking");
    assert_eq!(
        seen.calls,
        [
            ("a".to_owned(), "tag_files".to_owned(), "{\"paths\": [\"x\", \"y\"]}".to_owned()),
            ("b".to_owned(), "get_weather".to_owned(), "{\"city\": \"Oslo\"}".to_owned())
        ]
    );
}

#[test]
fn prose_goes_out_as_it_came_and_a_chunk_left_alone_goes_out_byte_for_byte() {
    let long = "Sunny in Paris, with a light wind from the west and no rain expected before the weekend. ";
    let input = body(&[], &[long, long, long], &[], "stop");
    let tools = tools();
    let mut fixer = Fixer::new(&tools, None, FixOptions::default(), 1 << 20);
    let frames = fixer.push(&input).unwrap();
    // The role chunk is not changed: it goes out as it came.
    let role = chunk(&json!({"role": "assistant", "content": ""}), None);
    assert_eq!(frames[0], role.as_bytes());
    // Text goes out before the stream ends (held back only as long as markup could start).
    assert!(assemble(&frames).content.len() > long.len());
    assert_eq!(check(&input).content, long.repeat(3));
}

#[test]
fn a_stream_cut_before_its_end_is_not_complete() {
    let input = body(&[], &["Hi"], &[], "stop");
    let text = String::from_utf8(input).unwrap();
    let cut = text.find("\"finish_reason\":\"stop\"").unwrap();
    let tools = tools();
    let mut fixer = Fixer::new(&tools, None, FixOptions::default(), 1 << 20);
    fixer.push(&text.as_bytes()[..cut]).unwrap();
    assert!(!fixer.finish().complete);
}
