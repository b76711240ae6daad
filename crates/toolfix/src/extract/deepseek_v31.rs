//! DeepSeek V3.1: `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>N<｜tool▁sep｜>{json}<｜tool▁call▁end｜><｜tool▁calls▁end｜>`.
//! The tokens of V3 with a bare JSON body; see `deepseek_v3`.

use super::Format;
use super::deepseek_v3::parse_deepseek;
use super::parsed::{Cx, Parsed};

/// Start markers: as DeepSeek V3.
pub(crate) const MARKERS: &[&str] = super::deepseek_v3::MARKERS;

/// Parses a DeepSeek V3.1 section (first call `N<｜tool▁sep｜>{json}`) at `at`.
pub(crate) fn parse<'a>(text: &'a str, at: usize, cx: &Cx<'_>) -> Option<Parsed<'a>> {
    parse_deepseek(text, at, cx, Format::DeepseekV31)
}

#[cfg(test)]
mod tests {
    use super::super::deepseek_v3::tests::calls;
    use super::*;

    const V31: Format = Format::DeepseekV31;

    #[test]
    fn bare_json_calls() {
        let text = "prefix<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>foo<｜tool▁sep｜>{\"x\":1}<｜tool▁call▁end｜><｜tool▁call▁begin｜>bar<｜tool▁sep｜>{\"y\":2}<｜tool▁call▁end｜><｜tool▁calls▁end｜> suffix";
        assert_eq!(
            calls(text, V31),
            vec![("foo".into(), "{\"x\":1}".into(), V31), ("bar".into(), "{\"y\":2}".into(), V31)]
        );
    }

    #[test]
    fn malformed() {
        // Per-call markers missing: recovered.
        let text = "<｜tool▁calls▁begin｜>foo<｜tool▁sep｜>{\"x\":1}<｜tool▁calls▁end｜>";
        assert_eq!(calls(text, V31), vec![("foo".into(), "{\"x\":1}".into(), V31)]);
        // Section end missing, call cut off.
        let text = "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>foo<｜tool▁sep｜>{\"x\": [1, ";
        assert_eq!(calls(text, V31), vec![("foo".into(), "{\"x\": [1,".into(), V31)]);
        // A bare `</think>` or tool output is not a call.
        assert_eq!(calls("<｜tool▁calls▁begin｜>", V31), vec![]);
        // Name with leaked markup.
        let text = "<｜tool▁call▁begin｜>get_weather</arg_value><｜tool▁sep｜>{}<｜tool▁call▁end｜>";
        assert_eq!(calls(text, V31), vec![("get_weather".into(), "{}".into(), V31)]);
    }
}
