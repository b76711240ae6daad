//! Every format the extractor knows, declared once: its start and end markers, its
//! grammar (a declarative JSON row, an invoke block, a Python call list, or a parser of
//! its own), the reasoning blocks and prose wrappers its models write, and the model
//! families that emit it. The driver builds one Aho-Corasick automaton over all markers
//! and scans each text once (`scan.rs`), run only at the places a marker can start
//! (`starts.rs`, a prefilter built from the same markers).
//!
//! Order matters where formats share a marker: the more specific grammar comes first (for
//! `<tool_call>`: Qwen3-Coder's `<function=`, GLM's `name<arg_key>`, then Hermes JSON, then
//! a JSON list). A grammar that does not match leaves the marker to the next row.

use super::Format;
use super::invoke::Block;
use super::json::call::{Keys, NAME_ARGUMENTS};
use super::json_family::{Body, Empty, Fence, JsonRow, Name};
use super::parsed::{Cx, Markers, ParseFn, Parsed};
use super::pythonic::PyRow;
use super::starts::{self, Starts};
use aho_corasick::{AhoCorasick, Match, MatchKind, StartKind};
use std::sync::OnceLock;

/// How a format's calls are written after its start marker.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Grammar {
    /// Calls in JSON (`json_family.rs`).
    Json(JsonRow),
    /// `<invoke name=N><parameter name=K>raw</parameter></invoke>` elements in a block
    /// (`invoke.rs`).
    Invoke(&'static Block),
    /// Python calls `f(a=1)` (`pythonic.rs`).
    Python(PyRow),
    /// A parser of its own.
    Parser(ParseFn),
}

/// When a row applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum When {
    /// Wherever its marker is.
    Always,
    /// Only after a marker that format alone writes (see [`Cx::hint`]): formats with the
    /// same call markup, told apart by what their models write around it.
    After(Format),
}

/// A reasoning block. `open: None` means the block only ever appears forced open
/// (everything before the close is reasoning).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Think {
    pub(crate) open: Option<&'static str>,
    pub(crate) close: &'static str,
    /// Always moved to the reasoning, whatever the options say (channel markup, never
    /// prose).
    pub(crate) always_moves: bool,
}

const fn think(open: &'static str, close: &'static str) -> Think {
    Think { open: Some(open), close, always_moves: false }
}

/// `<think>...</think>`, often forced open (only `</think>` appears).
pub(crate) const THINK: Think = think("<think>", "</think>");
const SEED_THINK: Think = think("<seed:think>", "</seed:think>");
const MM_THINK: Think = think("<mm:think>", "</mm:think>");
/// Kimi VL / K1.5 (SGLang's `KimiDetector`).
const KIMI_THINK: Think = think("◁think▷", "◁/think▷");
const COHERE_THINK: Think = think("<|START_THINKING|>", "<|END_THINKING|>");
const GEMMA_THOUGHT: Think = think("<|channel>thought", "<channel|>");
/// Gemma 4's channel without its `thought` label (vLLM's parser opens reasoning at
/// `<|channel>` and strips the label).
const GEMMA_CHANNEL: Think = think("<|channel>", "<channel|>");
/// gpt-oss Harmony's analysis channel: reasoning written as channel markup.
const HARMONY_ANALYSIS: Think =
    Think { open: Some("<|channel|>analysis<|message|>"), close: "<|end|>", always_moves: true };
/// The same with its role header, as a reply that starts a new message writes it (the
/// header is markup, never prose).
const HARMONY_ANALYSIS_MESSAGE: Think =
    Think { open: Some("<|start|>assistant<|channel|>analysis<|message|>"), close: "<|end|>", always_moves: true };
/// Apriel writes its reasoning, then `[BEGIN FINAL RESPONSE]`.
const APRIEL_FINAL: Think = Think { open: None, close: "[BEGIN FINAL RESPONSE]", always_moves: false };
/// Apriel 1.5's reasoning before its calls (its template asks for `<thinking>` tags).
const APRIEL_THINKING: Think = think("<thinking>", "</thinking>");
/// Apertus.
const APERTUS_INNER: Think = think("<|inner_prefix|>", "<|inner_suffix|>");

