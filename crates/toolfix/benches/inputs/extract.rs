//! The generated reply the extraction benchmark and instruction-count workloads share.

/// A reply for the extraction benches and workloads: reasoning, prose full of brackets and braces, and
/// calls in four formats, about `target` bytes.
pub(crate) fn reply(target: usize) -> String {
    use std::fmt::Write as _;
    let prose = "The quick brown fox [jumps] over {the} lazy dog; x < y > z, \"quoted\". ";
    let mut s = String::from("<think>Plan: look up the weather, then the time. ");
    s.push_str(&prose.repeat(60));
    s.push_str("</think>\n");
    let mut i = 0;
    while s.len() < target {
        s.push_str(&prose.repeat(120));
        let _ = match i % 4 {
            0 => write!(
                s,
                "<tool_call>\n{{\"name\": \"get_weather\", \"arguments\": {{\"city\": \"Paris {i}\"}}}}\n</tool_call>\n"
            ),
            1 => writeln!(s, "[TOOL_CALLS][{{\"name\": \"get_time\", \"arguments\": {{\"tz\": \"UTC+{i}\"}}}}]"),
            2 => write!(
                s,
                "<tool_call>\n<function=search>\n<parameter=q>\nweather {i}\n</parameter>\n</function>\n</tool_call>\n"
            ),
            _ => writeln!(s, "```json\n{{\"name\": \"search\", \"arguments\": {{\"q\": \"ünïcødé {i}\"}}}}\n```"),
        };
        i += 1;
    }
    s
}
