//! Extraction over a generated 100 KB reply with reasoning, prose full of brackets, and
//! several calls in several formats: whole text, and streamed in 64-byte chunks.

use divan::Bencher;
use divan::counter::BytesCount;
use std::fmt::Write as _;
use toolfix::extract::stream::StreamExtractor;
use toolfix::extract::{Message, Options, extract};

fn main() {
    divan::main();
}

fn reply(target: usize) -> String {
    let prose = "The quick brown fox [jumps] over {the} lazy dog; x < y > z, \"quoted\". ";
    let mut s = String::from("<think>Plan: look up the weather, then the time. ");
    s.push_str(&prose.repeat(60));
    s.push_str("</think>\n");
    let mut i = 0;
    while s.len() < target {
        s.push_str(&prose.repeat(120));
        match i % 4 {
            0 => {
                let _ = write!(
                    s,
                    "<tool_call>\n{{\"name\": \"get_weather\", \"arguments\": {{\"city\": \"Paris {i}\"}}}}\n</tool_call>\n"
                );
            }
            1 => {
                let _ = writeln!(s, "[TOOL_CALLS][{{\"name\": \"get_time\", \"arguments\": {{\"tz\": \"UTC+{i}\"}}}}]");
            }
            2 => {
                let _ = write!(
                    s,
                    "<tool_call>\n<function=search>\n<parameter=q>\nweather {i}\n</parameter>\n</function>\n</tool_call>\n"
                );
            }
            _ => {
                let _ =
                    writeln!(s, "```json\n{{\"name\": \"search\", \"arguments\": {{\"q\": \"ünïcødé {i}\"}}}}\n```");
            }
        }
        i += 1;
    }
    s
}

#[divan::bench]
fn whole_100kb(bencher: Bencher) {
    let text = reply(100 * 1024);
    bencher
        .counter(BytesCount::of_str(&text))
        .bench(|| extract(&Message::new(divan::black_box(&text)), None).calls.len());
}

#[divan::bench]
fn stream_100kb_chunks_of_64(bencher: Bencher) {
    let text = reply(100 * 1024);
    bencher.counter(BytesCount::of_str(&text)).bench(|| {
        let mut s = StreamExtractor::new(None, Options::default());
        let mut n = 0;
        for chunk in divan::black_box(text.as_bytes()).chunks(64) {
            n += s.push(chunk).len();
        }
        n + s.finish().len()
    });
}
