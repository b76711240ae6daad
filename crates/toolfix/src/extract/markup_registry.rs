//! The markup-family format parsers (raw-parameter, token and pythonic formats), with
//! their start markers, and a test hook that runs one of them over a text.

use super::parsed::{Cx, Parsed};
use super::{Format, ToolLookup};

/// A format parser: see `parsed.rs` for the contract.
pub(crate) type ParseFn = for<'a> fn(&'a str, usize, &Cx<'_>) -> Option<Parsed<'a>>;

/// Each markup-family format: its start markers and its parser.
pub(crate) const MARKUP_FORMATS: &[(Format, &[&str], ParseFn)] = &[
    (Format::Qwen3Coder, super::qwen3_coder::MARKERS, super::qwen3_coder::parse),
    (Format::SeedOss, super::seed_oss::MARKERS, super::seed_oss::parse),
    (Format::Glm45, super::glm45::MARKERS, super::glm45::parse),
    (Format::Glm47, super::glm47::MARKERS, super::glm47::parse),
    (Format::DeepseekV32Dsml, super::deepseek_v32_dsml::MARKERS, super::deepseek_v32_dsml::parse),
    (Format::DeepseekV4Dsml, super::deepseek_v4_dsml::MARKERS, super::deepseek_v4_dsml::parse),
    (Format::KimiK2, super::kimi_k2::MARKERS, super::kimi_k2::parse),
    (Format::Lfm2, super::lfm2::MARKERS, super::lfm2::parse),
    (Format::Olmo3, super::olmo3::MARKERS, super::olmo3::parse),
    (Format::Pythonic, super::pythonic::MARKERS, super::pythonic::parse),
    (Format::Step3, super::step3::MARKERS, super::step3::parse),
    (Format::MinimaxM2, super::minimax_m2::MARKERS, super::minimax_m2::parse),
    (Format::MuseGlimmer, super::muse_glimmer::MARKERS, super::muse_glimmer::parse),
    (Format::DeepseekV3, super::deepseek_v3::MARKERS, super::deepseek_v3::parse),
    (Format::DeepseekV31, super::deepseek_v31::MARKERS, super::deepseek_v31::parse),
    (Format::GptOssHarmony, super::gpt_oss_harmony::MARKERS, super::gpt_oss_harmony::parse),
    (Format::Gemma4, super::gemma4::MARKERS, super::gemma4::parse),
    (Format::MinimaxM3, super::minimax_m3::MARKERS, super::minimax_m3::parse),
];

/// Runs the markup-family parsers over `text` as a minimal driver would: at the
/// earliest start marker of any of them, each parser whose marker matches is tried in
/// table order; the first that parses wins and what it consumed is skipped. Returns
/// `(format, name, arguments)` of every call found. For tests; the real driver also
/// tries the JSON formats, splits reasoning, dedupes and types ids.
#[doc(hidden)]
pub fn parse_markup_for_tests(text: &str, tools: Option<&dyn ToolLookup>) -> Vec<(Format, String, String)> {
    let cx = Cx { tools };
    let markers: Vec<&str> = MARKUP_FORMATS.iter().flat_map(|(_, markers, _)| markers.iter().copied()).collect();
    // Next occurrence of each marker at or after `pos`, found lazily (monotone scans).
    let mut next: Vec<Option<usize>> = vec![Some(0); markers.len()];
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < text.len() {
        for (slot, marker) in next.iter_mut().zip(&markers) {
            if slot.is_some_and(|i| i < pos) || *slot == Some(0) && pos == 0 {
                *slot = text.get(pos..).and_then(|r| r.find(marker)).map(|i| pos + i);
            }
        }
        let Some(at) = next.iter().flatten().copied().min() else { break };
        let tail = text.get(at..).unwrap_or("");
        let parsed = MARKUP_FORMATS
            .iter()
            .filter(|(_, markers, _)| markers.iter().any(|m| tail.starts_with(m)))
            .find_map(|(_, _, parse)| parse(text, at, &cx));
        match parsed {
            Some(parsed) => {
                out.extend(parsed.calls.into_iter().map(|c| (c.format, c.name.into_owned(), c.arguments.into_owned())));
                pos = parsed.end.max(at + 1);
            }
            None => pos = at + 1,
        }
        while pos < text.len() && !text.is_char_boundary(pos) {
            pos += 1;
        }
    }
    out
}
