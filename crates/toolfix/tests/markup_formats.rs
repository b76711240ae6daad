//! Corpus rows of the markup-family formats through their parsers (one format at a time,
//! a minimal driver; the full corpus test through the real driver lives elsewhere).
//!
//! Arguments are compared as JSON values; numbers compare by value (`5.0` == `5`: toolfix
//! keeps the number text the model wrote). Rows where toolfix deliberately differs from
//! the upstream expectation are listed in `DIFFERENCES` with the reason.

use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use toolfix::extract::{Format, ToolLookup, parse_markup_for_tests};

/// The markup-family formats (the rows of the others are the JSON family's).
const MARKUP: &[&str] = &[
    "qwen3_coder",
    "seed_oss",
    "deepseek_v3",
    "deepseek_v31",
    "deepseek_v32_dsml",
    "deepseek_v4_dsml",
    "glm45",
    "glm47",
    "kimi_k2",
    "gpt_oss_harmony",
    "gemma4",
    "minimax_m2",
    "minimax_m3",
    "step3",
    "muse_glimmer",
    "pythonic",
    "lfm2",
    "olmo3",
];

/// Rows whose expected calls toolfix deliberately does not reproduce, and why.
const DIFFERENCES: &[(&str, &str)] = &[
    (
        "vllm/test_deepseekv3_tool_parser/test_malformed_input/malformed_0",
        "unclosed JSON object: the call is kept with its JSON as written, for salvage",
    ),
    (
        "vllm/test_deepseekv3_tool_parser/test_malformed_input/malformed_1",
        "per-call markers missing: the call inside the section is recovered",
    ),
    (
        "vllm/test_deepseekv31_tool_parser/test_extract_tool_calls_unparsable_block/missing_call_markers",
        "per-call markers missing: the call inside the section is recovered",
    ),
    (
        "vllm/test_glm4_moe_tool_parser/test_extract_tool_calls_malformed_xml",
        "</arg_key> missing: the key runs to <arg_value>, the call is recovered",
    ),
    (
        "vllm/test_glm4_moe_tool_parser/test_extract_tool_calls_incomplete_tool_call",
        "</tool_call> missing (cut off): the call is kept with what was given",
    ),
    (
        "vllm/test_seed_oss_tool_parser/test_extract_tool_calls/tool_call_unlimited_thinking_budget",
        "the reasoning quotes the same call: this minimal driver has no reasoning split or \
      dedupe (the real driver dedupes by name and arguments)",
    ),
    (
        "vllm/test_step3_tool_parser/test_malformed_input/malformed_0",
        "cut off after the invoke tag: the call is kept with no arguments",
    ),
    (
        "vllm/test_step3_tool_parser/test_malformed_input/malformed_1",
        "section markers missing: the call block is recovered",
    ),
    (
        "sglang/test_function_call_parser/TestQwen3CoderDetector.test_incomplete_tool_call",
        "cut off mid-value: the call is kept with what was given",
    ),
    (
        "sglang/test_function_call_parser/TestGlm4MoeDetector.test_invalid_tool_call",
        "undeclared tool name: format parsers keep markup calls; unknown names are the \
      driver's and the repairer's business",
    ),
    ("sglang/test_function_call_parser/TestGlm47MoeDetector.test_invalid_tool_call", "undeclared tool name: as above"),
];

fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

