//! Streaming equivalence: every format case fed whole, byte by byte and in random chunks
//! gives exactly the whole-text result; long replies too (where calls are sent before the
//! stream ends).

use crate::common;

use std::fmt::Write as _;
use toolfix::Limits;
use toolfix::extract::stream::{StreamEvent, StreamExtractor};
use toolfix::extract::{ExtractedCall, Message, Options, ThinkBlocks, ToolLookup, extract_with};

/// A call as compared: everything it carries.
type Call = (String, String, Option<String>, toolfix::extract::Format, toolfix::extract::Channel, toolfix::Span);

#[derive(Debug, PartialEq)]
struct Assembled {
    content: String,
    reasoning: Option<String>,
    calls: Vec<Call>,
}

fn call(c: &ExtractedCall<'_>) -> Call {
    (c.name.to_string(), c.arguments.to_string(), c.id.as_ref().map(ToString::to_string), c.format, c.channel, c.span)
}

fn whole(text: &str, tools: Option<&dyn ToolLookup>, options: Options) -> Assembled {
    let x = extract_with(&Message::new(text), tools, &options);
    Assembled {
        content: x.content.into_owned(),
        reasoning: x.reasoning_content.map(std::borrow::Cow::into_owned),
        calls: x.calls.iter().map(call).collect(),
    }
}

fn streamed(chunks: &[&[u8]], tools: Option<&dyn ToolLookup>, options: Options) -> Assembled {
    let mut s = StreamExtractor::new(tools, options);
    let mut events = Vec::new();
    for c in chunks {
        events.extend(s.push(c));
    }
    events.extend(s.finish());
    let mut content = String::new();
    let mut reasoning: Option<String> = None;
    let mut calls = Vec::new();
    for e in events {
        match e {
            StreamEvent::Text(t) => content.push_str(&t),
            StreamEvent::ContentWasReasoning => {
                reasoning.get_or_insert_default().push_str(&std::mem::take(&mut content));
            }
            StreamEvent::Reasoning(r) => reasoning.get_or_insert_default().push_str(&r),
            StreamEvent::Call(c) => calls.push(call(&c)),
            _ => {}
        }
    }
    Assembled { content, reasoning, calls }
}