/// One format.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Spec {
    pub(crate) format: Format,
    /// The model families that emit it.
    pub(crate) families: &'static str,
    /// Markers where its calls start.
    pub(crate) start: &'static [&'static str],
    /// Markers that end its calls (consumed after a JSON row's body).
    pub(crate) end: &'static [&'static str],
    pub(crate) grammar: Grammar,
    pub(crate) when: When,
    /// The reasoning blocks its models write.
    pub(crate) reasoning: &'static [Think],
    /// Markers its models write around prose, dropped from it (their text is kept).
    pub(crate) wrappers: &'static [&'static str],
}

impl Spec {
    /// Run this format's grammar at `at`.
    pub(crate) fn parse<'a>(&self, text: &'a str, at: usize, cx: &Cx<'_>) -> Option<Parsed<'a>> {
        let markers = Markers { format: self.format, start: self.start, end: self.end };
        match self.grammar {
            Grammar::Json(row) => super::json_family::parse(&row, &markers, text, at, cx),
            Grammar::Invoke(block) => super::invoke::parse_block(block, &markers, text, at, cx),
            Grammar::Python(row) => super::pythonic::parse(&row, &markers, text, at, cx),
            Grammar::Parser(parse) => parse(text, at, cx),
        }
    }
}

/// A spec with nothing but the format, for the table below.
const BASE: Spec = Spec {
    format: Format::Json,
    families: "",
    start: &[],
    end: &[],
    grammar: Grammar::Parser(|_, _, _| None),
    when: When::Always,
    reasoning: &[],
    wrappers: &[],
};

const fn json(lead: &'static [&'static str], fence: Fence, body: Body, keys: Keys, empty: Empty) -> Grammar {
    Grammar::Json(JsonRow { lead, fence, body, keys, empty })
}

/// A call to a tool without parameters is often written without `"arguments"`.
const NAME_ARGS_OPTIONAL: Keys = Keys { name: &["name"], args: &["arguments", "parameters"], args_optional: true };
/// Cohere: `tool_name` / `parameters` (OpenAI-style keys accepted).
const COHERE_KEYS: Keys =
    Keys { name: &["tool_name", "name"], args: &["parameters", "arguments"], args_optional: true };
const TOOL_CALLS_ARRAY: Grammar = json(&[], Fence::No, Body::Array, NAME_ARGUMENTS, Empty::NotACall);

