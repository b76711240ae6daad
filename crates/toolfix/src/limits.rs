//! Size and depth caps, in one place.

/// Caps that keep every stage bounded on hostile input.
///
/// ```
/// use toolfix::Limits;
/// let limits = Limits::default().with_max_input_bytes(1 << 20).with_max_depth(64);
/// assert_eq!(limits.max_input_bytes, 1 << 20);
/// let limits = limits.with_max_text_bytes(1 << 16).with_max_calls(8).with_max_held_bytes(4096);
/// assert_eq!((limits.max_text_bytes, limits.max_calls, limits.max_held_bytes), (1 << 16, 8, 4096));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// Longest input accepted, in bytes (default 256 KiB). Longer input is an error,
    /// raised before any parsing.
    pub max_input_bytes: usize,
    /// Deepest nesting of arrays and objects accepted (default 128): the one depth cap of
    /// every stage (salvage, the extractors' literal readers, canonical keys).
    pub max_depth: usize,
    /// Extraction: how much of one channel's text (`content`, `reasoning_content`) is
    /// read for calls (default 1 MiB). Text past it stays prose, and a note says so.
    pub max_text_bytes: usize,
    /// Extraction: most calls taken from one reply, every channel together (default 128).
    /// Later calls are dropped, and a note says so.
    pub max_calls: usize,
    /// Extraction: longest stretch of text read as one call's markup (default 256 KiB).
    /// The streaming assembler holds back at most this much (plus a marker) while it
    /// cannot yet tell prose from a call; markup that does not end within it is left as
    /// prose, and a note says so.
    pub max_held_bytes: usize,
}

impl Limits {
    /// Default input cap: 256 KiB.
    pub const DEFAULT_MAX_INPUT_BYTES: usize = 256 * 1024;
    /// Default nesting cap.
    pub const DEFAULT_MAX_DEPTH: usize = 128;
    /// Default text read per channel for calls: 1 MiB.
    pub const DEFAULT_MAX_TEXT_BYTES: usize = 1024 * 1024;
    /// Default calls per reply.
    pub const DEFAULT_MAX_CALLS: usize = 128;
    /// Default longest call markup: 256 KiB.
    pub const DEFAULT_MAX_HELD_BYTES: usize = 256 * 1024;

    /// These limits with another input cap.
    #[must_use]
    pub const fn with_max_input_bytes(mut self, bytes: usize) -> Self {
        self.max_input_bytes = bytes;
        self
    }

    /// These limits with another nesting cap.
    #[must_use]
    pub const fn with_max_depth(mut self, depth: usize) -> Self {
        self.max_depth = depth;
        self
    }

    /// These limits with another cap on the text read per channel for calls.
    #[must_use]
    pub const fn with_max_text_bytes(mut self, bytes: usize) -> Self {
        self.max_text_bytes = bytes;
        self
    }

    /// These limits with another cap on calls per reply.
    #[must_use]
    pub const fn with_max_calls(mut self, calls: usize) -> Self {
        self.max_calls = calls;
        self
    }

    /// These limits with another cap on one call's markup (and on what a stream holds back).
    #[must_use]
    pub const fn with_max_held_bytes(mut self, bytes: usize) -> Self {
        self.max_held_bytes = bytes;
        self
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_input_bytes: Self::DEFAULT_MAX_INPUT_BYTES,
            max_depth: Self::DEFAULT_MAX_DEPTH,
            max_text_bytes: Self::DEFAULT_MAX_TEXT_BYTES,
            max_calls: Self::DEFAULT_MAX_CALLS,
            max_held_bytes: Self::DEFAULT_MAX_HELD_BYTES,
        }
    }
}
