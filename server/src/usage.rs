//! Usage statistics (from the ledger) and fair-use quotas (from the billed matching
//! requests), plus the once-per-quarter warning e-mail at 90 %.

use chrono::{DateTime, Datelike, Duration, NaiveDate, TimeZone, Utc};

use crate::db::{Db, Partner};
use crate::error::ServerError;
use crate::matching_store::matching_usage_on;
use crate::quota::{percentage, quarter_of, tier_allowance};
use crate::store::conn::Conn;
use crate::views::{MatchingQuota, Period, Quota, QuotaCounter, QuotaStatus, Tier};

pub use crate::store::usage::{claim_mail, mark_sent, outbox, stats, OutboxMail, CLAIM_LEASE};

pub const MATCHING_ENDPOINT: &str = "POST /api/v1/matching";
pub(crate) const GRANT_ENDPOINTS: [&str; 2] = ["GET /api/v1/grants", "GET /api/v1/grants/{id}"];

/// How the yearly allowances map onto quarters (configurable).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QuotaPolicy {
    /// Share of the yearly matching allowance available in each quarter (default ¼;
    /// counters reset at the start of every quarter).
    pub quarter_share: f64,
}

impl Default for QuotaPolicy {
    fn default() -> Self {
        QuotaPolicy {
            quarter_share: 0.25,
        }
    }
}

impl QuotaPolicy {
    /// (active organisations, matching requests) allowed per quarter for a tier.
    pub fn limits(&self, tier: &str) -> (i64, i64) {
        let (orgs, yearly) = tier_allowance(tier);
        (orgs, (yearly as f64 * self.quarter_share).round() as i64)
    }
}

fn day_start(d: NaiveDate) -> DateTime<Utc> {
    Utc.from_utc_datetime(&d.and_hms_opt(0, 0, 0).unwrap_or_default())
}

/// First instant of the `period` containing `now` (UTC): day, ISO week (Monday),
/// month, quarter or year.
pub fn period_start(period: Period, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
    let today = now.date_naive();
    Some(match period {
        Period::Day => day_start(today),
        Period::Week => {
            day_start(today - Duration::days(today.weekday().num_days_from_monday() as i64))
        }
        Period::Month => day_start(today.with_day(1)?),
        Period::Quarter => quarter_of(now).1,
        Period::Year => day_start(NaiveDate::from_ymd_opt(today.year(), 1, 1)?),
    })
}

/// A count from SQL (never negative).
pub(crate) fn count(n: i64) -> u64 {
    n.max(0) as u64
}

/// A partner's quota for the quarter containing `now`.
#[derive(Debug, Clone, PartialEq)]
pub struct QuotaView {
    pub quarter: String,
    pub tier: String,
    pub orgs: (i64, i64),
    pub matching: (i64, i64),
}

impl QuotaView {
    pub fn compute(
        db: &Db,
        partner: &Partner,
        now: DateTime<Utc>,
        policy: &QuotaPolicy,
    ) -> Result<Self, ServerError> {
        Self::compute_on(&mut db.reader(), partner, now, policy)
    }

    /// [`QuotaView::compute`] on `conn` (e.g. inside the transaction of a billed
    /// matching, whose own request it then counts).
    pub fn compute_on(
        conn: &mut Conn,
        partner: &Partner,
        now: DateTime<Utc>,
        policy: &QuotaPolicy,
    ) -> Result<Self, ServerError> {
        let (quarter, _) = quarter_of(now);
        let (used, orgs) = matching_usage_on(conn, partner.id, &quarter)?;
        let (org_limit, matching_limit) = policy.limits(&partner.tier);
        Ok(QuotaView {
            quarter,
            tier: partner.tier.clone(),
            orgs: (orgs, org_limit),
            matching: (used, matching_limit),
        })
    }

    fn pcts(&self) -> (f64, f64) {
        (
            percentage(self.orgs.0, self.orgs.1),
            percentage(self.matching.0, self.matching.1),
        )
    }

