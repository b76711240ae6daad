//! The proxy's settings: built in code, read from a TOML file, or both (flags override the
//! file in `toolfix serve`).

use crate::Error;
use serde::Deserialize;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::time::Duration;
use toolfix::Policy;
use toolfix::schema::LeakedCalls;

/// The most corrective re-prompts one request may cost.
pub const MAX_REPROMPTS: u8 = 5;

/// How a call cut off by the token limit (`finish_reason: "length"`) is recovered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum LengthRecovery {
    /// Not at all: the cut call is refused (and may be re-prompted like any refusal).
    Off,
    /// The same request again, once, with a raised `max_tokens` (capped).
    #[default]
    Retry,
    /// The upstream continues the partial assistant message (vLLM's
    /// `continue_final_message` with `add_generation_prompt: false`); a call cut off in
    /// `tool_calls` (no raw text to continue from) is retried instead.
    Continue,
}

impl LengthRecovery {
    /// Parse `off`, `retry` or `continue`.
    #[must_use]
    pub fn from_name(name: &str) -> Option<LengthRecovery> {
        match name {
            "off" => Some(LengthRecovery::Off),
            "retry" => Some(LengthRecovery::Retry),
            "continue" => Some(LengthRecovery::Continue),
            _ => None,
        }
    }
}

/// What the client gets for a call that still cannot be used when the attempts ran out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum GiveUp {
    /// The call is left out and the reply's text says why (the refusal), so the turn
    /// is never empty. Fail closed: nothing unusable is passed on.
    #[default]
    Explain,
    /// The call is passed on as the model sent it, unrepaired (for clients that run
    /// their own validation): a server call as it came, a call found in the text left in
    /// the text (a streamed one cannot be: its text was cut as it went out).
    AsSent,
}

impl GiveUp {
    /// Parse `explain` or `as_sent`.
    #[must_use]
    pub fn from_name(name: &str) -> Option<GiveUp> {
        match name {
            "explain" => Some(GiveUp::Explain),
            "as_sent" => Some(GiveUp::AsSent),
            _ => None,
        }
    }
}

/// Per-tool settings, by tool name.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ToolConfig {
    /// Declare the tool read-only (or not), overriding its definition: read-only tools keep
    /// the complete values of a cut-off call.
    pub read_only: Option<bool>,
    /// How much repair the tool accepts (`strict`, `default`, `lenient`).
    pub policy: Option<Policy>,
    /// Never stopped by the storm guard (`sleep`, `wait_for_job`, polling tools).
    pub storm_exempt: bool,
    /// How calls to this tool written in a reply's text are taken (`infer`, `trust`,
    /// `never`), over the global setting.
    pub leaked_calls: Option<LeakedCalls>,
}

/// Storm-guard settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct StormConfig {
    /// Whether repeated calls are stopped at all.
    pub enabled: bool,
    /// How many recent calls are looked at.
    pub window: usize,
    /// How many identical calls in the window make a storm.
    pub threshold: usize,
}

impl Default for StormConfig {
    fn default() -> Self {
        StormConfig { enabled: true, window: 6, threshold: 3 }
    }
}

/// Timeouts on the way to the upstream, and for a client's request head.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Timeouts {
    /// To open a connection.
    pub connect: Duration,
    /// For a whole non-streaming response; for a stream, until its first event.
    pub request: Duration,
    /// The longest silence between two pieces of a streamed body.
    pub stream_idle: Duration,
    /// For the rest of a request head once its first byte has arrived (a client that
    /// trickles a head is cut off).
    pub client_head: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            connect: Duration::from_secs(10),
            request: Duration::from_secs(600),
            stream_idle: Duration::from_secs(300),
            client_head: Duration::from_secs(30),
        }
    }
}

