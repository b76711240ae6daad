//! Fuzz `extract` and the streaming assembler: no panic on any input, and the stream fed
//! in chunks (sizes taken from the input) gives the whole-text result.

#![no_main]

use libfuzzer_sys::fuzz_target;
use std::collections::HashMap;
use toolfix::extract::stream::{StreamEvent, StreamExtractor};
use toolfix::extract::{Message, Options, ThinkBlocks, ToolLookup, extract_with};

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else { return };
    let options = if mode & 1 == 0 {
        Options::default()
    } else {
        Options::default().with_think_blocks(ThinkBlocks::Keep)
    };
    // Declared tools turn on the forms only they allow (glued names, Kimi K2 ids without
    // markers, Functionary's first recipient, built-in Harmony tools, leaked parameters).
    let set: HashMap<String, serde_json::Value> = ["f", "get_weather", "python", "functions.f"]
        .iter()
        .map(|n| {
            let schema = serde_json::json!({"type": "object", "properties": {
                "a": {"type": "integer"}, "city": {"type": "string"}, "code": {"type": ["object", "string"]}}});
            ((*n).to_owned(), schema)
        })
        .collect();
    let tools = (mode & 2 != 0).then_some(&set as &dyn ToolLookup);
    let chunk = usize::from(mode >> 2) % 32 + 1;

    let mut stream = StreamExtractor::new(tools, options);
    let mut events = Vec::new();
    for piece in rest.chunks(chunk) {
        events.extend(stream.push(piece));
    }
    events.extend(stream.finish());

    let Ok(text) = std::str::from_utf8(rest) else { return };
    let whole = extract_with(&Message::new(text), tools, &options);

    // Differential: the stream assembles to the whole-text result.
    let mut content = String::new();
    let mut reasoning: Option<String> = None;
    let mut calls = Vec::new();
    for e in events {
        match e {
            StreamEvent::Text(t) => content.push_str(&t),
            StreamEvent::ContentWasReasoning => reasoning.get_or_insert_default().push_str(&std::mem::take(&mut content)),
            StreamEvent::Reasoning(r) => reasoning.get_or_insert_default().push_str(&r),
            StreamEvent::Call(c) => calls.push((c.name.into_owned(), c.arguments.into_owned(), c.id.map(|i| i.into_owned()))),
            _ => {}
        }
    }
    assert_eq!(content, whole.content, "content");
    let whole_reasoning = whole.reasoning_content.map(|r| r.into_owned());
    assert_eq!(reasoning, whole_reasoning, "reasoning");
    let whole_calls: Vec<_> = whole
        .calls
        .into_iter()
        .map(|c| (c.name.into_owned(), c.arguments.into_owned(), c.id.map(|i| i.into_owned())))
        .collect();
    assert_eq!(calls, whole_calls, "calls");
});
