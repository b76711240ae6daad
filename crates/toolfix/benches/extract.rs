//! Extraction over a generated 100 KB reply with reasoning, prose full of brackets, and
//! several calls in several formats: whole text, and streamed in 64-byte chunks.

use divan::Bencher;
use divan::counter::BytesCount;
use toolfix::extract::stream::StreamExtractor;
use toolfix::extract::{Message, Options, extract};

#[path = "inputs/extract.rs"]
mod extract_inputs;

use extract_inputs::reply;

fn main() {
    divan::main();
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
