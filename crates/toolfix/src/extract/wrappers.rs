//! Markers around prose that carry no call and are dropped from it, for formats whose
//! parsers live elsewhere: DeepSeek's tool-output markers (their text is kept),
//! gpt-oss Harmony's final-channel header and end tokens, Hunyuan's `<answer>` wrapper.

use super::parsed::{Cx, Parsed};

/// DeepSeek tool-output markers.
pub(crate) const DEEPSEEK: &[&str] =
    &["<｜tool▁outputs▁begin｜>", "<｜tool▁outputs▁end｜>", "<｜tool▁output▁begin｜>", "<｜tool▁output▁end｜>"];

/// Harmony's final-channel header and end tokens.
pub(crate) const HARMONY: &[&str] =
    &["<|start|>assistant<|channel|>final<|message|>", "<|channel|>final<|message|>", "<|return|>"];

/// Hunyuan A13B's answer wrapper.
pub(crate) const HUNYUAN: &[&str] = &["<answer>", "</answer>"];

/// Drop the marker at `at` (any of the tables above).
pub(crate) fn parse<'a>(text: &'a str, at: usize, _cx: &Cx<'_>) -> Option<Parsed<'a>> {
    let rest = text.get(at..)?;
    let w = DEEPSEEK.iter().chain(HARMONY).chain(HUNYUAN).filter(|w| rest.starts_with(**w)).max_by_key(|w| w.len())?;
    Some(Parsed { end: at + w.len(), calls: Vec::new() })
}