/// Everything the proxy needs to run.
///
/// ```
/// use toolfix_proxy::Config;
///
/// let config = Config::new("http://127.0.0.1:8000/v1").unwrap().with_max_reprompts(2).unwrap();
/// assert_eq!(config.listen.to_string(), "127.0.0.1:8787");
/// assert_eq!(config.max_reprompts, 2);
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Config {
    /// The upstream's base URL, the one that stands for the proxy's `/v1`
    /// (`http://127.0.0.1:8000/v1`): `/v1/chat/completions` goes to
    /// `{upstream}/chat/completions`; a path outside `/v1` goes to the upstream's origin.
    pub upstream: reqwest::Url,
    /// Where to listen (default `127.0.0.1:8787`).
    pub listen: SocketAddr,
    /// The key clients must send as `Authorization: Bearer KEY`; required to listen on a
    /// non-loopback address unless `allow_remote`.
    pub api_key: Option<String>,
    /// The key sent to the upstream as `Authorization: Bearer KEY`. Without it the
    /// client's `Authorization` is passed through (unless `api_key` is set: that header
    /// is the proxy's key and stays here).
    pub upstream_api_key: Option<String>,
    /// Listen on a non-loopback address without `api_key`.
    pub allow_remote: bool,
    /// Corrective re-prompts per request (0–5, default 1).
    pub max_reprompts: u8,
    /// What the client gets for a call that cannot be used when the attempts ran out.
    pub on_give_up: GiveUp,
    /// How calls written in a reply's text are taken: `infer` (from the reply's
    /// structure: a call the model only shows is not run), `trust` or `never`.
    pub leaked_calls: LeakedCalls,
    /// Repair the request's history (malformed arguments, orphan results) before
    /// forwarding (default on).
    pub repair_history: bool,
    /// How a call cut off by the token limit is recovered.
    pub length_recovery: LengthRecovery,
    /// The highest `max_tokens` a length retry asks for.
    pub max_tokens_cap: u64,
    /// Storm-guard settings.
    pub storm: StormConfig,
    /// Per-tool settings.
    pub tools: HashMap<String, ToolConfig>,
    /// Timeouts.
    pub timeouts: Timeouts,
    /// The largest request body accepted, in bytes (default 16 MiB).
    pub body_limit: usize,
    /// The largest non-streaming upstream response read, in bytes (default 64 MiB).
    pub response_limit: usize,
    /// Size and depth caps for the repair library (a reply over its input cap is passed
    /// through unfixed, and reported).
    pub limits: toolfix::Limits,
    /// Put the upstream's original messages into each response's `x_toolfix` object.
    pub detail: bool,
}