/// Every format, most specific first where markers are shared. `Format::Native` (the
/// server's own `tool_calls`) has no markers.
pub(crate) static REGISTRY: &[Spec] = &[
    // `<function=N>{json}` before Qwen3-Coder's `<function=N><parameter=...>`.
    Spec {
        format: Format::FunctionaryV31,
        families: "Functionary v3.1; Llama 3.1 custom tool calls; Hermes models (`<function name=\"N\">`)",
        start: &["<function=", "<function name="],
        end: &["</function>", "<|eom_id|>", "<|eot_id|>"],
        grammar: json(&[], Fence::No, Body::Named(Name::Tag), NAME_ARGUMENTS, Empty::NotACall),
        ..BASE
    },
    Spec {
        format: Format::Qwen3Coder,
        families: "Qwen3-Coder, Qwen3.5, Nemotron 3, Step-3.5, Nanbeige",
        start: &["<tool_call>", "<function="],
        end: &["</function>", "</tool_call>"],
        grammar: Grammar::Parser(super::qwen3_coder::parse),
        reasoning: &[THINK],
        ..BASE
    },
    Spec {
        format: Format::Glm47,
        families: "GLM-4.7, Ling 3, Spark 2.5",
        start: &["<tool_call>"],
        end: &["</tool_call>"],
        grammar: Grammar::Parser(super::glm::parse47),
        reasoning: &[THINK],
        ..BASE
    },
    Spec {
        format: Format::Glm45,
        families: "GLM-4.5, GLM-4.6",
        start: &["<tool_call>"],
        end: &["</tool_call>"],
        grammar: Grammar::Parser(super::glm::parse45),
        reasoning: &[THINK],
        ..BASE
    },
    Spec {
        format: Format::SeedOss,
        families: "Seed-OSS",
        start: &["<seed:tool_call>"],
        end: &["</function>", "</seed:tool_call>"],
        grammar: Grammar::Parser(super::qwen3_coder::parse_seed),
        reasoning: &[SEED_THINK],
        ..BASE
    },
    Spec {
        format: Format::DeepseekV3,
        families: "DeepSeek V3, DeepSeek R1",
        start: super::deepseek::MARKERS,
        end: &["<｜tool▁call▁end｜>", "<｜tool▁calls▁end｜>"],
        grammar: Grammar::Parser(super::deepseek::parse_v3),
        reasoning: &[THINK],
        wrappers: super::deepseek::TOOL_OUTPUTS,
        ..BASE
    },
    Spec {
        format: Format::DeepseekV31,
        families: "DeepSeek V3.1, Cogito",
        start: super::deepseek::MARKERS,
        end: &["<｜tool▁call▁end｜>", "<｜tool▁calls▁end｜>"],
        grammar: Grammar::Parser(super::deepseek::parse_v31),
        reasoning: &[THINK],
        wrappers: super::deepseek::END_OF_SENTENCE,
        ..BASE
    },
    Spec {
        format: Format::DeepseekV32Dsml,
        families: "DeepSeek V3.2",
        start: &[
            "<｜DSML｜function_calls",
            "<|DSML|function_calls",
            "<｜DSML｜invoke",
            "<|DSML|invoke",
            "<｜｜DSML｜｜function_calls",
            "<||DSML||function_calls",
            "<｜｜DSML｜｜invoke",
        ],
        end: &["</｜DSML｜invoke>", "</｜DSML｜function_calls>"],
        grammar: Grammar::Parser(super::dsml::parse_v32),
        reasoning: &[THINK],
        ..BASE
    },
    Spec {
        format: Format::DeepseekV4Dsml,
        families: "DeepSeek V4, V4.1",
        start: &["<｜DSML｜tool_calls", "<|DSML|tool_calls", "<｜｜DSML｜｜tool_calls", "<||DSML||tool_calls"],
        end: &["</｜DSML｜invoke>", "</｜DSML｜tool_calls>"],
        grammar: Grammar::Parser(super::dsml::parse_v4),
        reasoning: &[THINK],
        ..BASE
    },
    Spec {
        format: Format::KimiK2,
        families: "Kimi K2, K2 Thinking (Kimi VL / K1.5 reasoning: `◁think▷`)",
        // The argument marker: a call whose per-call marker is missing (the scan looks
        // back for its id).
        start: &["<|tool_calls_section_begin|>", "<|tool_call_begin|>", super::kimi_k2::ARG_BEGIN],
        end: &["<|tool_call_end|>", "<|tool_calls_section_end|>"],
        grammar: Grammar::Parser(super::kimi_k2::parse),
        reasoning: &[THINK, KIMI_THINK],
        ..BASE
    },
    Spec {
        format: Format::GptOssHarmony,
        families: "gpt-oss (Harmony)",
        // A raw completion after the prompt's `<|start|>assistant` starts with its
        // recipient and no marker (` to=functions.N<|channel|>…`): read at the start of
        // `content` only (the scan's lead), so `to` in prose never waits.
        start: &["<|start|>", "<|channel|>"],
        end: &["<|call|>", "<|end|>"],
        grammar: Grammar::Parser(super::harmony::parse),
        reasoning: &[HARMONY_ANALYSIS_MESSAGE, HARMONY_ANALYSIS],
        // A commentary message without a recipient is a preamble the user sees: prose.
        wrappers: &[
            "<|start|>assistant<|channel|>final<|message|>",
            "<|channel|>final<|message|>",
            "<|start|>assistant<|channel|>commentary<|message|>",
            "<|channel|>commentary<|message|>",
            "<|return|>",
        ],
        ..BASE
    },
    Spec {
        format: Format::Gemma4,
        families: "Gemma 4",
        start: &["<|tool_call>"],
        end: &["<tool_call|>"],
        grammar: Grammar::Parser(super::gemma4::parse),
        reasoning: &[GEMMA_THOUGHT, GEMMA_CHANNEL],
        ..BASE
    },
    Spec {
        format: Format::MinimaxM2,
        families: "MiniMax M2",
        start: &["<minimax:tool_call>"],
        end: &["</invoke>", "</minimax:tool_call>"],
        grammar: Grammar::Invoke(&super::invoke::MINIMAX_M2),
        reasoning: &[THINK],
        ..BASE
    },
    Spec {
        format: Format::MinimaxM3,
        families: "MiniMax M3",
        start: &["]<]minimax[>[<tool_call>"],
        end: &["]<]minimax[>[</invoke>", "]<]minimax[>[</tool_call>"],
        grammar: Grammar::Parser(super::minimax_m3::parse),
        reasoning: &[MM_THINK],
        ..BASE
    },
    Spec {
        format: Format::Step3,
        families: "Step-3",
        start: &["<｜tool_calls_begin｜>", "<｜tool_call_begin｜>"],
        end: &["<｜tool_call_end｜>", "<｜tool_calls_end｜>"],
        grammar: Grammar::Parser(super::step3::parse),
        reasoning: &[THINK],
        ..BASE
    },
    Spec {
        format: Format::MuseGlimmer,
        families: "Muse Spark, Muse Glimmer",
        start: &["<|message|><atem:function_calls>", "<atem:function_calls>"],
        end: &["</atem:invoke>", "</atem:function_calls>"],
        grammar: Grammar::Invoke(&super::invoke::MUSE),
        ..BASE
    },
    Spec {
        format: Format::Lfm2,
        families: "LFM2, LFM2.5",
        start: &["<|tool_call_start|>"],
        end: &["<|tool_call_end|>"],
        grammar: Grammar::Python(PyRow { close: "<|tool_call_end|>", bare_list: false }),
        reasoning: &[THINK],
        ..BASE
    },
    Spec {
        format: Format::Olmo3,
        families: "OLMo 3",
        start: &["<function_calls>"],
        end: &["</function_calls>"],
        grammar: Grammar::Python(PyRow { close: "</function_calls>", bare_list: false }),
        reasoning: &[THINK],
        ..BASE
    },
    Spec {
        format: Format::FunctionCallsXml,
        families: "models trained on Anthropic-style XML (leaked into text)",
        start: &["<function_calls>"],
        end: &["</invoke>", "</function_calls>"],
        grammar: Grammar::Invoke(&super::invoke::FUNCTION_CALLS),
        ..BASE
    },
    // ---- JSON family ----
    Spec {
        format: Format::Hermes,
        families: "Hermes 2 Pro / 3, Qwen2.5, Qwen3, QwQ, InternLM (Intern-S1)",
        // The other wrappers Hermes models write around the same JSON (llama.cpp accepts
        // them too).
        start: &["<tool_call>", "<tools>", "<response>", "<xml><json>", "<json>"],
        end: &["</tool_call>", "</tools>", "</response>", "</json></xml>", "</json>"],
        grammar: json(
            &[],
            Fence::Optional,
            Body::Objects { sep: None, repeat: false },
            NAME_ARGS_OPTIONAL,
            Empty::NotACall,
        ),
        reasoning: &[THINK],
        ..BASE
    },
    Spec {
        format: Format::Xlam,
        families: "xLAM, Granite 3.1",
        start: &["<tool_call>"],
        end: &["</tool_call>"],
        grammar: TOOL_CALLS_ARRAY,
        ..BASE
    },
    Spec {
        format: Format::MistralV11,
        families: "Mistral tokenizer v11+ (Mistral Small 3.2, Devstral, Ministral 3, Magistral)",
        start: &["[TOOL_CALLS]"],
        grammar: json(&[], Fence::No, Body::Named(Name::Token), NAME_ARGUMENTS, Empty::Markup),
        reasoning: &[think("[THINK]", "[/THINK]")],
        ..BASE
    },
    Spec {
        format: Format::Mistral,
        families: "Mistral tokenizer before v11 (Mistral 7B v0.3, Nemo, Small)",
        start: &["[TOOL_CALLS]"],
        grammar: json(&[], Fence::No, Body::ArrayOrObject { junk: 256 }, NAME_ARGUMENTS, Empty::Markup),
        ..BASE
    },
    Spec {
        format: Format::Llama3Json,
        families: "Llama 3.1 / 3.2 / 3.3 JSON, Llama 4 JSON",
        start: &["<|python_tag|>"],
        end: &["<|eom_id|>", "<|eot_id|>"],
        grammar: json(&[], Fence::No, Body::Objects { sep: Some(b';'), repeat: true }, NAME_ARGUMENTS, Empty::NotACall),
        ..BASE
    },
    Spec {
        format: Format::Granite,
        families: "Granite 3.x / 4.x",
        start: &[super::granite::TOOL_CALL, super::granite::RESPONSE],
        grammar: Grammar::Parser(super::granite::parse),
        reasoning: &[THINK],
        ..BASE
    },
    Spec {
        format: Format::Granite20bFc,
        families: "granite-20b-functioncalling",
        start: &["<function_call>"],
        end: &["</function_call>"],
        grammar: json(&[], Fence::No, Body::ArrayOrObject { junk: 0 }, NAME_ARGUMENTS, Empty::NotACall),
        ..BASE
    },
    Spec {
        format: Format::Internlm2,
        families: "InternLM2 / 2.5",
        start: &["<|action_start|>"],
        end: &["<|action_end|>"],
        grammar: json(
            &["<|plugin|>"],
            Fence::No,
            Body::Objects { sep: None, repeat: false },
            NAME_ARGUMENTS,
            Empty::NotACall,
        ),
        ..BASE
    },
    Spec {
        format: Format::MinimaxM1,
        families: "MiniMax M1",
        start: &["<tool_calls>"],
        end: &["</tool_calls>"],
        grammar: json(&[], Fence::No, Body::Lines, NAME_ARGUMENTS, Empty::NotACall),
        reasoning: &[THINK],
        ..BASE
    },
    Spec {
        format: Format::Apriel,
        families: "Apriel 1.5 / 1.6 (after its `[BEGIN FINAL RESPONSE]`)",
        start: &["<tool_calls>"],
        end: &["</tool_calls>"],
        grammar: TOOL_CALLS_ARRAY,
        when: When::After(Format::Apriel),
        reasoning: &[APRIEL_FINAL, APRIEL_THINKING],
        wrappers: &["[END FINAL RESPONSE]"],
    },
    Spec {
        format: Format::HunyuanA13b,
        families: "Hunyuan A13B (inside its `<answer>`)",
        start: &["<tool_calls>"],
        end: &["</tool_calls>"],
        grammar: TOOL_CALLS_ARRAY,
        when: When::After(Format::HunyuanA13b),
        reasoning: &[THINK],
        wrappers: &["<answer>", "</answer>"],
    },
    Spec {
        format: Format::Jamba,
        families: "Jamba; Hunyuan A13B and Apriel when nothing around the block names them",
        start: &["<tool_calls>"],
        end: &["</tool_calls>"],
        grammar: TOOL_CALLS_ARRAY,
        ..BASE
    },
    Spec {
        format: Format::FirefunctionV2,
        families: "FireFunction v2",
        start: &[" functools["],
        grammar: json(&[], Fence::No, Body::Array, NAME_ARGUMENTS, Empty::List),
        ..BASE
    },
    Spec {
        format: Format::Phi4Mini,
        families: "Phi-4-mini",
        start: &["functools["],
        grammar: json(&[], Fence::No, Body::Array, NAME_ARGUMENTS, Empty::List),
        ..BASE
    },
    Spec {
        format: Format::FunctionaryV32,
        families: "Functionary v3.2",
        start: &[super::functionary::MARKER],
        // Also at the start of `content` (the prompt ends with `>>>`): see `scan.rs`.
        grammar: Grammar::Parser(super::functionary::parse),
        ..BASE
    },
    Spec {
        format: Format::CommandR7b,
        families: "Command R7B, Command A, Command 3 / 4",
        start: &["<|START_ACTION|>"],
        end: &["<|END_ACTION|>"],
        grammar: json(&[], Fence::No, Body::ArrayOrObject { junk: 0 }, COHERE_KEYS, Empty::NotACall),
        reasoning: &[COHERE_THINK],
        wrappers: &["<|START_RESPONSE|>", "<|END_RESPONSE|>", "<|START_TEXT|>", "<|END_TEXT|>"],
        ..BASE
    },
    Spec {
        format: Format::CommandRPlus,
        families: "Command R+",
        start: &["Action:"],
        grammar: json(&[], Fence::Required, Body::Array, COHERE_KEYS, Empty::NotACall),
        // Its turn tokens, left in the text when the server keeps special tokens.
        wrappers: &["<|START_OF_TURN_TOKEN|>", "<|CHATBOT_TOKEN|>", "<|END_OF_TURN_TOKEN|>"],
        ..BASE
    },
    Spec {
        format: Format::React,
        families: "models prompted with ReAct (`Action:` / `Action Input:`)",
        start: &["Action:"],
        grammar: Grammar::Parser(super::react::parse),
        ..BASE
    },
    Spec {
        format: Format::MinimaxText,
        families: "MiniMax M2 (plain-text `[TOOL_CALL]` form)",
        start: &["[TOOL_CALL]"],
        end: &["[/TOOL_CALL]"],
        grammar: Grammar::Parser(super::minimax_text::parse),
        reasoning: &[THINK],
        ..BASE
    },
    Spec {
        format: Format::Apertus,
        families: "Apertus",
        start: &["<|tools_prefix|>"],
        end: &["<|tools_suffix|>"],
        grammar: json(&[], Fence::No, Body::Keyed, NAME_ARGUMENTS, Empty::NotACall),
        reasoning: &[APERTUS_INNER],
        ..BASE
    },
    Spec {
        format: Format::Nemotron,
        families: "Nemotron Nano v2",
        start: &["<TOOLCALL>"],
        end: &["</TOOLCALL>"],
        grammar: TOOL_CALLS_ARRAY,
        reasoning: &[THINK],
        ..BASE
    },
    // A bare `[` marker: after every marker that starts with a word.
    Spec {
        format: Format::Pythonic,
        families: "Llama 3.2 / 4 pythonic, ToolACE, Gemma 3 (pythonic template), Llama 3.1 built-in tools",
        start: &["[", "<|python_start|>", super::pythonic::PYTHON_TAG],
        end: &["]", "<|python_end|>"],
        grammar: Grammar::Python(PyRow { close: "<|python_end|>", bare_list: true }),
        ..BASE
    },
    // Found at the `{` of its arguments by looking back (`scan.rs`), or at `<function=`.
    Spec {
        format: Format::Glued,
        families: "any model writing a declared tool's name glued to its JSON arguments",
        start: &["<function=", "<tool_call>", "<function_call>"],
        grammar: Grammar::Parser(super::glued::parse),
        ..BASE
    },
    // JSON in prose: last, it is the least specific.
    Spec {
        format: Format::Json,
        families: "any model writing a JSON call shape in prose or a Markdown fence",
        start: &["{", "[", "```"],
        grammar: Grammar::Parser(super::json_text::parse),
        ..BASE
    },
];

