//! The per-app rate limit of instance starts: a token bucket whose state is a row of
//! `ax_app_limit`, locked by the claim that takes tokens, so that every axd draws from one bucket.
//! Refills use the database clock; this module is the arithmetic.

use std::time::Duration;

use crate::model::{Ts, add};

/// A token bucket as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct Bucket {
    /// Tokens added per second.
    pub per_second: f64,
    /// Most tokens held.
    pub burst: u32,
    /// Tokens at `refilled_at`.
    pub tokens: f64,
    /// When `tokens` was computed.
    pub refilled_at: Ts,
}

impl Bucket {
    /// Adds the tokens earned since the last refill (never going back in time: axd processes
    /// estimate the database clock independently).
    pub fn refill(&mut self, now: Ts) {
        if now <= self.refilled_at {
            return;
        }
        let secs = (now - self.refilled_at).as_seconds_f64();
        self.tokens = (self.tokens + secs * self.per_second).min(f64::from(self.burst));
        self.refilled_at = now;
    }

    /// Whole tokens available.
    pub fn available(&self) -> u32 {
        // Tokens lie in 0..=burst, so the cast cannot overflow.
        self.tokens.max(0.0).floor() as u32
    }

    /// Takes `n` tokens (at most those available).
    pub fn take(&mut self, n: u32) {
        self.tokens = (self.tokens - f64::from(n.min(self.available()))).max(0.0);
    }

    /// When the next whole token is there (now if one is).
    pub fn next_token_at(&self) -> Ts {
        if self.tokens >= 1.0 {
            return self.refilled_at;
        }
        let secs = (1.0 - self.tokens.max(0.0)) / self.per_second;
        add(self.refilled_at, Duration::from_secs_f64(secs.min(1e9)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(ms: i64) -> Ts {
        chrono::DateTime::from_timestamp_millis(1_800_000_000_000 + ms).expect("valid")
    }

    #[test]
    fn tokens_refill_at_the_rate_up_to_the_burst() {
        let mut b = Bucket { per_second: 10.0, burst: 5, tokens: 5.0, refilled_at: t(0) };
        b.take(5);
        assert_eq!(b.available(), 0);
        assert_eq!(b.next_token_at(), t(100));
        b.refill(t(250));
        assert_eq!(b.available(), 2, "2.5 tokens after 250 ms");
        b.take(10);
        assert_eq!(b.available(), 0, "only what is there is taken");
        assert!((b.tokens - 0.5).abs() < 1e-9);
        assert_eq!(b.next_token_at(), t(300));
        b.refill(t(10_000));
        assert_eq!(b.available(), 5, "capped at the burst");
        b.refill(t(5_000));
        assert_eq!(b.refilled_at, t(10_000), "a lagging clock does not move it back");
    }

    #[test]
    fn over_a_long_run_starts_never_exceed_rate_times_time_plus_burst() {
        let mut b = Bucket { per_second: 3.0, burst: 2, tokens: 2.0, refilled_at: t(0) };
        let mut taken = 0u32;
        for ms in (0..60_000).step_by(7) {
            b.refill(t(ms));
            let n = b.available();
            b.take(n);
            taken += n;
        }
        assert!(taken <= 3 * 60 + 2, "{taken}");
        assert!(taken >= 3 * 60 - 1, "{taken}");
    }
}
