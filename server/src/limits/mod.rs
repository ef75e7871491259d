//! Limits on a partner's traffic: rate limits that refuse (`ratelimit`: per token, per
//! partner, matching per second) and the fair-use quota that only warns (`quota`:
//! quarters, tier allowances, percentages; the quota view and its e-mails are in
//! `crate::usage`). Also reachable at their old paths (`crate::ratelimit`,
//! `crate::quota`).

pub mod quota;
pub mod ratelimit;
