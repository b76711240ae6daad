//! Capped exponential backoff with jitter, and the [`Timer`] it sleeps on (runtime-agnostic;
//! [`TokioTimer`] with the `tokio` feature).

use std::fmt;
use std::future::Future;
use std::hash::{BuildHasher as _, Hasher as _};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// A boxed future, as the async handlers and fixers return.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Something that can wait: the dispatcher sleeps between retries through it.
pub trait Timer: Send + Sync {
    /// A future that completes after `duration`.
    fn sleep(&self, duration: Duration) -> BoxFuture<'static, ()>;
}

/// A [`Timer`] on tokio's clock (so `tokio::time::pause` controls it in tests).
#[cfg(feature = "tokio")]
#[derive(Clone, Copy, Debug, Default)]
pub struct TokioTimer;

#[cfg(feature = "tokio")]
impl Timer for TokioTimer {
    fn sleep(&self, duration: Duration) -> BoxFuture<'static, ()> {
        Box::pin(tokio::time::sleep(duration))
    }
}

/// Capped exponential backoff: retry `n` (from 0) waits `base · 2ⁿ`, with equal jitter by
/// default (a random point in its upper half), then capped at `cap`; so delays never
/// shrink from one retry to the next and never pass `cap`.
///
/// ```
/// use std::time::Duration;
/// use toolfix_agent::Backoff;
///
/// let b = Backoff::new(Duration::from_millis(100), Duration::from_secs(1)).without_jitter();
/// assert_eq!(b.ceiling(0), Duration::from_millis(100));
/// assert_eq!(b.ceiling(3), Duration::from_millis(800));
/// assert_eq!(b.ceiling(10), Duration::from_secs(1));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Backoff {
    base: Duration,
    cap: Duration,
    jitter: bool,
}

impl Default for Backoff {
    /// 200 ms doubling up to 5 s, with jitter.
    fn default() -> Backoff {
        Backoff::new(Duration::from_millis(200), Duration::from_secs(5))
    }
}

impl Backoff {
    /// Start at `base`, double per retry, never above `cap`; with jitter.
    #[must_use]
    pub fn new(base: Duration, cap: Duration) -> Backoff {
        Backoff { base, cap: cap.max(base), jitter: true }
    }

    /// The same backoff without jitter: retry `n` waits exactly [`Backoff::ceiling`].
    #[must_use]
    pub fn without_jitter(self) -> Backoff {
        Backoff { jitter: false, ..self }
    }

    /// The longest wait before retry `n`: `min(cap, base · 2ⁿ)`.
    #[must_use]
    pub fn ceiling(&self, retry: u32) -> Duration {
        self.exponential(retry).min(self.cap)
    }

    /// `base · 2ⁿ`, saturating.
    fn exponential(&self, retry: u32) -> Duration {
        let factor = 1u32.checked_shl(retry.min(31)).unwrap_or(u32::MAX);
        self.base.checked_mul(factor).unwrap_or(Duration::MAX)
    }

    /// The wait before retry `n`, drawing jitter from `rng`: within
    /// `[min(cap, base · 2ⁿ / 2), ceiling(n)]` with jitter, `ceiling(n)` without.
    #[must_use]
    pub fn delay(&self, retry: u32, rng: &Jitter) -> Duration {
        if !self.jitter {
            return self.ceiling(retry);
        }
        let full = self.exponential(retry).min(self.cap.saturating_mul(2));
        let half = full / 2;
        let spread = u64::try_from(full.saturating_sub(half).as_nanos()).unwrap_or(u64::MAX);
        (half + Duration::from_nanos(rng.next() % spread.saturating_add(1))).min(self.cap)
    }
}

/// The jitter source: splitmix64 over an atomic state, seeded at random or fixed for tests.
pub struct Jitter {
    state: AtomicU64,
}

impl fmt::Debug for Jitter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Jitter").finish_non_exhaustive()
    }
}

impl Default for Jitter {
    fn default() -> Jitter {
        Jitter::seeded(std::collections::hash_map::RandomState::new().build_hasher().finish())
    }
}

impl Jitter {
    /// A source with a fixed seed (reproducible delays).
    #[must_use]
    pub fn seeded(seed: u64) -> Jitter {
        Jitter { state: AtomicU64::new(seed) }
    }

    fn next(&self) -> u64 {
        let mut z = self.state.fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed).wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_grow_within_bounds_and_are_capped() {
        let b = Backoff::new(Duration::from_millis(10), Duration::from_millis(300));
        let rng = Jitter::seeded(7);
        let mut last = Duration::ZERO;
        for n in 0..40 {
            let d = b.delay(n, &rng);
            let floor = (Duration::from_millis(5).saturating_mul(1 << n.min(30))).min(Duration::from_millis(300));
            assert!(d >= floor && d <= b.ceiling(n), "retry {n}: {d:?}");
            assert!(d >= last, "retry {n}: {d:?} < {last:?}");
            assert!(d <= Duration::from_millis(300));
            last = d;
        }
        assert_eq!(b.ceiling(u32::MAX), Duration::from_millis(300));
    }

    #[test]
    fn huge_base_does_not_overflow() {
        let b = Backoff::new(Duration::MAX, Duration::MAX);
        assert_eq!(b.ceiling(5), Duration::MAX);
        let _ = b.delay(5, &Jitter::seeded(1));
    }
}