    /// `ok` below 90 %, `warning` from 90 % to 100 %, `exceeded` above 100 % — decided
    /// on exact counts, not on the rounded percentages.
    pub fn status(&self) -> QuotaStatus {
        let limits = [self.orgs, self.matching];
        if limits.iter().any(|&(c, l)| c > l) {
            QuotaStatus::Exceeded
        } else if limits.iter().any(|&(c, l)| reached_warning(c, l)) {
            QuotaStatus::Warning
        } else {
            QuotaStatus::Ok
        }
    }

    /// The `quota` object of `GET /usage/quota`.
    pub fn view(&self) -> Result<Quota, ServerError> {
        let (o, m) = self.pcts();
        let status = self.status();
        let counter = |(current, limit): (i64, i64), percentage| QuotaCounter {
            current: count(current),
            limit: count(limit),
            percentage,
        };
        Ok(Quota {
            quarter: self.quarter.clone(),
            tier: tier_of(&self.tier)?,
            active_organizations: counter(self.orgs, o),
            matching_requests: counter(self.matching, m),
            status,
            warning: status != QuotaStatus::Ok,
            exceeded: status == QuotaStatus::Exceeded,
        })
    }

    /// The quota block of the synchronous matching response.
    pub fn matching_block(&self) -> MatchingQuota {
        MatchingQuota {
            matching_requests_used: self.matching.0.max(0) as u64,
            matching_requests_limit: self.matching.1.max(0) as u64,
            usage_percentage: percentage(self.matching.0, self.matching.1),
        }
    }
}

/// True when `current` is at least 90 % of `limit` (exact integer comparison).
fn reached_warning(current: i64, limit: i64) -> bool {
    current * 10 >= limit * 9
}

/// Queues the 90 % warning e-mail for each limit that reached it, at most once per
/// partner, quarter and limit (a UNIQUE constraint makes this exact). Returns how many
/// new e-mails were queued.
pub fn queue_quota_warnings(
    db: &Db,
    partner: &Partner,
    q: &QuotaView,
    now: DateTime<Utc>,
) -> Result<usize, ServerError> {
    queue_quota_warnings_on(&mut db.writer(), partner, q, now)
}

/// The limit a quota warning e-mail is about (the outbox's `kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WarningKind {
    MatchingRequests,
    ActiveOrganizations,
}

impl WarningKind {
    pub const ALL: [WarningKind; 2] = [Self::MatchingRequests, Self::ActiveOrganizations];

    /// The name stored in the outbox and shown by `grantmatch usage`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::MatchingRequests => "matching_requests",
            Self::ActiveOrganizations => "active_organizations",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == s)
    }

    /// The limit's name in the (German) e-mail.
    fn label(self) -> &'static str {
        match self {
            Self::MatchingRequests => "Matching-Anfragen",
            Self::ActiveOrganizations => "aktive Organisationen",
        }
    }
}

/// [`queue_quota_warnings`] on `conn` (e.g. inside the transaction of a billed
/// matching).
pub(crate) fn queue_quota_warnings_on(
    conn: &mut Conn,
    partner: &Partner,
    q: &QuotaView,
    now: DateTime<Utc>,
) -> Result<usize, ServerError> {
    let mut queued = 0;
    let kinds = [
        (WarningKind::MatchingRequests, q.matching),
        (WarningKind::ActiveOrganizations, q.orgs),
    ];
    for (kind, (current, limit)) in kinds {
        let label = kind.label();
        if !reached_warning(current, limit) {
            continue;
        }
        let pct = percentage(current, limit);
        let subject = format!(
            "grantmatch: {pct:.0} % Ihres Kontingents für {label} im {} erreicht",
            q.quarter
        );
        let body = format!(
            "Guten Tag,\n\nIhr Konto {} (Tarif {}) hat im Quartal {} {current} von {limit} {label} genutzt ({pct:.1} %).\nAnfragen werden weiterhin beantwortet; eine Überschreitung wird nachträglich abgerechnet.\nFür ein Upgrade wenden Sie sich bitte an uns.\n",
            partner.name, partner.tier, q.quarter
        );
        queued +=
            crate::store::usage::queue_mail(conn, partner, &q.quarter, kind, &subject, &body, now)?;
    }
    Ok(queued)
}

