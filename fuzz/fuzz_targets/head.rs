//! Fuzz the proxy's reader of HTTP/1.1 heads of the common shape (`toolfix_proxy::head`)
//! against `httparse`: wherever it decides a head (as a request or as an answer), httparse
//! must read the same one. The first byte picks how many header lines there is room for;
//! the rest is the bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let [room, rest @ ..] = data else { return };
    let room = [0, 1, 2, 3, 4, 8, 32, 100][usize::from(*room % 8)];
    toolfix_proxy::head::compare(rest, room);
});
