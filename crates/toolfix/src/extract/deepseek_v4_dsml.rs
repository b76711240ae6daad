//! DeepSeek V4 DSML: the V3.2 grammar inside `<｜DSML｜tool_calls>` ... `</｜DSML｜tool_calls>`.
//! See `deepseek_v32_dsml`.

use super::Format;
use super::deepseek_v32_dsml::parse_dsml;
use super::parsed::{Cx, Parsed};

/// Start markers: the block tag in both separator spellings.
pub(crate) const MARKERS: &[&str] = &["<｜DSML｜tool_calls", "<|DSML|tool_calls"];

/// Parses a DeepSeek V4 DSML block at `at`.
pub(crate) fn parse<'a>(text: &'a str, at: usize, cx: &Cx<'_>) -> Option<Parsed<'a>> {
    parse_dsml(text, at, cx, Format::DeepseekV4Dsml)
}

#[cfg(test)]
mod tests {
    use super::super::deepseek_v32_dsml::tests::calls;
    use super::*;
    use serde_json::json;
    use std::collections::HashMap;

    const V4: Format = Format::DeepseekV4Dsml;

    #[test]
    fn single_and_parallel() {
        let text = "Let me check.\n\n<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"get_weather\">\n<｜DSML｜parameter name=\"city\" string=\"true\">Paris</｜DSML｜parameter>\n<｜DSML｜parameter name=\"days\" string=\"false\">3</｜DSML｜parameter>\n</｜DSML｜invoke>\n<｜DSML｜invoke name=\"get_time\">\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>";
        assert_eq!(
            calls(text, V4, None),
            vec![("get_weather".into(), json!({"city": "Paris", "days": 3})), ("get_time".into(), json!({}))]
        );
    }

    #[test]
    fn typed_through_schema() {
        let mut tools = HashMap::new();
        tools.insert(
            "edit".to_owned(),
            json!({"type": "object", "properties": {"path": {"type": "string"}, "lines": {"type": "array"}, "force": {"type": "boolean"}}}),
        );
        let text = "<｜DSML｜tool_calls><｜DSML｜invoke name=\"edit\"><｜DSML｜parameter name=\"path\" string=\"false\">123</｜DSML｜parameter><｜DSML｜parameter name=\"lines\" string=\"true\">[1, 2]</｜DSML｜parameter><｜DSML｜parameter name=\"force\" string=\"false\">True</｜DSML｜parameter></｜DSML｜invoke></｜DSML｜tool_calls>";
        assert_eq!(
            calls(text, V4, Some(&tools)),
            vec![("edit".into(), json!({"path": "123", "lines": [1, 2], "force": true}))]
        );
    }

    #[test]
    fn ascii_and_corrupted() {
        let text = "<|DSML|tool_calls>\n<|DSML|invoke name=\"f\">\n<|DSML|parameter name=\"q\" string=\"true\">a <b> c</｜｜DSML｜｜parameter>\n</||DSML||invoke>\n</|DSML|tool_calls>";
        assert_eq!(calls(text, V4, None), vec![("f".into(), json!({"q": "a <b> c"}))]);
    }

    #[test]
    fn json_body_and_cut_off() {
        let text = "<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"f\">\n{\"a\": 1}\n</｜DSML｜invoke>\n<｜DSML｜invoke name=\"g\">\n<｜DSML｜parameter name=\"s\" string=\"true\">partial";
        assert_eq!(calls(text, V4, None), vec![("f".into(), json!({"a": 1})), ("g".into(), json!({"s": "partial"}))]);
    }

    #[test]
    fn v32_block_is_not_v4() {
        let text = "<｜DSML｜function_calls><｜DSML｜invoke name=\"f\"></｜DSML｜invoke></｜DSML｜function_calls>";
        assert_eq!(calls(text, V4, None), vec![]);
        assert_eq!(calls("<｜DSML｜invoke name=\"f\"></｜DSML｜invoke>", V4, None), vec![]);
    }
}