/// Validates the `period` query value (default quarter).
pub fn parse_period(p: Option<&str>) -> Result<Period, ServerError> {
    let p = p.unwrap_or("quarter");
    Period::parse(p).ok_or_else(|| {
        ServerError::Invalid(format!(
            "period: `{}` is not one of day, week, month, quarter, year",
            crate::params::clip(p)
        ))
    })
}

/// The tier of a stored partner (validated when the partner was created).
pub fn tier_of(tier: &str) -> Result<Tier, ServerError> {
    Tier::parse(tier).ok_or_else(|| ServerError::Task(format!("unknown stored tier `{tier}`")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::NewPartner;
    use crate::matching_store::completed_matching;

    fn partner(db: &Db) -> Partner {
        db.create_partner(&NewPartner {
            name: "P".into(),
            tier: "starter".into(),
            contact_email: Some("p@example.org".into()),
            ..Default::default()
        })
        .unwrap()
    }

    fn matching(db: &Db, p: &Partner, org: &str, at: DateTime<Utc>) {
        db.insert_matching(&completed_matching(p.id, org, at))
            .unwrap();
    }

    #[test]
    fn periods() {
        let now = Utc.with_ymd_and_hms(2026, 11, 22, 15, 0, 0).unwrap(); // a Sunday
        let d = |s: &str| {
            let period = parse_period(Some(s)).unwrap();
            period_start(period, now).unwrap().to_rfc3339()
        };
        assert_eq!(d("day"), "2026-11-22T00:00:00+00:00");
        assert_eq!(d("week"), "2026-11-16T00:00:00+00:00");
        assert_eq!(d("month"), "2026-11-01T00:00:00+00:00");
        assert_eq!(d("quarter"), "2026-10-01T00:00:00+00:00");
        assert_eq!(d("year"), "2026-01-01T00:00:00+00:00");
        assert!(parse_period(Some("decade")).is_err());
        assert_eq!(parse_period(None).unwrap(), Period::Quarter);
    }

    #[test]
    fn quota_transitions_and_single_warning() {
        let db = Db::in_memory().unwrap();
        let p = partner(&db);
        let now = Utc.with_ymd_and_hms(2026, 11, 22, 12, 0, 0).unwrap();
        // A policy where the quarter allows 100 matchings: percentages are counts.
        let policy = QuotaPolicy {
            quarter_share: 0.01,
        };
        let mut statuses = Vec::new();
        for i in 1..=101 {
            matching(&db, &p, &format!("org-{}", i % 5), now);
            let q = QuotaView::compute(&db, &p, now, &policy).unwrap();
            assert_eq!(q.matching, (i, 100));
            assert_eq!(q.orgs.0, (i).min(5));
            queue_quota_warnings(&db, &p, &q, now).unwrap();
            if [89, 90, 100, 101].contains(&i) {
                statuses.push((
                    i,
                    q.status(),
                    q.view().unwrap().warning,
                    q.view().unwrap().exceeded,
                ));
            }
        }
        assert_eq!(
            statuses,
            vec![
                (89, QuotaStatus::Ok, false, false),
                (90, QuotaStatus::Warning, true, false),
                (100, QuotaStatus::Warning, true, false),
                (101, QuotaStatus::Exceeded, true, true)
            ]
        );
        let mails = outbox(&db, false).unwrap();
        assert_eq!(mails.len(), 1, "exactly one warning per quarter and limit");
        assert_eq!(mails[0].kind, WarningKind::MatchingRequests);
        assert_eq!(mails[0].recipient.as_deref(), Some("p@example.org"));
        // A matching in the next quarter starts from zero.
        let next = Utc.with_ymd_and_hms(2027, 1, 2, 0, 0, 0).unwrap();
        matching(&db, &p, "org-1", next);
        let q = QuotaView::compute(&db, &p, next, &policy).unwrap();
        assert_eq!(
            (q.quarter.as_str(), q.matching.0, q.orgs.0),
            ("2027-Q1", 1, 1)
        );
    }

    #[test]
    fn default_policy_is_a_quarter_of_the_year() {
        let p = QuotaPolicy::default();
        assert_eq!(p.limits("starter"), (100, 2_500));
        assert_eq!(p.limits("standard"), (500, 12_500));
        assert_eq!(p.limits("enterprise"), (1_000, 25_000));
    }
}