/// A small deterministic generator (xorshift).
struct Rng(u64);
impl Rng {
    fn next(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

fn check(id: &str, text: &str, tools: Option<&dyn ToolLookup>, rng: &mut Rng) {
    for options in [Options::default(), Options::default().with_think_blocks(ThinkBlocks::Keep)] {
        let expected = whole(text, tools, options);
        let bytes = text.as_bytes();
        assert_eq!(streamed(&[bytes], tools, options), expected, "{id}: fed whole");
        let singles: Vec<&[u8]> = bytes.chunks(1).collect();
        assert_eq!(streamed(&singles, tools, options), expected, "{id}: byte by byte");
        for _ in 0..3 {
            let mut chunks = Vec::new();
            let mut at = 0;
            while at < bytes.len() {
                let n = 1 + rng.next(17);
                let end = (at + n).min(bytes.len());
                chunks.push(&bytes[at..end]);
                at = end;
            }
            assert_eq!(streamed(&chunks, tools, options), expected, "{id}: random chunks");
        }
    }
}

/// The text as `reasoning_content`: kept as written, its calls used (no other channel).
fn check_reasoning(id: &str, text: &str, tools: Option<&dyn ToolLookup>) {
    let x = extract_with(&Message::new("").with_reasoning_content(text), tools, &Options::default());
    let expected_calls: Vec<(String, String)> =
        x.calls.iter().map(|c| (c.name.to_string(), c.arguments.to_string())).collect();
    for cut in [1, 7, text.len().max(1)] {
        let mut s = StreamExtractor::for_reasoning(tools, Options::default());
        let mut events = Vec::new();
        for chunk in text.as_bytes().chunks(cut) {
            events.extend(s.push(chunk));
        }
        events.extend(s.finish());
        let mut got_text = String::new();
        let mut got_calls = Vec::new();
        for e in events {
            match e {
                StreamEvent::Text(t) => got_text.push_str(&t),
                StreamEvent::Call(c) => got_calls.push((c.name.to_string(), c.arguments.to_string())),
                _ => {}
            }
        }
        assert_eq!(got_text, text, "{id}: reasoning text, chunks of {cut}");
        assert_eq!(got_calls, expected_calls, "{id}: reasoning calls, chunks of {cut}");
    }
}

#[test]
fn every_case_streams_like_whole_text() {
    let mut cases = common::load_cases("tests/fixtures/formats/cases.jsonl");
    cases.extend(common::load_cases("tests/fixtures/formats/own_cases.jsonl"));
    cases.extend(common::load_cases("tests/fixtures/formats/own_markup_cases.jsonl"));
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for case in &cases {
        let tools = case.tools.as_ref().map(|t| t as &dyn ToolLookup);
        check(&case.id, &case.content, tools, &mut rng);
        check_reasoning(&case.id, &case.content, tools);
    }
}

/// The family cases (issue 13) at every split point: in two pieces, and in three pieces
/// with the second one byte long.
#[test]
fn family_cases_stream_like_whole_text_at_every_split() {
    let cases = common::load_cases("tests/fixtures/formats/own_markup_cases.jsonl");
    let mut n = 0;
    for case in cases.iter().filter(|c| c.id.starts_with("toolfix/family/")) {
        n += 1;
        let tools = case.tools.as_ref().map(|t| t as &dyn ToolLookup);
        let options = Options::default();
        let expected = whole(&case.content, tools, options);
        let bytes = case.content.as_bytes();
        for at in 1..bytes.len() {
            let (a, b) = bytes.split_at(at);
            assert_eq!(streamed(&[a, b], tools, options), expected, "{}: split at {at}", case.id);
            let (b1, b2) = b.split_at(1);
            assert_eq!(streamed(&[a, b1, b2], tools, options), expected, "{}: split at {at}, {}", case.id, at + 1);
        }
    }
    assert!(n >= 90, "{n} family cases");
}

/// A long reply: reasoning, prose with braces and brackets, several calls far apart.
pub(crate) fn long_reply(target: usize) -> String {
    let prose = "The quick brown fox [jumps] over {the} lazy dog; x < y > z. ";
    let mut s = String::from("<think>Plan: look up the weather, then the time. ");
    s.push_str(&prose.repeat(40));
    s.push_str("</think>\n");
    let mut i = 0;
    while s.len() < target {
        s.push_str(&prose.repeat(90));
        match i % 3 {
            0 => {
                let _ = write!(
                    s,
                    "<tool_call>\n{{\"name\": \"get_weather\", \"arguments\": {{\"city\": \"Paris {i}\"}}}}\n</tool_call>\n"
                );
            }
            1 => {
                let _ = writeln!(s, "[TOOL_CALLS][{{\"name\": \"get_time\", \"arguments\": {{\"tz\": \"UTC+{i}\"}}}}]");
            }
            _ => {
                let _ =
                    writeln!(s, "```json\n{{\"name\": \"search\", \"arguments\": {{\"q\": \"ünïcødé {i}\"}}}}\n```");
            }
        }
        i += 1;
    }
    s
}

#[test]
fn long_reply_streams_like_whole_text_and_sends_calls_early() {
    let text = long_reply(60_000);
    let mut rng = Rng(7);
    check("long", &text, None, &mut rng);
    // Calls come out before the stream ends.
    let mut s = StreamExtractor::new(None, Options::default());
    let mut early = 0;
    for chunk in text.as_bytes().chunks(512) {
        early += s.push(chunk).iter().filter(|e| matches!(e, StreamEvent::Call(_))).count();
    }
    let late = s.finish().iter().filter(|e| matches!(e, StreamEvent::Call(_))).count();
    assert!(early > 0 && early > late, "early {early}, late {late}");
}

/// A stream holds back the undecided text only: fed 2 MB of prose with calls (and a
/// reasoning block that moves), what it holds stays under the cap on call markup.
#[test]
fn memory_stays_bounded() {
    let options = Options::default()
        .with_think_blocks(ThinkBlocks::Move)
        .with_limits(Limits::default().with_max_held_bytes(16 * 1024).with_max_text_bytes(8 << 20));
    let mut s = StreamExtractor::new(None, options);
    let _ = s.push_str("<think>");
    let mut reasoning = 0;
    let mut calls = 0;
    // Prose and calls, no block markers: all of it stays in the open block.
    let piece = long_reply(20_000).replace("<think>", "").replace("</think>", "");
    for _ in 0..100 {
        for chunk in piece.as_bytes().chunks(1000) {
            for e in s.push(chunk) {
                match e {
                    StreamEvent::Reasoning(r) => reasoning += r.len(),
                    StreamEvent::Call(_) => calls += 1,
                    _ => {}
                }
            }
            assert!(s.held() < 2 * 16 * 1024 + 8192, "holds {} bytes", s.held());
        }
    }
    // Everything after the open `<think>` is reasoning (the block never closes); the calls
    // in it are reasoning calls, decided at the end.
    assert!(reasoning > 1_500_000, "{reasoning}");
    assert_eq!(calls, 0);
    let last = s.finish();
    // The piece repeats: its calls are taken once.
    let distinct = extract_with(&Message::new(&piece), None, &Options::default()).calls.len();
    assert_eq!(last.iter().filter(|e| matches!(e, StreamEvent::Call(_))).count(), distinct);
}

/// Call markup longer than `max_held_bytes` is left as prose, with a note, the same way
/// whole and streamed.
#[test]
fn oversized_call_is_prose_with_a_note() {
    let options = Options::default().with_limits(Limits::default().with_max_held_bytes(4096));
    let big = format!(
        "<tool_call>{{\"name\": \"write\", \"arguments\": {{\"text\": \"{}\"}}}}</tool_call> after",
        "x".repeat(10_000)
    );
    let x = extract_with(&Message::new(&big), None, &options);
    assert!(x.calls.is_empty());
    assert_eq!(x.content, big);
    assert!(x.notes.iter().any(|n| n.kind == toolfix::extract::NoteKind::CallTooLarge));
    let singles: Vec<&[u8]> = big.as_bytes().chunks(7).collect();
    assert_eq!(streamed(&singles, None, options), whole(&big, None, options));
}

#[test]
fn forced_open_reasoning_is_retracted() {
    let text = "The user wants weather.</think>Sure. <tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>";
    let mut rng = Rng(1);
    check("forced", text, None, &mut rng);
    let got = streamed(&[text.as_bytes()], None, Options::default());
    assert_eq!(got.reasoning.as_deref(), Some("The user wants weather."));
    assert_eq!(got.content, "Sure. ");
    let _ = common::norm_ws;
}

mod properties {
    use super::{Options, ThinkBlocks, streamed, whole};
    use proptest::prelude::*;

    const PIECES: &[&str] = &[
        "Hello there. ",
        "ünïcødé ✓ 北京 ",
        "<think>",
        "</think>",
        "<tool_call>",
        "</tool_call>",
        "{\"name\": \"f\", \"arguments\": {\"a\": 1}}",
        "{\"name\": \"g\", \"arguments\": {\"b\": \"x}\"}}",
        "[TOOL_CALLS]",
        "[{\"name\": \"h\", \"arguments\": {}}]",
        "<function=f>",
        "<parameter=a>",
        "</parameter>",
        "</function>",
        "```json\n",
        "\n```",
        "{",
        "}",
        "[",
        "]",
        "\"",
        ";",
        "\n",
        "<|python_tag|>",
        "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n</tool_call>",
        "functools[",
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>f<｜tool▁sep｜>{\"x\": 1}<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
        "[f(a=1)]",
        "]<]minimax[>[<tool_call>\n]<]minimax[>[<invoke name=\"f\">\n]<]minimax[>[<a>1]<]minimax[>[</a>\n]<]minimax[>[</invoke>\n]<]minimax[>[</tool_call>",
        "]<]minimax[>[<tool_call>",
        " functools[",
        "Action: ```json\n[{\"tool_name\": \"f\", \"parameters\": {}}]\n```",
        "<|channel|>analysis<|message|>",
        "<|end|>",
        "<|start|>assistant<|channel|>commentary to=functions.f <|constrain|>json<|message|>{\"a\": 1}<|call|>",
        "[BEGIN FINAL RESPONSE]",
        "<|START_RESPONSE|>",
    ];

    fn long_prose() -> String {
        "Plain words with (parens) and a < b, nothing to parse here. ".repeat(40)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// Any bytes: no panic, and when they are UTF-8 the stream gives the whole-text result.
        #[test]
        fn any_bytes(data in proptest::collection::vec(any::<u8>(), 0..300), cut in 1usize..9) {
            let chunks: Vec<&[u8]> = data.chunks(cut).collect();
            let got = streamed(&chunks, None, Options::default());
            if let Ok(text) = std::str::from_utf8(&data) {
                prop_assert_eq!(got, whole(text, None, Options::default()));
            }
        }

        #[test]
        fn chunking_does_not_change_the_result(
            picks in proptest::collection::vec(0..PIECES.len() + 1, 0..24),
            cuts in proptest::collection::vec(1usize..40, 1..8),
            move_blocks in any::<bool>(),
        ) {
            let prose = long_prose();
            let text: String = picks.iter().map(|&i| PIECES.get(i).copied().unwrap_or(prose.as_str())).collect();
            let options = if move_blocks {
                Options::default()
            } else {
                Options::default().with_think_blocks(ThinkBlocks::Keep)
            };
            let expected = whole(&text, None, options);
            let bytes = text.as_bytes();
            let mut chunks = Vec::new();
            let mut at = 0;
            let mut k = 0;
            while at < bytes.len() {
                let end = (at + cuts[k % cuts.len()]).min(bytes.len());
                chunks.push(&bytes[at..end]);
                at = end;
                k += 1;
            }
            prop_assert_eq!(streamed(&chunks, None, options), expected);
        }
    }
}

/// What a stream has sent as text after each push: (text received, text sent).
fn sent_after_each(chunks: &[&str], tools: Option<&dyn ToolLookup>) -> Vec<(String, String)> {
    let mut s = StreamExtractor::new(tools, Options::default());
    let mut received = String::new();
    let mut sent = String::new();
    let mut out = Vec::new();
    for c in chunks {
        received.push_str(c);
        for e in s.push_str(c) {
            if let StreamEvent::Text(t) = e {
                sent.push_str(&t);
            }
        }
        out.push((received.clone(), sent.clone()));
    }
    out
}

/// Markers that text made of lowercase words, spaces and `.,!?` could begin.
const WORD_MARKERS: [&str; 2] = [" functools[", "functools["];

#[test]
fn prose_flows_at_once_with_no_fixed_lag() {
    // Three deltas, then (in a real server) a pause: everything is out before it.
    let chunks = ["Let me think", " about this question", " carefully."];
    for (received, sent) in sent_after_each(&chunks, None) {
        assert_eq!(sent, received);
    }
    // Only a possible start of markup waits, and only until the next bytes decide it.
    let steps = sent_after_each(&["Hello <tool", "box> and [TOOL", "S] {", "curly}."], None);
    let sent: Vec<&str> = steps.iter().map(|(_, s)| s.as_str()).collect();
    assert_eq!(
        sent,
        ["Hello ", "Hello <toolbox> and ", "Hello <toolbox> and [TOOLS] ", "Hello <toolbox> and [TOOLS] {curly}."]
    );
}

#[test]
fn a_declared_name_waits_for_what_follows_it() {
    let tools: std::collections::HashMap<String, serde_json::Value> =
        [("get_weather".to_owned(), serde_json::json!({"type": "object"}))].into_iter().collect();
    let steps =
        sent_after_each(&["I will call get_wea", "ther", " now. get_weather", "{\"city\": \"Paris\"}"], Some(&tools));
    let sent: Vec<&str> = steps.iter().map(|(_, s)| s.as_str()).collect();
    assert_eq!(
        sent,
        ["I will call ", "I will call ", "I will call get_weather now. ", "I will call get_weather now. "]
    );
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

    /// Held-back text is only what could still begin call markup: for prose with no
    /// marker, after every push all of it is sent but a suffix that is the start of a
    /// marker.
    #[test]
    fn held_text_is_only_a_possible_start_of_markup(
        text in "[a-z .,!?]{0,120}",
        cuts in proptest::collection::vec(0usize..120, 0..8),
    ) {
        let mut cuts: Vec<usize> = cuts.into_iter().filter(|&c| c < text.len()).collect();
        cuts.push(text.len());
        cuts.sort_unstable();
        cuts.dedup();
        let mut chunks = Vec::new();
        let mut at = 0;
        for c in cuts {
            chunks.push(&text[at..c]);
            at = c;
        }
        for (received, sent) in sent_after_each(&chunks, None) {
            proptest::prop_assert!(received.starts_with(&sent));
            let held = &received[sent.len()..];
            // At the very start of the text only, forms that begin with no marker wait:
            // Functionary v3.2's first recipient (`all\n`) and a gpt-oss raw completion's
            // recipient (`to=functions.`, after the prompt's `<|start|>assistant`).
            let leading = held == received
                && ["all\n", " to=functions.", " to=python", " to=browser.", " to=container."]
                    .iter()
                    .any(|f| f.starts_with(held) || f.get(1..).is_some_and(|f| f.starts_with(held)));
            proptest::prop_assert!(
                held.is_empty() || leading || WORD_MARKERS.iter().any(|m| m.len() > held.len() && m.starts_with(held)),
                "held {held:?} of {received:?}"
            );
        }
    }

    /// With a marker prefix at the end, exactly that prefix waits.
    #[test]
    fn a_marker_prefix_waits_alone(words in "[a-z ]{0,40}", cut in 1usize..11) {
        let marker = "<tool_call>";
        let text = format!("{words}.{}", &marker[..cut]);
        let steps = sent_after_each(&[&text], None);
        let (received, sent) = &steps[0];
        proptest::prop_assert_eq!(&received[sent.len()..], &marker[..cut]);
    }
}

/// Fuzzing found (issue 24 round): a declared tool's name glued to its arguments through
/// `(properties=`, with a control character inside, streamed byte by byte, gave no call
/// while the whole text gave one.
#[test]
fn glued_call_with_keyword_streams_like_whole() {
    let schema = serde_json::json!({"type": "object", "properties": {
        "a": {"type": "integer"}, "city": {"type": "string"}, "code": {"type": ["object", "string"]}}});
    let tools: std::collections::HashMap<String, serde_json::Value> =
        ["f", "get_weather", "python", "functions.f"].iter().map(|n| ((*n).to_owned(), schema.clone())).collect();
    let text = "get_weather(properties={\"ity:\u{1d} \"Pis\"})";
    check("glued keyword", text, Some(&tools), &mut Rng(1));
}

/// Fuzzing found: a `{` at the end of a chunk (`…{` then `\x1f<tool_calls>[{"name": …`)
/// started the stream's bracket pass earlier than the whole read's, so a later call was
/// paired differently and lost streamed.
#[test]
fn a_brace_at_the_end_of_a_chunk_does_not_start_the_bracket_pass() {
    let call = "[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}]";
    let text = format!("Holle \"arguments\": {{\u{1f}<tool_calls>{call} then \"x\" {{\u{1f}<tool_calls>{call}");
    check("brace at chunk end", &text, None, &mut Rng(3));
    let crash = "Holle[DOOL_CALLS\u{0}functoolng_field\"null_field\": null,\n    \"array_field\": \"gel\", \"ptWcurrent_weather\", \"arguments\": {\u{1f}<tool_calls>[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"San FrSarameters\": {invaly\": \"Boston, \"passed_\" \"test\": true, \"aliases\": [\"John\",San  \"Johnny\"FrSan Fr]idan}}]</tan Francisco\", \" \"CA\"}, \"role\": null\"cytal`dToo\u{2}<tool_calls>&\n{\"name\": \"gel\", \"ptWcurrent_weather\", \"arguments\": {\u{1f}<tool_calls>[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"San FrSarameters\": {invaly\": \"Boston, \"passed_\" \"test\": true, \"aliases\": [\"John\",San  \"Johnny\"FrSan Fr]idan}}]</tan F: \"ld\": true,\n    \"null_field\": null,\n    \"arra   2\"empty_obje}}ct\": {}\n]  }\n}]";
    check("fuzz crash", crash, None, &mut Rng(4));
}

/// Fuzzing found: the look back for a declared tool's name before a `{` started inside a
/// multi-byte character (`\u{fffd}query…get_weather{`), so the whole read missed the
/// glued call the stream (looking from another point) found.
#[test]
fn a_look_back_window_starting_inside_a_character() {
    let schema = serde_json::json!({"type": "object", "properties": {"city": {"type": "string"}}});
    let tools: std::collections::HashMap<String, serde_json::Value> =
        ["f", "get_weather", "python", "functions.f"].iter().map(|n| ((*n).to_owned(), schema.clone())).collect();
    let text = "\u{fffd}query\": \"x\"}\u{0}\u{0}\u{0}\u{1}\u{2}<|tAol_call?:get_weather{\"city\": \"Paris\"} done";
    let x = toolfix::extract::extract(&toolfix::extract::Message::new(text), Some(&tools));
    assert_eq!(x.calls.len(), 1, "{x:?}");
    check("look back in a character", text, Some(&tools), &mut Rng(5));
    let crash = "�query\": \"x\"}\u{0}\u{0}\u{0}\u{1}\u{2}<|tAol_call?:get_weather{cicityty[TOOL_CALLS] [{\"++++++++++++++++++++++++++$++++++++++++namget_curr\u{1}Here:\n```json\n[ \"ges')\ngol\",\" argumet_time\", \"arguments\": {\"tz\":<|tool_call_argument_begin|>l\u{1}Here:\n```json\n[ \"ges'\": {\"tz\":<|tool_call_argument_begin|>)\ngol\", \"argumet_time: \"celsiustz\": \"Europ\"}}]|>e/Paris\"}}]\n```\nDone.rameter>\n<parameter=unit>\ncelsi<function=get_currentz_weather><respon\n<qarameter=city>\nDallas\n</parameter:\n<pXrameter=state>\nTX\n</parameter>\n<parameter=unit>\nfahrenheit\n</parameter>\n</function>\n</tcall>\n<function=gell>\n<tool_call>\n<function=%get_current_weather>\n<parametec=itry>\nOrlando\n</parameter>\n<parameter=state>\nFL\n</parameter>\n<parameter=unit>\ncelsius\n</parameter>\n</functiopythonool_call>";
    for chunk in [31, 7, 1] {
        let chunks: Vec<&[u8]> = crash.as_bytes().chunks(chunk).collect();
        let options = Options::default().with_think_blocks(ThinkBlocks::Keep);
        assert_eq!(streamed(&chunks, Some(&tools), options), whole(crash, Some(&tools), options), "chunks of {chunk}");
    }
}

/// The budget of failed parses running out inside a reasoning block (hundreds of `>>>`
/// starts, each read and refused as Functionary's marker) ends no more than the markup
/// reading: the block still ends where it closes, or with the text, and moves, as the
/// stream (which sent its text as reasoning) reads it. Found by the `extract` fuzz target:
/// the whole-text read left the block in `content`.
#[test]
fn a_budget_spent_inside_reasoning_still_ends_the_block() {
    let mut rng = Rng(0x5eed);
    for open in ["[THINK]", "<think>"] {
        let close = if open == "[THINK]" { "[/THINK]" } else { "</think>" };
        let unclosed = format!("{open}{}", ">".repeat(300));
        let closed = format!("{open}{}{close} The answer.", ">".repeat(300));
        let after =
            format!("{open}{}{close} <tool_call>{{\"name\": \"f\", \"arguments\": {{}}}}</tool_call>", ">".repeat(300));
        for text in [&unclosed, &closed, &after] {
            let x = whole(text, None, Options::default());
            assert!(!x.content.contains(">>>"), "{text}: {x:?}");
            assert!(x.reasoning.as_deref().is_some_and(|r| r.starts_with(">>>")), "{text}: {x:?}");
            check(open, text, None, &mut rng);
        }
    }
}
