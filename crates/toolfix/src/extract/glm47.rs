//! GLM-4.7: `<tool_call>N<arg_key>K</arg_key><arg_value>raw</arg_value></tool_call>`.
//!
//! The name runs to `<arg_key>` or `</tool_call>` with no newline after it (a name
//! followed by a newline is read as `glm45`, the same grammar). See `glm45`.

use super::Format;
use super::glm45::parse_glm;
use super::parsed::{Cx, Parsed};

/// Start marker.
pub(crate) const MARKERS: &[&str] = &["<tool_call>"];

/// Parses a GLM-4.7 call at `at`.
pub(crate) fn parse<'a>(text: &'a str, at: usize, cx: &Cx<'_>) -> Option<Parsed<'a>> {
    parse_glm(text, at, cx, Format::Glm47)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn calls(text: &str) -> Vec<(String, Value)> {
        let cx = Cx { tools: None };
        let mut out = Vec::new();
        let mut pos = 0;
        while let Some(off) = text[pos..].find(MARKERS[0]) {
            let at = pos + off;
            match parse(text, at, &cx) {
                Some(p) => {
                    out.extend(
                        p.calls.into_iter().map(|c| (c.name.into_owned(), serde_json::from_str(&c.arguments).unwrap())),
                    );
                    pos = p.end;
                }
                None => pos = at + 1,
            }
        }
        out
    }

    #[test]
    fn prose_about_the_tags_is_not_a_call() {
        assert_eq!(calls("Wrap it in <tool_call> and </tool_call>."), vec![]);
        assert_eq!(calls("<tool_call> get weather </tool_call>"), vec![]);
    }

    #[test]
    fn corpus_examples() {
        assert_eq!(calls("<tool_call>get_current_date</tool_call>"), vec![("get_current_date".into(), json!({}))]);
        let text = "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Beijing</arg_value></tool_call><tool_call>get_weather<arg_key>city</arg_key><arg_value>Shanghai</arg_value></tool_call>";
        assert_eq!(
            calls(text),
            vec![
                ("get_weather".into(), json!({"city": "Beijing"})),
                ("get_weather".into(), json!({"city": "Shanghai"}))
            ]
        );
    }

    #[test]
    fn untyped_values() {
        let text = "<tool_call>process<arg_key>count</arg_key><arg_value>42</arg_value><arg_key>b</arg_key><arg_value>True</arg_value><arg_key>n</arg_key><arg_value>None</arg_value><arg_key>data</arg_key><arg_value>{\"k\": [1, 2]}</arg_value><arg_key>t</arg_key><arg_value>string value</arg_value></tool_call>";
        assert_eq!(
            calls(text),
            vec![(
                "process".into(),
                json!({"count": 42, "b": true, "n": null, "data": {"k": [1, 2]}, "t": "string value"})
            )]
        );
    }

    #[test]
    fn leaked_markup_and_cut_off() {
        let text = "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris";
        assert_eq!(calls(text), vec![("get_weather".into(), json!({"city": "Paris"}))]);
        assert_eq!(calls("<tool_call>get_weather\n<arg_key>city</arg_key></tool_call>"), vec![]);
    }
}