/// The specs of `format` (one row each; `Native` has none).
pub(crate) fn spec(format: Format) -> Option<&'static Spec> {
    REGISTRY.iter().find(|s| s.format == format)
}

/// What a marker of the automaton stands for.
#[derive(Clone, Debug)]
pub(crate) enum Kind {
    /// Call markup: registry rows to try, in order.
    Call(Vec<usize>),
    /// Opens reasoning block `Dispatch::reasoning[i]`.
    ThinkOpen(usize),
    /// Closes reasoning block `Dispatch::reasoning[i]`.
    ThinkClose(usize),
    /// A prose wrapper of this format: dropped from the prose.
    Wrapper(Format),
}

/// A reasoning block and the one format that writes it, if only one does.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Reasoning {
    pub(crate) think: Think,
    pub(crate) owner: Option<Format>,
}

/// The automaton and what each of its patterns means.
pub(crate) struct Dispatch {
    /// Every marker (leftmost-longest), run anchored at the places [`Starts`] finds.
    automaton: AhoCorasick,
    /// The same markers for unanchored searches (markup-dense text), as a DFA: one table
    /// look-up per byte (~600 KB, built once per process), where the NFA walked sparse
    /// states.
    unanchored: AhoCorasick,
    starts: Starts,
    pub(crate) kinds: Vec<Kind>,
    /// Every reasoning block, once.
    pub(crate) reasoning: Vec<Reasoning>,
    /// The longest marker, in bytes.
    pub(crate) longest: usize,
    /// Every marker, in pattern order (the tests compare the searches with plain ones).
    #[cfg(test)]
    pub(crate) patterns: Vec<&'static str>,
    /// The row of `Format::Glued`.
    pub(crate) glued: usize,
    /// The row of `Format::FunctionaryV32` (its first recipient starts the text, no marker).
    pub(crate) leading: usize,
    /// The row of `Format::GptOssHarmony` (a raw completion starts with its recipient).
    pub(crate) harmony: usize,
}

