//! Hostile input: replies full of half-open markup come back (the scan is linear: one
//! automaton pass, a budget of failed parses, no re-scan per marker). No timing here: a
//! quadratic scan would make this test take minutes instead of a fraction of a second.

use toolfix::extract::stream::StreamExtractor;
use toolfix::extract::{Message, Options, extract};

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

#[test]
fn half_open_tags_everywhere() {
    let mut texts: Vec<String> = PIECES.iter().map(|p| reply(&[p], 100_000)).collect();
    texts.push(reply(PIECES, 100_000));
    for text in &texts {
        let out = extract(&Message::new(text), None);
        assert!(out.content.len() <= text.len());
        let mut s = StreamExtractor::new(None, Options::default());
        for chunk in text.as_bytes().chunks(4096) {
            let _ = s.push(chunk);
        }
        let _ = s.finish();
    }
}
