//! Seed-OSS: `<seed:tool_call>\n<function=N>\n<parameter=K>raw</parameter>\n</function>\n</seed:tool_call>`.
//!
//! The grammar of Qwen3-Coder inside `<seed:tool_call>` blocks; see `qwen3_coder`.

use super::Format;
use super::parsed::{Cx, Parsed};
use super::qwen3_coder::{Dialect, parse_dialect};

/// Start marker: the block tag (a bare `<function=N>` is read as Qwen3-Coder).
pub(crate) const MARKERS: &[&str] = &["<seed:tool_call>"];

const SEED: Dialect = Dialect { block: "seed:tool_call", format: Format::SeedOss };

/// Parses Seed-OSS call blocks starting at `at`.
pub(crate) fn parse<'a>(text: &'a str, at: usize, cx: &Cx<'_>) -> Option<Parsed<'a>> {
    parse_dialect(text, at, cx, &SEED)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn calls(text: &str) -> Vec<(String, Value)> {
        let at = text.find(MARKERS[0]).unwrap();
        let cx = Cx { tools: None };
        parse(text, at, &cx)
            .map(|p| {
                p.calls
                    .into_iter()
                    .map(|c| {
                        assert_eq!(c.format, Format::SeedOss);
                        (c.name.into_owned(), serde_json::from_str(&c.arguments).unwrap())
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    #[test]
    fn corpus_single() {
        let text = "<seed:tool_call>\n<function=get_weather>\n<parameter=location>Barcelona, Spain</parameter>\n</function>\n</seed:tool_call>";
        assert_eq!(calls(text), vec![("get_weather".into(), json!({"location": "Barcelona, Spain"}))]);
    }

    #[test]
    fn after_reasoning_and_parallel() {
        let text = "<seed:think>\nthinking\n</seed:think>\n<seed:tool_call>\n<function=a>\n<parameter=x>1</parameter>\n</function>\n</seed:tool_call>\n<seed:tool_call>\n<function=b>\n</function>\n</seed:tool_call>";
        assert_eq!(calls(text), vec![("a".into(), json!({"x": 1})), ("b".into(), json!({}))]);
    }

    #[test]
    fn cut_off_and_unclosed() {
        let text = "<seed:tool_call>\n<function=get_weather>\n<parameter=location>\nParis\n<parameter=unit>celsius";
        assert_eq!(calls(text), vec![("get_weather".into(), json!({"location": "Paris", "unit": "celsius"}))]);
    }

    #[test]
    fn not_ours() {
        assert_eq!(calls("<seed:tool_call>{\"name\": \"f\"}</seed:tool_call>"), vec![]);
    }
}
