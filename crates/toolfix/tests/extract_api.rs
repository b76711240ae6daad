//! The extraction API around the formats: notes, ids, dedupe, options, JSON output.

use serde_json::json;
use std::collections::HashMap;
use toolfix::extract::{
    Channel, Format, Message, NoteKind, Options, ReasoningCalls, ThinkBlocks, ToolLookup, extract, extract_with,
    supported_formats,
};

fn tools() -> HashMap<String, serde_json::Value> {
    HashMap::from([("get_weather".to_owned(), json!({"type": "object"}))])
}

#[test]
fn every_format_is_wired() {
    let wired = supported_formats();
    for f in Format::ALL {
        assert!(wired.contains(f), "{f} has no parser in the registry");
    }
}

#[test]
fn unknown_tool_in_prose_is_text_and_a_note() {
    let t = tools();
    let text = r#"Example: {"name": "rm_rf", "arguments": {"path": "/"}}"#;
    let x = extract(&Message::new(text), Some(&t as &dyn ToolLookup));
    assert!(x.calls.is_empty());
    assert_eq!(x.content, text);
    assert_eq!(x.notes.len(), 1);
    assert_eq!(x.notes[0].kind, NoteKind::UnknownTool);
    assert_eq!(x.notes[0].name.as_deref(), Some("rm_rf"));
}

