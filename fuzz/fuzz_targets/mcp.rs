//! Fuzz the MCP wrapper's session (`toolfix_mcp::fuzzing`, which says what each run
//! checks): lines split at `\n`, each line's first byte saying whether the client (even)
//! or the server (odd) sent the rest.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| toolfix_mcp::fuzzing::lines(data));
