//! The salvage parser on inputs generated in `benches/inputs` (no external data):
//!
//! - `valid_1mb`: a ~1 MB valid document, against `serde_json_ignored_any_copy` (serde_json
//!   validating the text and copying it) — target: within 1.3×;
//! - `damaged_1mb`: the same value with ~1% of its tokens damaged and its closers cut off —
//!   target: above 200 MB/s;
//! - `small_calls`: 10,000 damaged tool-call arguments of ~200 bytes — target: under 1 µs
//!   per call, with at least 99.5% salvaged to exactly the intended value (printed before
//!   the timings; `tests/bench_inputs.rs` asserts it).
//!
//! Run with `cargo bench -p toolfix --bench salvage`. Wall-clock figures swing on a shared
//! machine: `scripts/instructions.sh` counts instructions instead.
#![expect(clippy::unwrap_used, reason = "bench setup")]

mod inputs;

use divan::counter::{BytesCount, ItemsCount};
use divan::{Bencher, black_box};
use std::sync::LazyLock;
use toolfix::Limits;

const DOCUMENT_BYTES: usize = 1 << 20;
const CALLS: usize = 10_000;

static VALID: LazyLock<String> = LazyLock::new(|| inputs::valid_document(DOCUMENT_BYTES).0);
static DAMAGED: LazyLock<String> = LazyLock::new(|| inputs::damaged_document(DOCUMENT_BYTES).0);
static SMALL: LazyLock<Vec<inputs::Call>> = LazyLock::new(|| inputs::small_calls(CALLS));

fn limits() -> Limits {
    Limits::default().with_max_input_bytes(4 * DOCUMENT_BYTES)
}

fn main() {
    let (ok, failures) = inputs::score(&SMALL);
    let (_, _, sites) = inputs::damaged_document(DOCUMENT_BYTES);
    println!(
        "valid document {} bytes; damaged document {} bytes with {sites} damage sites",
        VALID.len(),
        DAMAGED.len()
    );
    let bytes: usize = SMALL.iter().map(|c| c.text.len()).sum();
    println!(
        "small calls: {ok} of {} ({:.2}%) salvaged to the intended value; mean {} bytes; failures per damage kind: {failures:?}",
        SMALL.len(),
        100.0 * ok as f64 / SMALL.len() as f64,
        bytes / SMALL.len(),
    );
    divan::main();
}

#[divan::bench]
fn serde_json_ignored_any_copy(bencher: Bencher) {
    let text = VALID.as_str();
    bencher.counter(BytesCount::of_str(text)).bench(|| {
        serde_json::from_str::<serde::de::IgnoredAny>(black_box(text)).unwrap();
        black_box(text).to_owned()
    });
}

#[divan::bench]
fn valid_1mb(bencher: Bencher) {
    let text = VALID.as_str();
    let limits = limits();
    bencher
        .counter(BytesCount::of_str(text))
        .bench(|| toolfix::salvage::salvage_with(black_box(text), &limits).unwrap());
}

#[divan::bench]
fn valid_1mb_into_owned(bencher: Bencher) {
    let text = VALID.as_str();
    let limits = limits();
    bencher
        .counter(BytesCount::of_str(text))
        .bench(|| toolfix::salvage::salvage_with(black_box(text), &limits).unwrap().into_text().into_owned());
}

#[divan::bench]
fn damaged_1mb(bencher: Bencher) {
    let text = DAMAGED.as_str();
    let limits = limits();
    bencher
        .counter(BytesCount::of_str(text))
        .bench(|| toolfix::salvage::salvage_with(black_box(text), &limits).unwrap());
}

/// All 10,000 calls per iteration; divan's item counter gives the time per call.
#[divan::bench(sample_count = 20)]
fn small_calls(bencher: Bencher) {
    let calls = &*SMALL;
    bencher.counter(ItemsCount::new(calls.len())).bench(|| {
        for call in calls {
            black_box(toolfix::salvage::salvage(black_box(&call.text)).ok());
        }
    });
}

/// The same calls' intended values as strict JSON text, through salvage's fast path.
#[divan::bench(sample_count = 20)]
fn small_calls_valid(bencher: Bencher) {
    let texts: Vec<String> = SMALL.iter().map(|c| c.intended.to_string()).collect();
    bencher.counter(ItemsCount::new(texts.len())).bench(|| {
        for text in &texts {
            black_box(toolfix::salvage::salvage(black_box(text)).ok());
        }
    });
}