#[test]
fn duplicates_across_channels_are_dropped_with_a_note_and_ids_are_kept_or_made() {
    let native = json!([{"id": "srv_1", "function": {"name": "get_weather", "arguments": "{\"city\":\"Oslo\"}"}}]);
    let text = r#"<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call><tool_call>{"name": "get_weather", "arguments": {"city": "Bergen"}}</tool_call>"#;
    let x = extract(&Message::new(text).with_tool_calls(&native), None);
    assert_eq!(x.calls.len(), 2);
    assert_eq!(x.calls[0].channel, Channel::ToolCalls);
    assert_eq!(x.calls[0].id.as_deref(), Some("srv_1"));
    assert_eq!(x.calls[1].arguments, r#"{"city": "Bergen"}"#);
    assert!(x.calls[1].id.as_deref().is_some_and(|id| id.starts_with("call_")));
    assert!(x.notes.iter().any(|n| n.kind == NoteKind::Duplicate));
    assert_eq!(x.content, "");
}

#[test]
fn think_blocks_move_by_default_or_stay() {
    let text = "<think>pondering</think>Answer.";
    let moved = extract(&Message::new(text), None);
    assert_eq!(moved.content, "Answer.");
    assert_eq!(moved.reasoning_content.as_deref(), Some("pondering"));
    let kept = extract_with(&Message::new(text), None, &Options::default().with_think_blocks(ThinkBlocks::Keep));
    assert_eq!(kept.content, text);
    assert_eq!(kept.reasoning_content, None);
}

/// A reasoning block that never closes and holds a call: the call is the model's call (a
/// server's reasoning parser reads the call's start as the end of the reasoning), the
/// rest of the block is reasoning. A closed block keeps a call drafted in it as written.
#[test]
fn an_unclosed_block_that_holds_a_call() {
    let call = r#"<tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call>"#;
    let text = format!("Sure. <think>I will call f.\n{call}\nthen wait");
    let x = extract(&Message::new(&text), None);
    assert_eq!(x.calls.len(), 1);
    assert_eq!((&*x.calls[0].name, x.calls[0].channel), ("f", Channel::Content));
    assert_eq!(x.content, "Sure. ");
    assert_eq!(x.reasoning_content.as_deref(), Some("I will call f.\n\nthen wait"));

    let closed = format!("<think>I will call f.\n{call}</think>Done.");
    let x = extract(&Message::new(&closed), None);
    assert_eq!(x.calls[0].channel, Channel::Reasoning);
    assert_eq!(x.reasoning_content.as_deref(), Some(format!("I will call f.\n{call}").as_str()));
    assert_eq!(x.content, "Done.");

    // Kept blocks stay as written; the call is still found.
    let keep = Options::default().with_think_blocks(ThinkBlocks::Keep);
    let x = extract_with(&Message::new(&text), None, &keep);
    assert_eq!((x.calls.len(), &*x.content), (1, text.as_str()));
}

#[test]
fn reasoning_calls_policy() {
    let msg = Message::new(r#"<tool_call>{"name": "a", "arguments": {}}</tool_call>"#)
        .with_reasoning_content(r#"draft: <tool_call>{"name": "b", "arguments": {}}</tool_call>"#);
    let default = extract(&msg, None);
    assert_eq!(default.calls.iter().map(|c| &*c.name).collect::<Vec<_>>(), ["a"]);
    assert!(default.notes.iter().any(|n| n.kind == NoteKind::ReasoningCallsIgnored));
    let always = extract_with(&msg, None, &Options::default().with_reasoning_calls(ReasoningCalls::Always));
    assert_eq!(always.calls.iter().map(|c| &*c.name).collect::<Vec<_>>(), ["a", "b"]);
    assert_eq!(always.calls[1].channel, Channel::Reasoning);
    // Reasoning text is returned as written.
    assert_eq!(always.reasoning_content.as_deref(), msg.reasoning_content);
}

#[test]
fn calls_and_notes_serialize_with_the_text_as_written() {
    let line = json!({"id": "1", "content": "Hi <tool_call>{\"name\": \"f\", \"arguments\": {\"n\": 1.0}}</tool_call>", "reasoning_content": "r"});
    let x = extract(&Message::from_value(&line), None);
    let call = serde_json::to_value(&x.calls[0]).unwrap();
    assert_eq!(call["name"], "f");
    // The number's text survives: the arguments are the text found.
    assert_eq!(call["arguments"], "{\"n\": 1.0}");
    assert_eq!(call["format"], "hermes");
    assert_eq!(call["channel"], "content");
    assert_eq!(call["span"], json!([x.calls[0].span.start, x.calls[0].span.end]));
    assert_eq!(x.content, "Hi ");
    assert_eq!(x.reasoning_content.as_deref(), Some("r"));
}

#[test]
fn budget_of_failed_parses_is_reported() {
    let text = "<tool_calls>[ nope ".repeat(2000);
    let x = extract(&Message::new(&text), None);
    assert!(x.calls.is_empty());
    assert!(x.notes.iter().any(|n| n.kind == NoteKind::ScanBudgetExhausted));
    assert_eq!(x.content, text);
}

/// A call cut off inside a value is never presented as complete (issue 24 §3): formats
/// that build the arguments leave them open where the text stopped, so salvage reports
/// the cut (and the pipeline refuses it for a tool that may change things), and the call
/// says it was cut. No value is made up (`null`, closers, a completed literal).
#[test]
fn a_call_cut_in_a_value_is_not_complete() {
    let tools = std::collections::HashMap::from([(
        "create".to_owned(),
        json!({"type": "object", "properties": {"title": {"type": "string"}, "n": {"type": "integer"}}}),
    )]);
    for text in [
        "<tool_call>\n<function=create>\n<parameter=n>3</parameter>\n<parameter=title>\nLogin fa",
        "<seed:tool_call>\n<function=create>\n<parameter=title>Login fa",
        "<tool_call>\n<function=create>\n<parameter=n>3</parameter>\n<parameter=tit",
        "<minimax:tool_call>\n<invoke name=\"create\">\n<parameter name=\"title\">Login fa",
        "<function_calls><invoke name=\"create\"><parameter name=\"n\">1",
        "<tool_call>create<arg_key>n</arg_key><arg_value>3</arg_value><arg_key>title</arg_key><arg_value>Login fa",
        "<tool_call>create<arg_key>n</arg_key><arg_value>3</arg_value><arg_key>tit",
        "<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"create\">\n<｜DSML｜parameter name=\"title\" string=\"true\">Login fa",
        "]<]minimax[>[<tool_call>]<]minimax[>[<invoke name=\"create\">]<]minimax[>[<title>Login fa",
        "<|tool_call>call:create{n:3,title:<|\"|>Login fa",
        "<|tool_call>call:create{n:3,title:",
        "<|tool_call>call:create(n: 1",
    ] {
        let out = extract(&Message::new(text), Some(&tools));
        let [call] = out.calls.as_slice() else { panic!("{text}: {:?}", out.calls) };
        assert!(call.cut, "{text}");
        let s = toolfix::salvage::salvage(&call.arguments).unwrap();
        let t = s.truncation().unwrap_or_else(|| panic!("{text}: {}", call.arguments));
        assert!(t.is_evident() || !t.uncertain().is_empty(), "{text}: {}", call.arguments);
        assert!(!call.arguments.contains("null"), "{text}: {}", call.arguments);
    }
    // The call's closers missing after a complete value: closed, not evidently cut.
    let out = extract(&Message::new("<tool_call>\n<function=create>\n<parameter=n>3</parameter>\n"), Some(&tools));
    let s = toolfix::salvage::salvage(&out.calls[0].arguments).unwrap();
    assert!(
        out.calls[0].cut && !s.truncation().unwrap().is_evident() && s.truncation().unwrap().uncertain().is_empty()
    );
}

/// A string argument holding another declared parameter's markup (issue 24 §3): the XML
/// grammars read it as the parameters it holds; so does the pipeline for JSON and
/// server-parsed calls, as a repair, when that is unambiguous; otherwise it refuses. Never
/// one valid string.
#[test]
fn a_value_holding_another_parameters_markup() {
    let schema = json!({"type": "object", "properties": {
        "prompt": {"type": "string"},
        "preset": {"type": "array", "items": {"type": "string"}}
    }, "required": ["prompt"]});
    let lookup = HashMap::from([("draw".to_owned(), schema.clone())]);
    // Qwen3-Coder whose value ran on into MiniMax-style markup.
    let text = "<tool_call>\n<function=draw>\n<parameter=prompt>\nA cat, dark mode.</prompt>\n<parameter name=\"preset\">[\"dark\"]\n</parameter>\n</function>\n</tool_call>";
    let out = extract(&Message::new(text), Some(&lookup));
    let args: serde_json::Value = serde_json::from_str(&out.calls[0].arguments).unwrap();
    assert_eq!(args, json!({"prompt": "A cat, dark mode.", "preset": ["dark"]}));

    let tools = toolfix::ToolSet::new(&[json!({"name": "draw", "parameters": schema})]).unwrap();
    // A JSON call: split, reported.
    let split = tools.repair_call(
        "draw",
        r#"{"prompt": "A cat, dark mode.</prompt>\n<arg_key>preset</arg_key><arg_value>[\"dark\"]</arg_value>"}"#,
    );
    assert_eq!(split.arguments(), Some(&json!({"prompt": "A cat, dark mode.", "preset": ["dark"]})));
    assert_eq!(split.repairs()[0].kind.as_str(), "markup_split");
    // Ambiguous: the parameter is given as well.
    let both = tools.repair_call(
        "draw",
        r#"{"prompt": "A cat.</prompt>\n<parameter=preset>[\"dark\"]</parameter>", "preset": ["light"]}"#,
    );
    let refusal = both.refusal().unwrap();
    assert_eq!(refusal.issues[0].path, "/prompt");
    insta::assert_snapshot!("leaked_markup_refusal", refusal.message);
    // Markup that opens no declared parameter, or sits inside the text: a string.
    let html = tools.repair_call("draw", r#"{"prompt": "A <b>cat</b> with <parameter=preset> in it"}"#);
    assert_eq!(html.outcome(), toolfix::Outcome::Untouched);
}
