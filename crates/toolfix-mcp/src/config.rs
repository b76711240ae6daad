//! Settings of the wrapper, from flags and an optional TOML file.

use crate::Error;
use serde::Deserialize;
use std::time::Duration;

/// Wrapper settings.
///
/// ```
/// use toolfix_mcp::Config;
///
/// let config = Config::from_toml(r#"
/// max_message_bytes = 1048576
/// [guard]
/// threshold = 4
/// exempt = ["wait_for_job"]
/// "#).unwrap();
/// assert_eq!(config.max_message_bytes, 1 << 20);
/// assert_eq!(config.guard.threshold, 4);
/// assert!(config.guard.exempt.contains(&"wait_for_job".to_owned()));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Config {
    /// Largest message (one line, in bytes) the wrapper parses; longer ones are passed
    /// through unrepaired, streamed, never buffered whole (default 16 MiB).
    pub max_message_bytes: usize,
    /// How long the server gets to exit after its stdin is closed before it is killed
    /// (default 2 s).
    pub shutdown_grace: Duration,
    /// The storm guard.
    pub guard: GuardSettings,
}

/// Storm guard settings: repeated identical calls to a tool that may have side effects
/// are answered with a reflection message instead of being run again.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct GuardSettings {
    /// Whether the guard runs (default true).
    pub enabled: bool,
    /// How many recent calls are looked at (default 6).
    pub window: usize,
    /// How many identical calls in the window make a storm (default 3).
    pub threshold: usize,
    /// Tools the guard never stops (`sleep`, `wait_for_job`, ...).
    pub exempt: Vec<String>,
}

impl Default for GuardSettings {
    fn default() -> Self {
        GuardSettings { enabled: true, window: 6, threshold: 3, exempt: Vec::new() }
    }
}

impl Default for Config {
    fn default() -> Self {
        Config {
            max_message_bytes: Config::DEFAULT_MAX_MESSAGE_BYTES,
            shutdown_grace: Duration::from_secs(2),
            guard: GuardSettings::default(),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    max_message_bytes: Option<usize>,
    shutdown_grace_ms: Option<u64>,
    guard: Option<GuardFile>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GuardFile {
    enabled: Option<bool>,
    window: Option<usize>,
    threshold: Option<usize>,
    exempt: Option<Vec<String>>,
}

impl Config {
    /// The default `max_message_bytes`: 16 MiB.
    pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 16 << 20;

    /// Settings from a TOML file's text; keys left out keep their defaults.
    ///
    /// Keys: `max_message_bytes`, `shutdown_grace_ms`, and a `[guard]` table with
    /// `enabled`, `window`, `threshold`, `exempt` (tool names).
    ///
    /// # Errors
    ///
    /// [`Error::Config`] on malformed TOML or an unknown key.
    pub fn from_toml(text: &str) -> Result<Config, Error> {
        let file: File = toml::from_str(text).map_err(|e| Error::Config(e.message().to_owned()))?;
        let mut config = Config::default();
        if let Some(n) = file.max_message_bytes {
            config.max_message_bytes = n;
        }
        if let Some(ms) = file.shutdown_grace_ms {
            config.shutdown_grace = Duration::from_millis(ms);
        }
        if let Some(g) = file.guard {
            let d = &mut config.guard;
            d.enabled = g.enabled.unwrap_or(d.enabled);
            d.window = g.window.unwrap_or(d.window);
            d.threshold = g.threshold.unwrap_or(d.threshold);
            d.exempt = g.exempt.unwrap_or_default();
        }
        Ok(config)
    }

    /// These settings with another message limit.
    #[must_use]
    pub fn with_max_message_bytes(mut self, bytes: usize) -> Self {
        self.max_message_bytes = bytes;
        self
    }

    /// These settings with another shutdown grace period.
    #[must_use]
    pub fn with_shutdown_grace(mut self, grace: Duration) -> Self {
        self.shutdown_grace = grace;
        self
    }

    /// These settings with the storm guard on or off.
    #[must_use]
    pub fn with_guard_enabled(mut self, enabled: bool) -> Self {
        self.guard.enabled = enabled;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_keys_are_errors() {
        assert!(Config::from_toml("max_mesage_bytes = 3").is_err());
        assert!(Config::from_toml("[guard]\nthreshhold = 3").is_err());
        assert_eq!(Config::from_toml("").unwrap(), Config::default());
        let c = Config::from_toml("shutdown_grace_ms = 50\n[guard]\nenabled = false").unwrap();
        assert_eq!(c.shutdown_grace, Duration::from_millis(50));
        assert!(!c.guard.enabled);
    }
}