impl std::fmt::Debug for Dispatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dispatch").field("patterns", &self.kinds.len()).finish_non_exhaustive()
    }
}

/// The one dispatch table, built on first use.
pub(crate) fn dispatch() -> Option<&'static Dispatch> {
    static DISPATCH: OnceLock<Option<Dispatch>> = OnceLock::new();
    DISPATCH.get_or_init(build).as_ref()
}

fn build() -> Option<Dispatch> {
    let mut reasoning: Vec<Reasoning> = Vec::new();
    for spec in REGISTRY {
        for t in spec.reasoning {
            match reasoning.iter_mut().find(|r| r.think == *t) {
                Some(r) if r.owner != Some(spec.format) => r.owner = None,
                Some(_) => {}
                None => reasoning.push(Reasoning { think: *t, owner: Some(spec.format) }),
            }
        }
    }
    let mut patterns: Vec<&'static str> = Vec::new();
    let mut kinds: Vec<Kind> = Vec::new();
    for (i, r) in reasoning.iter().enumerate() {
        if let Some(open) = r.think.open {
            patterns.push(open);
            kinds.push(Kind::ThinkOpen(i));
        }
        patterns.push(r.think.close);
        kinds.push(Kind::ThinkClose(i));
    }
    for spec in REGISTRY {
        for w in spec.wrappers {
            patterns.push(w);
            kinds.push(Kind::Wrapper(spec.format));
        }
    }
    let call_start = patterns.len();
    for (row, spec) in REGISTRY.iter().enumerate() {
        for marker in spec.start {
            if let Some(p) = patterns.iter().skip(call_start).position(|p| p == marker) {
                if let Some(Kind::Call(rows)) = kinds.get_mut(call_start + p) {
                    rows.push(row);
                }
            } else {
                patterns.push(marker);
                kinds.push(Kind::Call(vec![row]));
            }
        }
    }
    // A longer marker also tries the rows of the markers that are its prefixes: the
    // automaton reports the longest match at a position only.
    let own: Vec<Kind> = kinds.clone();
    for (p, kind) in kinds.iter_mut().enumerate().skip(call_start) {
        let Kind::Call(rows) = kind else { continue };
        for (q, other) in own.iter().enumerate().skip(call_start) {
            let (Some(long), Some(short)) = (patterns.get(p), patterns.get(q)) else {
                continue;
            };
            if q != p
                && long.len() > short.len()
                && long.starts_with(short)
                && let Kind::Call(more) = other
            {
                let add: Vec<usize> = more.iter().filter(|r| !rows.contains(r)).copied().collect();
                rows.extend(add);
            }
        }
        rows.sort_unstable();
    }
    let longest = patterns.iter().map(|p| p.len()).max().unwrap_or(0);
    let automaton = AhoCorasick::builder()
        .match_kind(MatchKind::LeftmostLongest)
        .start_kind(StartKind::Anchored)
        .build(&patterns)
        .ok()?;
    let unanchored = AhoCorasick::builder()
        .match_kind(MatchKind::LeftmostLongest)
        .kind(Some(aho_corasick::AhoCorasickKind::DFA))
        .build(&patterns)
        .ok()?;
    let starts = Starts::new(&patterns);
    let glued = REGISTRY.iter().position(|s| s.format == Format::Glued)?;
    let leading = REGISTRY.iter().position(|s| s.format == Format::FunctionaryV32)?;
    let harmony = REGISTRY.iter().position(|s| s.format == Format::GptOssHarmony)?;
    Some(Dispatch {
        automaton,
        unanchored,
        starts,
        kinds,
        reasoning,
        longest,
        #[cfg(test)]
        patterns,
        glued,
        leading,
        harmony,
    })
}

