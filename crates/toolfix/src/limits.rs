//! Size and depth caps, in one place.

/// Caps that keep every stage bounded on hostile input.
///
/// ```
/// use toolfix::Limits;
/// let limits = Limits::default().with_max_input_bytes(1 << 20).with_max_depth(64);
/// assert_eq!(limits.max_input_bytes, 1 << 20);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// Longest input accepted, in bytes (default 256 KiB). Longer input is an error,
    /// raised before any parsing.
    pub max_input_bytes: usize,
    /// Deepest nesting of arrays and objects accepted (default 128).
    pub max_depth: usize,
}

impl Limits {
    /// Default input cap: 256 KiB.
    pub const DEFAULT_MAX_INPUT_BYTES: usize = 256 * 1024;
    /// Default nesting cap.
    pub const DEFAULT_MAX_DEPTH: usize = 128;

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
}

impl Default for Limits {
    fn default() -> Self {
        Limits { max_input_bytes: Self::DEFAULT_MAX_INPUT_BYTES, max_depth: Self::DEFAULT_MAX_DEPTH }
    }
}
