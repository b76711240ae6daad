//! A hand-written read of a Messages body into the view `fix_body` reads with serde_json
//! (`super::ResponseView`), in one pass over the bytes with the chat reader
//! (`chat::scan::Reader`). Whenever it cannot decide exactly as that read would (a member
//! that repeats, a key with escapes, a `content` that is no list of objects, deep nesting,
//! bytes that are no UTF-8 ...) it gives up and the caller reads the body with serde_json
//! as before: its result is that read's either way.

use super::{BlockView, ResponseView};
use crate::adapter::chat::scan::{Reader, objects};
use crate::adapter::view::{Field, Present, Prose, Text};
use serde::de::IgnoredAny;

/// The view of `body` as `view::read` makes it; `None` when this reader cannot decide.
pub(super) fn read(body: &[u8]) -> Option<ResponseView<'_>> {
    let mut r = Reader::new(body)?;
    let mut view = ResponseView {
        dup: false,
        kind: Text(None),
        content: Present(None),
        stop_reason: Text(None),
        report: Present(None),
    };
    r.ws();
    r.members(["type", "content", "stop_reason", "x_toolfix"], 1, |r, slot| {
        match slot {
            0 => view.kind = r.text()?,
            1 => view.content = Present(Some(objects(r, block)?)),
            2 => view.stop_reason = r.text()?,
            _ => {
                r.skip(1)?;
                view.report = Present(Some(IgnoredAny));
            }
        }
        Some(())
    })?;
    r.ws();
    r.at_end().then_some(view)
}

/// A content block, as `BlockView` reads it.
fn block<'a>(r: &mut Reader<'a>) -> Option<BlockView<'a>> {
    let mut v = BlockView {
        dup: false,
        seen: 0,
        other: false,
        kind: Text(None),
        text: Prose(Text(None)),
        thinking: Prose(Text(None)),
        id: Text(None),
        name: Text(None),
        input: Field(None),
    };
    r.object(|r, key| {
        let i: u32 = match key {
            "type" => 0,
            "text" => 1,
            "thinking" => 2,
            "id" => 3,
            "name" => 4,
            "input" => 5,
            _ => {
                v.other = true;
                return r.skip(2);
            }
        };
        if v.seen & (1 << i) != 0 {
            return None;
        }
        v.seen |= 1 << i;
        match i {
            0 => v.kind = r.text()?,
            // `Prose` reads what `Text` reads (the scan only reads it faster).
            1 => v.text = Prose(r.text()?),
            2 => v.thinking = Prose(r.text()?),
            3 => v.id = r.text()?,
            4 => v.name = r.text()?,
            _ => {
                let from = r.at();
                r.skip(2)?;
                v.input = Field(Some(r.since(from)?));
            }
        }
        Some(())
    })?;
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::super::{BlockView, ResponseView};
    use crate::adapter::chat::scan::tests::{damaged, edits, field_json as field, text_json as text};
    use proptest::prelude::*;
    use serde_json::{Value, json};

    fn block(b: &BlockView<'_>) -> Value {
        json!([
            b.dup,
            b.seen,
            b.other,
            text(&b.kind),
            b.text.as_str(),
            b.thinking.as_str(),
            text(&b.id),
            text(&b.name),
            field(&b.input)
        ])
    }

    /// Everything `fix_body` uses of a view, written out to compare two reads.
    fn describe(v: &ResponseView<'_>) -> Value {
        json!([
            v.dup,
            text(&v.kind),
            v.content.0.as_ref().map(|c| c.iter().map(block).collect::<Vec<_>>()),
            text(&v.stop_reason),
            v.report.0.is_some()
        ])
    }

    /// When the hand-written read decides, serde_json's read agrees; true when it decided.
    fn agrees(body: &[u8]) -> bool {
        let Some(fast) = super::read(body) else { return false };
        let checked = crate::adapter::view::read::<ResponseView<'_>>(body).ok();
        assert_eq!(Some(describe(&fast)), checked.as_ref().map(describe), "{}", String::from_utf8_lossy(body));
        true
    }

    fn fixtures() -> Vec<String> {
        let prose = "The forecast service covers every city on the list. ".repeat(3);
        let values = [
            json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "m",
                "content": [{"type": "text", "text": prose},
                            {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris", "days": 3}}],
                "stop_reason": "tool_use", "stop_sequence": null, "usage": {"input_tokens": 10, "output_tokens": 20}}),
            json!({"type": "message", "content": [{"type": "thinking", "thinking": "hmm \"x\"\n\u{e9}", "signature": "abc"},
                                                   {"type": "text", "text": "a\tb", "citations": [{"a": 1}]},
                                                   {"type": "text", "text": null}],
                "stop_reason": "max_tokens", "x_toolfix": {"summary": "x"}}),
            json!({"type": "message", "content": [], "stop_reason": null, "extra": [1, {"a": [true, null, -1.5e3]}]}),
            json!({"type": "message", "content": [{"type": 1, "text": 5, "thinking": [], "input": null, "id": {}}], "stop_reason": 3}),
            json!({"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}),
        ];
        let mut out: Vec<String> =
            values.iter().flat_map(|v| [v.to_string(), serde_json::to_string_pretty(v).unwrap()]).collect();
        out.push("{\"type\": \"message\", \"content\": [ ] }  ".to_owned());
        out
    }

    #[test]
    fn the_hand_written_read_decides_the_common_bodies_as_serde_json_reads_them() {
        for body in fixtures() {
            assert!(agrees(body.as_bytes()), "not decided: {body}");
        }
        // What it leaves to serde_json: repeated members, keys with escapes, a content that
        // is not a list of objects, no object, bytes that are no UTF-8.
        for body in [
            &br#"{"type": "message", "type": "message"}"#[..],
            br#"{"content": [{"type": "text", "type": "thinking"}]}"#,
            br#"{"typ\u0065": "message"}"#,
            br#"{"content": null}"#,
            br#"{"content": [1]}"#,
            b"[]",
            b"{\"type\": \"m\xff\"}",
        ] {
            assert!(super::read(body).is_none(), "{}", String::from_utf8_lossy(body));
        }
        let deep = format!("{{\"type\": \"message\", \"x\": {}{}}}", "[".repeat(150), "]".repeat(150));
        assert!(super::read(deep.as_bytes()).is_none());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// Bodies cut, with bytes dropped, changed or put in: where the hand-written read
        /// decides, serde_json's read agrees.
        #[test]
        fn damaged_bodies_read_as_serde_json_reads_them(
            which in 0usize..11,
            edits in edits(),
        ) {
            agrees(&damaged(fixtures()[which].clone().into_bytes(), edits));
        }
    }
}