impl Dispatch {
    /// The leftmost marker in `text[from..end]` (the longest of those starting there), as
    /// an unanchored leftmost-longest search of every marker over that span finds it.
    /// `dense`: markers come thick in this text, so the automaton walks every byte
    /// instead of being started at each place the prefilter finds (the same match).
    pub(crate) fn find(&self, text: &str, from: usize, end: usize, dense: bool) -> Option<Match> {
        #[cfg(test)]
        if starts::tests::is_full() {
            return starts::tests::full_search(text, from, end);
        }
        if dense {
            let end = end.min(text.len());
            let span = from.min(end)..end;
            return self.unanchored.try_find(aho_corasick::Input::new(text).span(span)).ok().flatten();
        }
        starts::find(&self.automaton, &self.unanchored, &self.starts, text, from, end)
    }

    /// Where the end of `text` (from `from` on) could be the start of a marker that the
    /// next bytes may complete: the first byte whose rest of the text is a proper prefix
    /// of a marker; `text.len()` when none.
    pub(crate) fn partial_marker(&self, text: &str, from: usize) -> usize {
        self.starts.partial(text.as_bytes(), from)
    }
}

/// A cheap look at the text after a marker: false when the row's grammar cannot succeed
/// there.
pub(crate) fn plausible(format: Format, text: &str, at: usize) -> bool {
    let bytes = text.as_bytes();
    let first_non_ws =
        |from: usize| bytes.get(from..).and_then(|r| r.iter().take(64).find(|b| !b.is_ascii_whitespace()));
    match (format, bytes.get(at)) {
        // JSON in prose: `{"` or `[{`.
        (Format::Json, Some(b'{')) => first_non_ws(at + 1).is_none_or(|b| *b == b'"'),
        (Format::Json, Some(b'[')) => first_non_ws(at + 1).is_none_or(|b| *b == b'{'),
        // A Python call list: `[name(`.
        (Format::Pythonic, Some(b'[')) => {
            let rest = bytes.get(at + 1..).unwrap_or_default();
            let rest = rest.iter().skip_while(|b| b.is_ascii_whitespace());
            let mut name = 0usize;
            for &b in rest.take(256) {
                if b.is_ascii_alphanumeric() || b == b'_' || b == b'.' {
                    name += 1;
                } else {
                    return name > 0 && (b == b'(' || b.is_ascii_whitespace());
                }
            }
            true
        }
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_format_is_declared_once() {
        for f in Format::ALL {
            let n = REGISTRY.iter().filter(|s| s.format == *f).count();
            assert_eq!(n, usize::from(*f != Format::Native), "{f}");
        }
        for s in REGISTRY {
            assert!(!s.families.is_empty() && !s.start.is_empty(), "{}", s.format);
        }
        assert!(dispatch().is_some());
    }
}
