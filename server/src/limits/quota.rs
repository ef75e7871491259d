//! Calendar quarters, tier allowances and percentages (the quota policy itself is
//! [`crate::usage::QuotaPolicy`]). Quotas never block requests.

use chrono::{DateTime, Datelike, NaiveDate, TimeZone, Utc};

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

pub fn percentage(current: i64, limit: i64) -> f64 {
    if limit <= 0 {
        return 0.0;
    }
    (current as f64 * 10_000.0 / limit as f64).round() / 100.0
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
    fn percentages() {
        assert_eq!(percentage(1, 3), 33.33);
        assert_eq!(percentage(0, 0), 0.0);
    }
}
