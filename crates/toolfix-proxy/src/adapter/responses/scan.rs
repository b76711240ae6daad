//! A hand-written read of a Responses body into the view `fix_body` reads with serde_json
//! (`super::ResponseView`), in one pass over the bytes with the chat reader
//! (`chat::scan::Reader`). Whenever it cannot decide exactly as that read would (a member
//! that repeats, a key with escapes, an `output`, `content` or `summary` that is no list
//! of objects, deep nesting, bytes that are no UTF-8 ...) it gives up and the caller reads
//! the body with serde_json as before: its result is that read's either way.

use super::{Arguments, Details, ItemView, PartView, ResponseView};
use crate::adapter::chat::scan::{Reader, objects};
use crate::adapter::view::{Field, Present, Prose, Text};
use serde::de::IgnoredAny;

/// The view of `body` as `view::read` makes it; `None` when this reader cannot decide.
pub(super) fn read(body: &[u8]) -> Option<ResponseView<'_>> {
    let mut r = Reader::new(body)?;
    let mut view = ResponseView {
        dup: false,
        object: Text(None),
        output: Present(None),
        status: Text(None),
        incomplete_details: None,
        report: Present(None),
    };
    r.ws();
    r.members(["object", "output", "status", "incomplete_details", "x_toolfix"], 1, |r, slot| {
        match slot {
            0 => view.object = r.text()?,
            1 => view.output = Present(Some(objects(r, item)?)),
            2 => view.status = r.text()?,
            3 => {
                view.incomplete_details = if r.peek()? == b'n' {
                    r.word(b"null")?;
                    None
                } else {
                    let mut details = Details { reason: Text(None) };
                    let mut got = false;
                    r.object(|r, key| match key {
                        "reason" if !std::mem::replace(&mut got, true) => {
                            details.reason = r.text()?;
                            Some(())
                        }
                        "reason" => None,
                        _ => r.skip(3),
                    })?;
                    Some(details)
                };
            }
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

/// The bit of the `i`-th key of a tracked view.
const fn bit(i: u32) -> u64 {
    1 << i
}

/// An output item, as `ItemView` reads it.
fn item<'a>(r: &mut Reader<'a>) -> Option<ItemView<'a>> {
    let mut v = ItemView {
        dup: false,
        seen: 0,
        other: false,
        kind: Text(None),
        id: Text(None),
        call_id: Text(None),
        name: Text(None),
        arguments: Arguments::default(),
        status: Text(None),
        role: Text(None),
        content: Vec::new(),
        summary: Vec::new(),
    };
    r.object(|r, key| {
        let i = match key {
            "type" => 0,
            "id" => 1,
            "call_id" => 2,
            "name" => 3,
            "arguments" => 4,
            "status" => 5,
            "role" => 6,
            "content" => 7,
            "summary" => 8,
            _ => {
                v.other = true;
                return r.skip(3);
            }
        };
        if v.seen & bit(i) != 0 {
            return None;
        }
        v.seen |= bit(i);
        match i {
            0 => v.kind = r.text()?,
            1 => v.id = r.text()?,
            2 => v.call_id = r.text()?,
            3 => v.name = r.text()?,
            4 => {
                let from = r.at();
                // A string (as they come) is decoded here, once; another value skipped.
                let string = if r.peek()? == b'"' { r.text()?.0 } else { r.skip(3).map(|()| None)? };
                v.arguments = Arguments { raw: Field(Some(r.since(from)?)), string };
            }
            5 => v.status = r.text()?,
            6 => v.role = r.text()?,
            7 => v.content = objects(r, part)?,
            _ => v.summary = objects(r, part)?,
        }
        Some(())
    })?;
    Some(v)
}

/// A content or summary part, as `PartView` reads it.
fn part<'a>(r: &mut Reader<'a>) -> Option<PartView<'a>> {
    let mut v = PartView {
        dup: false,
        seen: 0,
        other: false,
        kind: Text(None),
        text: Prose(Text(None)),
        annotations: Field(None),
    };
    r.object(|r, key| {
        let i = match key {
            "type" => 0,
            "text" => 1,
            "annotations" => 2,
            _ => {
                v.other = true;
                return r.skip(4);
            }
        };
        if v.seen & bit(i) != 0 {
            return None;
        }
        v.seen |= bit(i);
        match i {
            0 => v.kind = r.text()?,
            // `Prose` reads what `Text` reads (the scan only reads it faster).
            1 => v.text = Prose(r.text()?),
            _ => {
                let from = r.at();
                r.skip(4)?;
                v.annotations = Field(Some(r.since(from)?));
            }
        }
        Some(())
    })?;
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::super::{ItemView, PartView, ResponseView};
    use crate::adapter::chat::scan::tests::{damaged, edits, field_json as field, text_json as text};
    use proptest::prelude::*;
    use serde_json::{Value, json};

    fn part(p: &PartView<'_>) -> Value {
        json!([p.dup, p.seen, p.other, text(&p.kind), p.text.as_str(), field(&p.annotations)])
    }

    fn item(i: &ItemView<'_>) -> Value {
        json!([
            i.dup,
            i.seen,
            i.other,
            text(&i.kind),
            text(&i.id),
            text(&i.call_id),
            text(&i.name),
            field(&i.arguments.raw),
            text(&i.status),
            text(&i.role),
            i.content.iter().map(part).collect::<Vec<_>>(),
            i.summary.iter().map(part).collect::<Vec<_>>()
        ])
    }

    /// Everything `fix_body` uses of a view, written out to compare two reads.
    fn describe(v: &ResponseView<'_>) -> Value {
        json!([
            v.dup,
            text(&v.object),
            v.output.0.as_ref().map(|o| o.iter().map(item).collect::<Vec<_>>()),
            text(&v.status),
            v.incomplete_details.as_ref().map(|d| text(&d.reason)),
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
            json!({"id": "resp_1", "object": "response", "created_at": 1, "status": "completed", "model": "m",
                "output": [
                    {"type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
                     "content": [{"type": "output_text", "text": prose, "annotations": []}]},
                    {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "get_weather",
                     "arguments": "{\"city\": \"Paris\", \"days\": 3}", "status": "completed"}],
                "usage": {"input_tokens": 10, "output_tokens": 20, "total_tokens": 30}}),
            json!({"object": "response", "status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"},
                "output": [{"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "s\u{e9}"}],
                            "content": [{"type": "reasoning_text", "text": "think \n \"q\""}]},
                           {"type": "message", "content": [{"type": "output_text", "text": "a", "logprobs": [1]},
                                                           {"type": "refusal", "refusal": "no"}, {"type": "output_text", "text": null}]}],
                "x_toolfix": {"summary": "x"}}),
            json!({"object": "response", "incomplete_details": null, "output": [], "status": 3, "extra": [1, {"a": [true, null, -1.5e3]}]}),
            json!({"object": "response", "output": [{"type": 1, "arguments": {"a": 1}, "content": [{"text": 5, "annotations": null}]}]}),
            json!({"object": "list", "data": []}),
        ];
        let mut out: Vec<String> =
            values.iter().flat_map(|v| [v.to_string(), serde_json::to_string_pretty(v).unwrap()]).collect();
        out.push("{\"object\": \"response\", \"output\": [ ] }  ".to_owned());
        out
    }

    #[test]
    fn the_hand_written_read_decides_the_common_bodies_as_serde_json_reads_them() {
        for body in fixtures() {
            assert!(agrees(body.as_bytes()), "not decided: {body}");
        }
        // What it leaves to serde_json: repeated members, keys with escapes, lists that
        // are not lists of objects, no object, bytes that are no UTF-8.
        for body in [
            &br#"{"object": "response", "object": "response"}"#[..],
            br#"{"output": [{"type": "message", "type": "reasoning"}]}"#,
            br#"{"output": [{"content": [{"text": "a", "text": "b"}]}]}"#,
            br#"{"obj\u0065ct": "response"}"#,
            br#"{"output": null}"#,
            br#"{"output": [1]}"#,
            br#"{"output": [{"content": null}]}"#,
            br#"{"output": [{"summary": [[]]}]}"#,
            br#"{"incomplete_details": "x"}"#,
            b"[]",
            b"{\"object\": \"r\xff\"}",
        ] {
            assert!(super::read(body).is_none(), "{}", String::from_utf8_lossy(body));
        }
        let deep = format!("{{\"object\": \"response\", \"x\": {}{}}}", "[".repeat(150), "]".repeat(150));
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
