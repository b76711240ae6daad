//! Calls kept once: a call that repeats one already taken (same name, same canonical
//! arguments, see `crate::canonical`) is dropped with a note; calls get ids.

use std::collections::HashSet;

/// The keys of the calls taken so far.
#[derive(Clone, Debug, Default)]
pub(crate) struct Seen {
    keys: HashSet<String>,
}

impl Seen {
    /// Takes the call's key; false when it was taken before (the call is a repeat).
    pub(crate) fn take(&mut self, name: &str, arguments: &str) -> bool {
        self.keys.insert(crate::canonical::call_key(name, arguments))
    }

    /// True when the call's key was taken before.
    pub(crate) fn contains(&self, name: &str, arguments: &str) -> bool {
        self.keys.contains(&crate::canonical::call_key(name, arguments))
    }
}

/// A deterministic call id from the call and its place in the list.
pub(crate) fn fresh_id(name: &str, arguments: &str, ordinal: usize) -> String {
    // FNV-1a, 64 bits.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes().chain([0]).chain(arguments.bytes()).chain(ordinal.to_le_bytes()) {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("call_{h:016x}")
}
