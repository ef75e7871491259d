//! Fair-use quotas: yearly allowances per tier, counted per calendar quarter.
//!
//! Decision (the spec leaves it open): each quarter gets a quarter of the yearly
//! matching allowance and counters reset at the start of every quarter; the limit of
//! active organisations applies per quarter as it is. Quotas never block requests.

use chrono::{DateTime, Datelike, NaiveDate, TimeZone, Utc};
use serde_json::{json, Value};

/// Yearly allowances of a tier: (active organisations, matching requests per year).
pub fn tier_allowance(tier: &str) -> (i64, i64) {
    match tier {
        "enterprise" => (1_000, 100_000),
        "standard" => (500, 50_000),
        _ => (100, 10_000),
    }
}

/// The quarter containing `t`: its label (`2026-Q4`) and first instant.
pub fn quarter_of(t: DateTime<Utc>) -> (String, DateTime<Utc>) {
    let q = (t.month0() / 3) + 1;
    let start = NaiveDate::from_ymd_opt(t.year(), (q - 1) * 3 + 1, 1)
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .map(|d| Utc.from_utc_datetime(&d))
        .unwrap_or(t);
    (format!("{}-Q{q}", t.year()), start)
}

/// Matching requests allowed per quarter for a tier.
pub fn quarterly_matching_limit(tier: &str) -> i64 {
    tier_allowance(tier).1 / 4
}

pub fn percentage(current: i64, limit: i64) -> f64 {
    if limit <= 0 {
        return 0.0;
    }
    (current as f64 * 10_000.0 / limit as f64).round() / 100.0
}

/// The quota block of the synchronous matching response.
pub fn matching_quota_block(used: i64, tier: &str) -> Value {
    let limit = quarterly_matching_limit(tier);
    json!({
        "matching_requests_used": used,
        "matching_requests_limit": limit,
        "usage_percentage": percentage(used, limit),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quarters() {
        let t = Utc.with_ymd_and_hms(2026, 11, 22, 10, 0, 0).unwrap();
        let (label, start) = quarter_of(t);
        assert_eq!(label, "2026-Q4");
        assert_eq!(start, Utc.with_ymd_and_hms(2026, 10, 1, 0, 0, 0).unwrap());
        assert_eq!(
            quarter_of(Utc.with_ymd_and_hms(2026, 3, 31, 23, 59, 59).unwrap()).0,
            "2026-Q1"
        );
    }

    #[test]
    fn limits_and_percentages() {
        assert_eq!(quarterly_matching_limit("starter"), 2_500);
        assert_eq!(quarterly_matching_limit("enterprise"), 25_000);
        assert_eq!(percentage(1, 3), 33.33);
        assert_eq!(percentage(0, 0), 0.0);
    }
}