impl Config {
    /// The default settings for this upstream.
    ///
    /// # Errors
    ///
    /// When `upstream` is not an `http` or `https` URL.
    pub fn new(upstream: &str) -> Result<Config, Error> {
        let url = reqwest::Url::parse(upstream)
            .map_err(|e| Error::Config(format!("the upstream URL `{upstream}` is not valid: {e}")))?;
        if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
            return Err(Error::Config(format!(
                "the upstream URL `{upstream}` must be http:// or https:// with a host"
            )));
        }
        Ok(Config {
            upstream: url,
            listen: SocketAddr::from(([127, 0, 0, 1], 8787)),
            api_key: None,
            upstream_api_key: None,
            allow_remote: false,
            max_reprompts: 1,
            on_give_up: GiveUp::default(),
            leaked_calls: LeakedCalls::default(),
            repair_history: true,
            length_recovery: LengthRecovery::default(),
            max_tokens_cap: 16_384,
            storm: StormConfig::default(),
            tools: HashMap::new(),
            timeouts: Timeouts::default(),
            body_limit: 16 << 20,
            response_limit: 64 << 20,
            limits: toolfix::Limits::default(),
            detail: false,
        })
    }

    /// These settings with another re-prompt budget.
    ///
    /// # Errors
    ///
    /// When `n` is over [`MAX_REPROMPTS`].
    pub fn with_max_reprompts(mut self, n: u8) -> Result<Config, Error> {
        self.max_reprompts = check_reprompts(n)?;
        Ok(self)
    }

    /// Read settings from TOML text (see `docs/proxy.md` for every key). `upstream` is
    /// required.
    ///
    /// ```
    /// use toolfix_proxy::Config;
    ///
    /// let config = Config::from_toml(r#"
    ///     upstream = "http://127.0.0.1:8000/v1"
    ///     max_reprompts = 2
    ///     [tools.send_money]
    ///     policy = "strict"
    /// "#).unwrap();
    /// assert_eq!(config.max_reprompts, 2);
    /// assert!(config.tools.contains_key("send_money"));
    /// ```
    ///
    /// # Errors
    ///
    /// When the text is not TOML, holds an unknown key, or a value out of range.
    pub fn from_toml(text: &str) -> Result<Config, Error> {
        let file: File = toml::from_str(text).map_err(|e| Error::Config(format!("configuration file: {e}")))?;
        let upstream = file
            .upstream
            .as_deref()
            .ok_or_else(|| Error::Config("configuration file: `upstream` is missing".into()))?;
        let mut config = Config::new(upstream)?;
        config.apply(file)?;
        Ok(config)
    }

    /// Overlay settings from TOML text onto these (the file's `upstream`, when given,
    /// replaces this one).
    ///
    /// # Errors
    ///
    /// As [`Config::from_toml`].
    pub fn merge_toml(mut self, text: &str) -> Result<Config, Error> {
        let file: File = toml::from_str(text).map_err(|e| Error::Config(format!("configuration file: {e}")))?;
        if let Some(u) = &file.upstream {
            self.upstream = Config::new(u)?.upstream;
        }
        self.apply(file)?;
        Ok(self)
    }

    fn apply(&mut self, file: File) -> Result<(), Error> {
        if let Some(l) = file.listen {
            self.listen = l.parse().map_err(|_| Error::Config(format!("listen address `{l}` is not HOST:PORT")))?;
        }
        set(&mut self.api_key, file.api_key.map(Some));
        set(&mut self.upstream_api_key, file.upstream_api_key.map(Some));
        set(&mut self.allow_remote, file.allow_remote);
        if let Some(n) = file.max_reprompts {
            self.max_reprompts = check_reprompts(u8::try_from(n).unwrap_or(u8::MAX))?;
        }
        set(&mut self.on_give_up, file.on_give_up);
        if let Some(p) = file.leaked_calls.as_deref() {
            self.leaked_calls = leaked_calls(p, "leaked_calls")?;
        }
        set(&mut self.repair_history, file.repair_history);
        set(&mut self.detail, file.detail);
        set(&mut self.body_limit, file.body_limit);
        set(&mut self.response_limit, file.response_limit);
        if let Some(b) = file.max_reply_bytes {
            self.limits = self.limits.with_max_input_bytes(b);
        }
        if let Some(length) = file.length {
            set(&mut self.length_recovery, length.mode);
            set(&mut self.max_tokens_cap, length.max_tokens_cap);
        }
        if let Some(storm) = file.storm {
            set(&mut self.storm.enabled, storm.enabled);
            set(&mut self.storm.window, storm.window);
            set(&mut self.storm.threshold, storm.threshold);
        }
        if let Some(t) = file.timeouts {
            set(&mut self.timeouts.connect, t.connect_secs.map(secs).transpose()?);
            set(&mut self.timeouts.request, t.request_secs.map(secs).transpose()?);
            set(&mut self.timeouts.stream_idle, t.stream_idle_secs.map(secs).transpose()?);
            set(&mut self.timeouts.client_head, t.client_head_secs.map(secs).transpose()?);
        }
        for (name, t) in file.tools {
            let policy = match t.policy.as_deref() {
                Some(p) => Some(Policy::from_name(p).ok_or_else(|| {
                    Error::Config(format!("tool `{name}`: policy `{p}` is not strict, default or lenient"))
                })?),
                None => None,
            };
            let leaked = match t.leaked_calls.as_deref() {
                Some(p) => Some(leaked_calls(p, &format!("tool `{name}`: leaked_calls"))?),
                None => None,
            };
            let entry = self.tools.entry(name).or_default();
            entry.leaked_calls = leaked.or(entry.leaked_calls);
            entry.read_only = t.read_only.or(entry.read_only);
            entry.policy = policy.or(entry.policy);
            entry.storm_exempt = t.storm_exempt.unwrap_or(entry.storm_exempt);
        }
        Ok(())
    }

    /// Check the settings as a whole: a non-loopback listen address needs `api_key` or
    /// `allow_remote`.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] naming what to change.
    pub fn validate(&self) -> Result<(), Error> {
        if !self.listen.ip().is_loopback() && self.api_key.is_none() && !self.allow_remote {
            return Err(Error::Config(format!(
                "listening on {} (not loopback) needs --api-key KEY, or --allow-remote to run without one",
                self.listen
            )));
        }
        if self.storm.window == 0 || self.storm.threshold == 0 {
            return Err(Error::Config("storm window and threshold must be at least 1".into()));
        }
        Ok(())
    }
}

fn check_reprompts(n: u8) -> Result<u8, Error> {
    if n > MAX_REPROMPTS {
        return Err(Error::Config(format!("max_reprompts is {n}; it must be 0 to {MAX_REPROMPTS}")));
    }
    Ok(n)
}

