//! Rate limits (GCRA, `governor`): per token, per partner over all its tokens, and for
//! the matching endpoint per partner. Every authenticated response carries the
//! `X-RateLimit-*` headers of the tightest limit that applies; a refused request gets
//! 429 `rate_limit_exceeded` with `Retry-After`.

use std::num::NonZeroU32;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::http::{HeaderMap, HeaderValue};
use governor::clock::{Clock, DefaultClock};
use governor::middleware::StateInformationMiddleware;
use governor::state::keyed::DefaultKeyedStateStore;
use governor::{Quota, RateLimiter};
use uuid::Uuid;

/// Configured limits; `enabled = false` turns rate limiting off (e.g. for load tests).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimits {
    pub per_token_per_minute: u32,
    pub per_partner_per_minute: u32,
    pub matching_per_second: u32,
    pub enabled: bool,
}

impl Default for RateLimits {
    fn default() -> Self {
        RateLimits {
            per_token_per_minute: 100,
            per_partner_per_minute: 1_000,
            matching_per_second: 10,
            enabled: true,
        }
    }
}

type Keyed =
    RateLimiter<Uuid, DefaultKeyedStateStore<Uuid>, DefaultClock, StateInformationMiddleware>;

struct Limit {
    limiter: Keyed,
    max: u32,
    /// Time in which one request is replenished.
    per_request: Duration,
}

impl Limit {
    fn new(max: u32, period: Duration) -> Self {
        let n = NonZeroU32::new(max.max(1)).unwrap_or(NonZeroU32::MIN);
        let per_request = period / n.get();
        let quota = Quota::with_period(per_request)
            .unwrap_or_else(|| Quota::per_second(n))
            .allow_burst(n);
        Limit {
            limiter: RateLimiter::keyed(quota).with_middleware::<StateInformationMiddleware>(),
            max: n.get(),
            per_request,
        }
    }
}

/// The state of the tightest limit after a check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LimitState {
    pub limit: u32,
    pub remaining: u32,
    /// Unix time (seconds) when the full allowance is available again.
    pub reset: u64,
    /// Set when the request is refused: seconds to wait.
    pub retry_after: Option<u64>,
}

impl LimitState {
    pub fn apply(&self, headers: &mut HeaderMap) {
        let mut set = |name: &'static str, v: u64| {
            if let Ok(v) = HeaderValue::from_str(&v.to_string()) {
                headers.insert(name, v);
            }
        };
        set("x-ratelimit-limit", self.limit as u64);
        set("x-ratelimit-remaining", self.remaining as u64);
        set("x-ratelimit-reset", self.reset);
        if let Some(r) = self.retry_after {
            set("retry-after", r);
        }
    }
}

pub struct Limiters {
    cfg: RateLimits,
    token: Limit,
    partner: Limit,
    matching: Limit,
}

fn unix_after(d: Duration) -> u64 {
    (SystemTime::now() + d)
        .duration_since(UNIX_EPOCH)
        .map(|t| t.as_secs() + u64::from(t.subsec_nanos() > 0))
        .unwrap_or(0)
}

impl Limiters {
    pub fn new(cfg: RateLimits) -> Self {
        Limiters {
            cfg,
            token: Limit::new(cfg.per_token_per_minute, Duration::from_secs(60)),
            partner: Limit::new(cfg.per_partner_per_minute, Duration::from_secs(60)),
            matching: Limit::new(cfg.matching_per_second, Duration::from_secs(1)),
        }
    }

    /// Checks (and counts) a request. `None` when rate limiting is disabled.
    pub fn check(&self, token: Uuid, partner: Uuid, is_matching: bool) -> Option<LimitState> {
        if !self.cfg.enabled {
            return None;
        }
        let mut checks: Vec<(&Limit, Uuid)> = vec![(&self.token, token), (&self.partner, partner)];
        if is_matching {
            checks.push((&self.matching, partner));
        }
        let clock = DefaultClock::default();
        let mut tightest: Option<LimitState> = None;
        for (limit, key) in checks {
            match limit.limiter.check_key(&key) {
                Ok(snapshot) => {
                    let remaining = snapshot.remaining_burst_capacity();
                    let state = LimitState {
                        limit: limit.max,
                        remaining,
                        reset: unix_after(
                            limit.per_request * (limit.max - remaining.min(limit.max)),
                        ),
                        retry_after: None,
                    };
                    let tighter =
                        tightest.is_none_or(|t| (remaining, limit.max) < (t.remaining, t.limit));
                    if tighter {
                        tightest = Some(state);
                    }
                }
                Err(not_until) => {
                    let wait = not_until.wait_time_from(clock.now());
                    let secs = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
                    return Some(LimitState {
                        limit: limit.max,
                        remaining: 0,
                        reset: unix_after(wait + limit.per_request * (limit.max - 1)),
                        retry_after: Some(secs.max(1)),
                    });
                }
            }
        }
        tightest
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exactly_the_limit_then_refused() {
        let l = Limiters::new(RateLimits {
            per_token_per_minute: 5,
            per_partner_per_minute: 100,
            matching_per_second: 10,
            enabled: true,
        });
        let (t, p) = (Uuid::new_v4(), Uuid::new_v4());
        for i in 0..5 {
            let s = l.check(t, p, false).unwrap();
            assert_eq!(s.retry_after, None, "request {i}");
            assert_eq!(s.limit, 5);
            assert_eq!(s.remaining, 4 - i);
        }
        let s = l.check(t, p, false).unwrap();
        assert!(s.retry_after.is_some());
        assert_eq!(s.remaining, 0);
    }

    #[test]
    fn partner_limit_is_shared_across_tokens() {
        let l = Limiters::new(RateLimits {
            per_token_per_minute: 100,
            per_partner_per_minute: 3,
            matching_per_second: 10,
            enabled: true,
        });
        let p = Uuid::new_v4();
        for _ in 0..3 {
            assert!(l
                .check(Uuid::new_v4(), p, false)
                .unwrap()
                .retry_after
                .is_none());
        }
        assert!(l
            .check(Uuid::new_v4(), p, false)
            .unwrap()
            .retry_after
            .is_some());
    }

    #[test]
    fn disabled_checks_nothing() {
        let l = Limiters::new(RateLimits {
            enabled: false,
            ..Default::default()
        });
        assert!(l.check(Uuid::new_v4(), Uuid::new_v4(), true).is_none());
    }
}