#[test]
fn corpus_rows() {
    let data = [include_str!("fixtures/formats/cases.jsonl"), include_str!("fixtures/formats/own_markup_cases.jsonl")]
        .join("\n");
    let mut counts: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut failures = Vec::new();
    for line in data.lines().filter(|l| !l.trim().is_empty()) {
        let row: Value = serde_json::from_str(line).unwrap();
        let id = row["id"].as_str().unwrap();
        let format_name = row["format"].as_str().unwrap();
        if !MARKUP.contains(&format_name) {
            continue;
        }
        assert!(Format::from_name(format_name).is_some(), "{format_name}");
        let tools: Option<HashMap<String, Value>> = row["tools"].as_array().map(|tools| {
            tools.iter().map(|t| (t["name"].as_str().unwrap().to_owned(), t["parameters"].clone())).collect()
        });
        let lookup = tools.as_ref().map(|t| t as &dyn ToolLookup);
        let content = row["input"]["content"].as_str().unwrap_or("");
        let got: Vec<(String, String)> =
            parse_markup_for_tests(content, lookup).into_iter().map(|(_, name, args)| (name, args)).collect();
        let expected = row["expected"]["tool_calls"].as_array().unwrap();
        let ok = got.len() == expected.len()
            && got.iter().zip(expected).all(|((name, args), exp)| {
                let args: Option<Value> = toolfix::salvage::salvage(args).ok().and_then(|s| s.to_value().ok());
                name == exp["name"].as_str().unwrap() && args.is_some_and(|a| same(&a, &exp["arguments"]))
            });
        let entry = counts.entry(format_name.to_owned()).or_default();
        entry.1 += 1;
        if ok {
            entry.0 += 1;
        }
        let listed = DIFFERENCES.iter().any(|(d, _)| *d == id);
        if ok == listed {
            failures.push(format!(
                "{id}: {}\n  got: {got:?}\n  expected: {expected:?}",
                if ok { "passes but is listed in DIFFERENCES" } else { "fails" }
            ));
        }
    }
    for (format, (pass, total)) in &counts {
        println!("{format:20} {pass:3}/{total:3}");
    }
    assert!(failures.is_empty(), "{} rows:\n{}", failures.len(), failures.join("\n"));
}

/// Fragments of every markup format, for adversarial inputs.
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

/// 100 KB of half-open tags of each format returns promptly (linear time: a quadratic
/// scan would take minutes here) and without panicking.
#[test]
fn half_open_tags_at_scale() {
    for fragment in FRAGMENTS.iter().take(FRAGMENTS.len() - 14) {
        let text = fragment.repeat(100_000 / fragment.len() + 1);
        let _ = parse_markup_for_tests(&text, None);
    }
    for pattern in [
        "<|tool_call>call:f{a:[",
        "<|tool_call>call:f{a:<|\"|>x",
        "<｜DSML｜function_calls><｜DSML｜invoke name=\"f\">{\"a\": ",
        "<｜DSML｜invoke name=\"f\"><｜DSML｜parameter name=\"a\" string=\"true\">x",
        "[f(a='",
        "[f(a=[",
        "<function_calls>f(a='''",
        "<|channel|>commentary to=functions.f<|message|>{",
        "<tool_call>f\n<arg_key>a</arg_key><arg_value>",
        "<tool_call>\n<function=f>\n<parameter=a>\n</tool_call>",
        "]<]minimax[>[<tool_call>]<]minimax[>[<invoke name=\"f\">]<]minimax[>[<a>",
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{",
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{",
    ] {
        let text = pattern.repeat(100_000 / pattern.len() + 1);
        let _ = parse_markup_for_tests(&text, None);
    }
    let mixed: String = FRAGMENTS.iter().cycle().take(4000).copied().collect();
    let _ = parse_markup_for_tests(&mixed, None);
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config::with_cases(256))]

    /// Any mix of fragments parses without panicking; built arguments are strict JSON.
    #[test]
    fn fragments_never_panic(picks in proptest::collection::vec(0..FRAGMENTS.len(), 0..40)) {
        let text: String = picks.iter().map(|&i| FRAGMENTS[i]).collect();
        let tools: HashMap<String, Value> = HashMap::from([(
            "f".to_owned(),
            serde_json::json!({"properties": {"a": {"type": "integer"}, "k": {"type": "object"}}}),
        )]);
        for lookup in [None, Some(&tools as &dyn ToolLookup)] {
            for (format, name, args) in parse_markup_for_tests(&text, lookup) {
                proptest::prop_assert!(!name.is_empty());
                // Formats that build the arguments from raw parameters always build strict
                // JSON objects; the others hand over the model's JSON text for salvage.
                let borrows = matches!(
                    format,
                    Format::KimiK2
                        | Format::DeepseekV3
                        | Format::DeepseekV31
                        | Format::DeepseekV32Dsml
                        | Format::DeepseekV4Dsml
                        | Format::GptOssHarmony
                );
                if !borrows {
                    let value: Result<Value, _> = serde_json::from_str(&args);
                    proptest::prop_assert!(value.is_ok_and(|v| v.is_object()), "{format}: {args}");
                }
            }
        }
    }
}
