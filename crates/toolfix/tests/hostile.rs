//! Hostile input: replies full of half-open markup of every format, oversized text, too
//! many calls, deep nesting. Each comes back promptly (the scan is linear: one automaton
//! pass, a budget of failed parses, bounded parser views) with the outcome the text calls
//! for — which calls, what prose, which note — and the stream agrees with the whole-text
//! read. No timing here: a quadratic scan would make these tests take minutes instead of a
//! fraction of a second.

use serde_json::Value;
use std::collections::HashMap;
use std::fmt::Write as _;
use toolfix::Limits;
use toolfix::extract::stream::{StreamEvent, StreamExtractor};
use toolfix::extract::{Extraction, Format, Message, NoteKind, Options, ToolLookup, extract, extract_with};

const PIECES: &[&str] = &[
    "<tool_call>{\"name\": \"x\", \"arguments\": {\"a\": \"",
    "<tool_call>",
    "<tool_call>get_weather\n<arg_key>",
    "<function=f>",
    "<function=f><parameter=a>",
    "[TOOL_CALLS]",
    "[TOOL_CALLS]name",
    "{\"name\": ",
    "[{\"name\": \"f\", ",
    "<think>",
    "</think>",
    "<|python_tag|>{",
    "<tool_calls>[",
    "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>",
    "<｜DSML｜function_calls><｜DSML｜invoke name=\"f\">",
    "<minimax:tool_call><invoke name=\"f\">",
    "<|tool_calls_section_begin|><|tool_call_begin|>",
    "functools[",
    ">>>f\n{",
    "```json\n{",
    "[f(a=",
    "<|START_ACTION|>[",
];

/// Fragments of every markup format, for adversarial mixes.
const FRAGMENTS: &[&str] = &[
    "<tool_call>",
    "</tool_call>",
    "<function=f>",
    "</function>",
    "<parameter=a>",
    "</parameter>",
    "<seed:tool_call>",
    "<arg_key>",
    "</arg_key>",
    "<arg_value>",
    "</arg_value>",
    "get_weather\n",
    "<｜DSML｜function_calls>",
    "<｜DSML｜invoke name=\"f\">",
    "<|DSML|parameter name=\"a\" string=\"true\">",
    "</｜｜DSML｜｜parameter>",
    "<｜DSML｜tool_calls>",
    "<|tool_calls_section_begin|>",
    "<|tool_call_begin|>",
    "functions.f:0",
    "<|tool_call_argument_begin|>",
    "<|tool_call_end|>",
    "<｜tool▁calls▁begin｜>",
    "<｜tool▁call▁begin｜>",
    "function<｜tool▁sep｜>f\n```json\n",
    "<｜tool▁call▁end｜>",
    "<|start|>assistant",
    "<|channel|>commentary to=functions.f",
    "<|message|>",
    "<|call|>",
    "<|tool_call>call:f{",
    "a:<|\"|>x",
    "<tool_call|>",
    "<minimax:tool_call>",
    "<invoke name=\"f\">",
    "<parameter name=\"a\">",
    "</invoke>",
    "]<]minimax[>[<tool_call>",
    "]<]minimax[>[<invoke name=\"f\">",
    "]<]minimax[>[<a>",
    "<｜tool_calls_begin｜>",
    "<｜tool_call_begin｜>",
    "<steptml:invoke name=\"f\">",
    "<steptml:parameter name=\"a\">",
    "<atem:function_calls>",
    "<atem:invoke name=\"f\">",
    "[f(a=[{'k': (1, ",
    "<|python_start|>",
    "<|tool_call_start|>[g(",
    "<function_calls>h(x=",
    "{",
    "[",
    "(",
    "'",
    "\"",
    "\n",
    " ",
    "x",
    "1",
    ",",
    ")",
    "]",
    "}",
    ":",
    "=",
];

fn reply(pieces: &[&str], size: usize) -> String {
    let mut s = String::with_capacity(size + 64);
    let mut i = 0;
    while s.len() < size {
        s.push_str(pieces[i % pieces.len()]);
        s.push_str(" a ");
        i += 1;
    }
    s
}

