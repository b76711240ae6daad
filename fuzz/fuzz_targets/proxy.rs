//! Fuzz the proxy's reading of upstream answers and client requests
//! (`toolfix_proxy::fuzzing`, which says what each run checks): the first byte picks what is
//! read (an answer, a stream, a request) and the API, the second the size of the pieces a
//! stream arrives in; the rest is the bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use toolfix_proxy::fuzzing;

fuzz_target!(|data: &[u8]| {
    let [mode, chunk, rest @ ..] = data else { return };
    let api = mode % 3;
    match (mode / 3) % 3 {
        0 => fuzzing::answer(api, rest),
        1 => fuzzing::stream(api, usize::from(*chunk) + 1, rest),
        _ => fuzzing::request(api, rest),
    }
});
