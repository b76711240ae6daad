//! Every format the extractor knows: its start markers and its parser, and the reasoning
//! markers. The driver builds one Aho-Corasick automaton over all markers and scans each
//! text once.
//!
//! Order matters where formats share a marker: the more specific parser comes first (for
//! `<tool_call>`: Qwen3-Coder's `<function=`, GLM's `name<arg_key>`, then Hermes JSON, then
//! a JSON list). A parser returns `None` when the text after the marker is not its format.

use super::Format;
use super::parsed::{Cx, Parsed};
use aho_corasick::{AhoCorasick, MatchKind};
use std::sync::OnceLock;

/// A format parser: see `parsed.rs` for the contract.
pub(crate) type ParseFn = for<'a> fn(&'a str, usize, &Cx<'_>) -> Option<Parsed<'a>>;

/// One row of the registry.
#[derive(Clone, Copy)]
pub(crate) struct Entry {
    pub(crate) format: Format,
    pub(crate) markers: &'static [&'static str],
    pub(crate) parse: ParseFn,
}

macro_rules! entry {
    ($format:ident, $module:ident) => {
        Entry { format: Format::$format, markers: super::$module::MARKERS, parse: super::$module::parse }
    };
}

/// Every format, most specific first where markers are shared. `Format::Native` (the
/// server's own `tool_calls`) has no markers.
pub(crate) static REGISTRY: &[Entry] = &[
    // ---- markup formats (branch `extract-markup`): wired in as they land ----
    // `<function=N>{json}` before Qwen3-Coder's `<function=N><parameter=...>`.
    entry!(FunctionaryV31, functionary_v3_1),
    entry!(Qwen3Coder, qwen3_coder),
    entry!(Glm47, glm47),
    entry!(Glm45, glm45),
    entry!(SeedOss, seed_oss),
    entry!(DeepseekV3, deepseek_v3),
    entry!(DeepseekV31, deepseek_v31),
    entry!(DeepseekV32Dsml, deepseek_v32_dsml),
    entry!(DeepseekV4Dsml, deepseek_v4_dsml),
    entry!(KimiK2, kimi_k2),
    entry!(GptOssHarmony, gpt_oss_harmony),
    entry!(Gemma4, gemma4),
    entry!(MinimaxM2, minimax_m2),
    entry!(MinimaxM3, minimax_m3),
    entry!(Step3, step3),
    entry!(MuseGlimmer, muse_glimmer),
    entry!(Lfm2, lfm2),
    entry!(Olmo3, olmo3),
    entry!(FunctionCallsXml, function_calls_xml),
    // ---- JSON family ----
    entry!(Hermes, hermes),
    entry!(Xlam, xlam),
    entry!(MistralV11, mistral_v11),
    entry!(Mistral, mistral),
    entry!(Llama3Json, llama3_json),
    entry!(Granite, granite),
    entry!(Granite20bFc, granite_20b_fc),
    entry!(Internlm2, internlm2),
    entry!(MinimaxM1, minimax_m1),
    entry!(Jamba, jamba),
    entry!(HunyuanA13b, hunyuan_a13b),
    entry!(Apriel, apriel),
    Entry { format: Format::Apriel, markers: super::apriel::WRAPPERS, parse: super::apriel::parse_wrapper },
    entry!(FirefunctionV2, firefunction_v2),
    entry!(Phi4Mini, phi4_mini),
    entry!(FunctionaryV32, functionary_v3_2),
    entry!(CommandR7b, command_r7b),
    Entry {
        format: Format::CommandR7b,
        markers: super::command_r7b::WRAPPERS,
        parse: super::command_r7b::parse_wrapper,
    },
    entry!(CommandRPlus, command_r_plus),
    entry!(Apertus, apertus),
    entry!(Nemotron, nemotron),
    // ---- markup formats whose marker is a bare `[` (branch `extract-markup`) ----
    entry!(Pythonic, pythonic),
    // ---- markers around prose, dropped from it ----
    Entry { format: Format::DeepseekV3, markers: super::wrappers::DEEPSEEK, parse: super::wrappers::parse },
    Entry { format: Format::GptOssHarmony, markers: super::wrappers::HARMONY, parse: super::wrappers::parse },
    Entry { format: Format::HunyuanA13b, markers: super::wrappers::HUNYUAN, parse: super::wrappers::parse },
    // ---- JSON in prose: last, it is the least specific ----
    entry!(Json, json_text),
];

/// The opening of gpt-oss Harmony's analysis channel (reasoning written as channel markup).
pub(crate) const HARMONY_ANALYSIS: &str = "<|channel|>analysis<|message|>";

/// Reasoning blocks: `(open, close)`. An open of `None` means the block only ever appears
/// forced open (everything before the close is reasoning).
pub(crate) static REASONING: &[(Option<&str>, &str)] = &[
    (Some("<think>"), "</think>"),
    (Some("<seed:think>"), "</seed:think>"),
    (Some("<mm:think>"), "</mm:think>"),
    (Some("<|START_THINKING|>"), "<|END_THINKING|>"),
    (Some("<|channel>thought"), "<channel|>"),
    (Some(HARMONY_ANALYSIS), "<|end|>"),
    (None, "[BEGIN FINAL RESPONSE]"),
];

/// What a marker of the automaton stands for.
#[derive(Clone, Debug)]
pub(crate) enum Kind {
    /// Call markup: registry rows to try, in order.
    Call(Vec<usize>),
    /// Opens reasoning block `REASONING[i]`.
    ThinkOpen(usize),
    /// Closes reasoning block `REASONING[i]`.
    ThinkClose,
}

/// The automaton and what each of its patterns means.
pub(crate) struct Dispatch {
    pub(crate) automaton: AhoCorasick,
    pub(crate) kinds: Vec<Kind>,
    /// The longest marker, in bytes (how much a stream must hold back).
    pub(crate) longest: usize,
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
    let mut patterns: Vec<&'static str> = Vec::new();
    let mut kinds: Vec<Kind> = Vec::new();
    for (i, (open, close)) in REASONING.iter().enumerate() {
        if let Some(open) = open {
            patterns.push(open);
            kinds.push(Kind::ThinkOpen(i));
        }
        patterns.push(close);
        kinds.push(Kind::ThinkClose);
    }
    let call_start = patterns.len();
    for (row, entry) in REGISTRY.iter().enumerate() {
        for marker in entry.markers {
            if let Some(p) = patterns.iter().position(|p| p == marker) {
                if let Some(Kind::Call(rows)) = kinds.get_mut(p) {
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
            if q != p && long.len() > short.len() && long.starts_with(short) {
                if let Kind::Call(more) = other {
                    let add: Vec<usize> = more.iter().filter(|r| !rows.contains(r)).copied().collect();
                    rows.extend(add);
                }
            }
        }
    }
    let longest = patterns.iter().map(|p| p.len()).max().unwrap_or(0);
    let automaton = AhoCorasick::builder().match_kind(MatchKind::LeftmostLongest).build(&patterns).ok()?;
    Some(Dispatch { automaton, kinds, longest })
}

/// A cheap look at the text after a marker: false when the row's parser cannot succeed
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