/// The text fed to the stream in chunks of `chunk` bytes: prose and calls as assembled.
fn streamed(text: &str, tools: Option<&dyn ToolLookup>, options: Options, chunk: usize) -> (String, Vec<String>) {
    let mut s = StreamExtractor::new(tools, options);
    let mut events = Vec::new();
    for piece in text.as_bytes().chunks(chunk) {
        events.extend(s.push(piece));
        assert!(s.held() <= 2 * options.limits.max_held_bytes + 8192, "the stream holds {} bytes", s.held());
    }
    events.extend(s.finish());
    let mut content = String::new();
    let mut calls = Vec::new();
    for e in events {
        match e {
            StreamEvent::Text(t) => content.push_str(&t),
            StreamEvent::Call(c) => calls.push(format!("{}{}", c.name, c.arguments)),
            _ => {}
        }
    }
    (content, calls)
}

fn calls_of(x: &Extraction<'_>) -> Vec<String> {
    x.calls.iter().map(|c| format!("{}{}", c.name, c.arguments)).collect()
}

/// 100 KB of one half-open piece of each format (and of all of them mixed): nothing in
/// them is a complete call, so the text comes back as prose; the stream agrees.
#[test]
fn half_open_tags_everywhere() {
    let mut texts: Vec<String> = PIECES.iter().map(|p| reply(&[p], 100_000)).collect();
    texts.push(reply(PIECES, 100_000));
    for pattern in [
        "<|tool_call>call:f{a:[",
        "<|tool_call>call:f{a:<|\"|>x",
        "<｜DSML｜function_calls><｜DSML｜invoke name=\"f\">{\"a\": ",
        "[f(a='",
        "[f(a=[",
        "<|channel|>commentary to=functions.f<|message|>{",
        "]<]minimax[>[<tool_call>]<]minimax[>[<invoke name=\"f\">]<]minimax[>[<a>",
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{",
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{",
    ] {
        texts.push(pattern.repeat(100_000 / pattern.len() + 1));
    }
    texts.push(FRAGMENTS.iter().cycle().take(4000).copied().collect());
    for text in &texts {
        let out = extract(&Message::new(text), None);
        let (content, calls) = streamed(text, None, Options::default(), 4096);
        assert_eq!(content, out.content, "{}", &text[..40]);
        assert_eq!(calls, calls_of(&out), "{}", &text[..40]);
    }
}

/// Markers that never parse: past the budget of failed parses the rest is prose, and a
/// note says so.
#[test]
fn failed_parses_run_out_with_a_note() {
    for piece in ["<tool_calls>[ nope ", "<tool_call> nothing ", "<function=f> x ", "<|tool_call>call:f "] {
        let text = piece.repeat(3000);
        let out = extract(&Message::new(&text), None);
        assert!(out.calls.is_empty(), "{piece}");
        assert_eq!(out.content, text, "{piece}");
        assert!(out.notes.iter().any(|n| n.kind == NoteKind::ScanBudgetExhausted), "{piece}");
    }
}

/// Text past `max_text_bytes` is not read for calls: a call there stays prose, and a
/// note gives the byte where reading stopped.
#[test]
fn text_past_the_cap_is_prose() {
    let call = "<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>";
    let text = format!("{call}{}{call}", "filler text. ".repeat(1000));
    let options = Options::default().with_limits(Limits::default().with_max_text_bytes(4096));
    let out = extract_with(&Message::new(&text), None, &options);
    assert_eq!(out.calls.len(), 1);
    assert!(out.content.ends_with(call));
    let note = out.notes.iter().find(|n| n.kind == NoteKind::TextTooLarge).unwrap();
    assert_eq!(note.span.start, 4096);
    let (content, calls) = streamed(&text, None, options, 333);
    assert_eq!((content, calls), (out.content.into_owned(), vec!["f{}".to_owned()]));
}

/// More calls than `max_calls`: the first ones are kept, a note says the rest were
/// dropped.
#[test]
fn too_many_calls_are_capped() {
    let mut text = String::new();
    for i in 0..300 {
        let _ = write!(text, "<tool_call>{{\"name\": \"f\", \"arguments\": {{\"i\": {i}}}}}</tool_call>");
    }
    let out = extract(&Message::new(&text), None);
    assert_eq!(out.calls.len(), Limits::DEFAULT_MAX_CALLS);
    assert_eq!(out.calls.last().unwrap().arguments, format!("{{\"i\": {}}}", Limits::DEFAULT_MAX_CALLS - 1));
    assert_eq!(out.notes.iter().filter(|n| n.kind == NoteKind::TooManyCalls).count(), 1);
    assert_eq!(out.content, "");
    let (content, calls) = streamed(&text, None, Options::default(), 1000);
    assert_eq!((content, calls), (String::new(), calls_of(&out)));
}

/// Literals nested deeper than `max_depth` are not read: no call, no stack overflow.
#[test]
fn deep_nesting_is_refused() {
    for text in [
        format!("[f(a={}1{})]", "[".repeat(5000), "]".repeat(5000)),
        format!("<|tool_call>call:f{{a:{}1{}}}<tool_call|>", "[".repeat(5000), "]".repeat(5000)),
        format!("]<]minimax[>[<tool_call>]<]minimax[>[<invoke name=\"f\">{}", "]<]minimax[>[<a>".repeat(5000)),
    ] {
        let out = extract(&Message::new(&text), None);
        for c in &out.calls {
            // A call cut off is left open where it stopped: salvage closes it, and says so.
            let s = toolfix::salvage::salvage(&c.arguments).unwrap();
            assert_eq!(s.is_truncated(), c.cut);
            assert!(s.to_value().unwrap().is_object());
        }
        assert!(out.calls.iter().all(|c| c.format == Format::MinimaxM3), "{:?}", calls_of(&out));
    }
    let shallow = format!("[f(a={}1{})]", "[".repeat(10), "]".repeat(10));
    assert_eq!(extract(&Message::new(&shallow), None).calls.len(), 1);
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config::with_cases(256))]

    /// Any mix of fragments: no panic; formats that build the arguments from raw
    /// parameters build strict JSON objects, or, for a call cut off, an object left open
    /// where the text stopped, which salvage closes and reports as cut (the others hand
    /// over the model's JSON text for salvage); the stream agrees with the whole-text read.
    #[test]
    fn fragments_never_panic(picks in proptest::collection::vec(0..FRAGMENTS.len(), 0..40)) {
        let text: String = picks.iter().map(|&i| FRAGMENTS[i]).collect();
        let tools: HashMap<String, Value> = HashMap::from([(
            "f".to_owned(),
            serde_json::json!({"properties": {"a": {"type": "integer"}, "k": {"type": "object"}}}),
        )]);
        for lookup in [None, Some(&tools as &dyn ToolLookup)] {
            let out = extract(&Message::new(&text), lookup);
            for c in &out.calls {
                proptest::prop_assert!(!c.name.is_empty());
                let borrows = matches!(
                    c.format,
                    Format::KimiK2
                        | Format::DeepseekV3
                        | Format::DeepseekV31
                        | Format::DeepseekV32Dsml
                        | Format::DeepseekV4Dsml
                        | Format::GptOssHarmony
                        | Format::Json
                        | Format::Hermes
                        | Format::FunctionaryV31
                        | Format::Glued
                        | Format::React
                );
                if !borrows {
                    let value: Result<Value, _> = serde_json::from_str(&c.arguments);
                    if value.is_err() && c.cut {
                        let s = toolfix::salvage::salvage(&c.arguments);
                        proptest::prop_assert!(
                            s.is_ok_and(|s| s.is_truncated() && s.to_value().is_ok_and(|v| v.is_object())),
                            "{}: {}", c.format, c.arguments
                        );
                    } else {
                        proptest::prop_assert!(value.is_ok_and(|v| v.is_object()), "{}: {}", c.format, c.arguments);
                    }
                }
            }
            let (content, calls) = streamed(&text, lookup, Options::default(), 5);
            proptest::prop_assert_eq!(calls, calls_of(&out));
            proptest::prop_assert_eq!(content, out.content.into_owned());
        }
    }
}

/// A cut parameter whose raw text opens a container salvage cannot close (`{` then
/// markup) stays an open string: the arguments left open still salvage to an object, cut
/// (found by `fragments_never_panic`).
#[test]
fn a_cut_value_salvage_cannot_close_stays_a_string() {
    let text = "<function=f><parameter=a><parameter=a>{<｜tool▁call▁end｜>";
    let out = extract(&Message::new(text), None);
    assert_eq!(out.calls.len(), 1);
    let c = &out.calls[0];
    assert!(c.cut);
    let s = toolfix::salvage::salvage(&c.arguments).unwrap();
    assert!(s.is_truncated());
    assert!(s.to_value().unwrap().is_object());
}