fn set<T>(slot: &mut T, value: Option<T>) {
    if let Some(v) = value {
        *slot = v;
    }
}

fn secs(s: f64) -> Result<Duration, Error> {
    Duration::try_from_secs_f64(s).map_err(|_| Error::Config(format!("`{s}` is not a number of seconds")))
}

/// The TOML file, every key optional.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    upstream: Option<String>,
    listen: Option<String>,
    api_key: Option<String>,
    upstream_api_key: Option<String>,
    allow_remote: Option<bool>,
    max_reprompts: Option<u64>,
    on_give_up: Option<GiveUp>,
    leaked_calls: Option<String>,
    repair_history: Option<bool>,
    detail: Option<bool>,
    body_limit: Option<usize>,
    response_limit: Option<usize>,
    max_reply_bytes: Option<usize>,
    length: Option<LengthFile>,
    storm: Option<StormFile>,
    timeouts: Option<TimeoutsFile>,
    #[serde(default)]
    tools: HashMap<String, ToolFile>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct LengthFile {
    mode: Option<LengthRecovery>,
    max_tokens_cap: Option<u64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct StormFile {
    enabled: Option<bool>,
    window: Option<usize>,
    threshold: Option<usize>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[expect(clippy::struct_field_names, reason = "the TOML keys say their unit")]
struct TimeoutsFile {
    connect_secs: Option<f64>,
    request_secs: Option<f64>,
    stream_idle_secs: Option<f64>,
    client_head_secs: Option<f64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ToolFile {
    read_only: Option<bool>,
    policy: Option<String>,
    storm_exempt: Option<bool>,
    leaked_calls: Option<String>,
}

/// A `leaked_calls` value, or an error naming `what`.
fn leaked_calls(value: &str, what: &str) -> Result<LeakedCalls, Error> {
    LeakedCalls::from_name(value)
        .ok_or_else(|| Error::Config(format!("{what} = `{value}`: expected infer, trust or never")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toml_sets_every_section_and_rejects_unknown_keys() {
        let c = Config::from_toml(
            r#"
            upstream = "http://127.0.0.1:8000/v1"
            listen = "127.0.0.1:9000"
            max_reprompts = 3
            detail = true
            leaked_calls = "trust"
            [length]
            mode = "continue"
            max_tokens_cap = 4096
            [storm]
            threshold = 4
            [timeouts]
            request_secs = 1.5
            [tools.sleep]
            storm_exempt = true
            leaked_calls = "never"
            [tools.pay]
            policy = "strict"
            read_only = false
        "#,
        )
        .unwrap();
        assert_eq!(c.listen.port(), 9000);
        assert_eq!(c.max_reprompts, 3);
        assert_eq!(c.length_recovery, LengthRecovery::Continue);
        assert_eq!(c.max_tokens_cap, 4096);
        assert_eq!(c.storm.threshold, 4);
        assert_eq!(c.timeouts.request, Duration::from_millis(1500));
        assert!(c.tools["sleep"].storm_exempt);
        assert_eq!(c.leaked_calls, LeakedCalls::Trust);
        assert_eq!(c.tools["sleep"].leaked_calls, Some(LeakedCalls::Never));
        assert_eq!(c.tools["pay"].policy, Some(Policy::Strict));
        let err = Config::from_toml("upstream = \"http://x/v1\"\nmax_repromts = 1").unwrap_err();
        assert!(err.to_string().contains("max_repromts"), "{err}");
        let err = Config::from_toml("upstream = \"http://x/v1\"\nmax_reprompts = 9").unwrap_err();
        assert!(err.to_string().contains("0 to 5"), "{err}");
    }

    #[test]
    fn remote_listening_needs_a_key_or_an_explicit_yes() {
        let mut c = Config::new("http://127.0.0.1:8000/v1").unwrap();
        c.listen = "0.0.0.0:8787".parse().unwrap();
        assert!(c.validate().unwrap_err().to_string().contains("--api-key"));
        c.api_key = Some("k".into());
        assert!(c.validate().is_ok());
        c.api_key = None;
        c.allow_remote = true;
        assert!(c.validate().is_ok());
    }

    #[test]
    fn upstream_must_be_http() {
        assert!(Config::new("ftp://x/v1").is_err());
        assert!(Config::new("not a url").is_err());
    }
}
