//! Usage figures and the quota warning outbox in the store: the statistics of
//! `GET /usage/stats` from the ledger, and the 90 % e-mails (queued in the billed
//! matching's transaction, at most once per partner, quarter and limit).

use std::collections::BTreeMap;

use chrono::{DateTime, NaiveDate, Utc};
use uuid::Uuid;

use crate::args;
use crate::db::{Db, Partner};
use crate::error::ServerError;
use crate::store::conn::Conn;
use crate::usage::{count, WarningKind, GRANT_ENDPOINTS, MATCHING_ENDPOINT};
use crate::views::{UsageDay, UsageStats};

/// The `stats` object of `GET /usage/stats` for a partner since `since`. `by_day`
/// lists only days with traffic.
pub fn stats(db: &Db, partner_id: Uuid, since: DateTime<Utc>) -> Result<UsageStats, ServerError> {
    let mut conn = db.reader();
    let pid = partner_id.to_string();
    let since = since.to_rfc3339();
    let (total, ok, failed, avg): (i64, i64, i64, Option<f64>) = conn.query_row(
        "SELECT COUNT(*),
                CAST(COALESCE(SUM(CASE WHEN status BETWEEN 200 AND 299 THEN 1 ELSE 0 END), 0) AS BIGINT),
                CAST(COALESCE(SUM(CASE WHEN status >= 400 THEN 1 ELSE 0 END), 0) AS BIGINT),
                AVG(latency_ms)
         FROM usage_ledger WHERE partner_id = ?1 AND created_at >= ?2",
        args![&pid, &since],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
    )?;
    let (matching, orgs): (i64, i64) = conn.query_row(
        "SELECT COUNT(*), COUNT(DISTINCT organization_id) FROM usage_ledger
         WHERE partner_id = ?1 AND created_at >= ?2 AND endpoint = ?3 AND status BETWEEN 200 AND 299",
        args![&pid, &since, MATCHING_ENDPOINT],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    let grants: i64 = conn.query_row(
        "SELECT COUNT(*) FROM usage_ledger WHERE partner_id = ?1 AND created_at >= ?2 AND endpoint IN (?3, ?4)",
        args![&pid, &since, GRANT_ENDPOINTS[0], GRANT_ENDPOINTS[1]],
        |r| r.get(0),
    )?;
    let mut by_endpoint = BTreeMap::new();
    for (e, n) in conn.query_map(
        "SELECT endpoint, COUNT(*) FROM usage_ledger WHERE partner_id = ?1 AND created_at >= ?2 GROUP BY endpoint ORDER BY endpoint",
        args![&pid, &since],
        |r| Ok((r.get::<String>(0)?, r.get::<i64>(1)?)),
    )? {
        by_endpoint.insert(e, count(n));
    }
    let mut by_day = Vec::new();
    let days = conn.query_map(
        "SELECT substr(created_at, 1, 10) AS day, COUNT(*),
                CAST(COALESCE(SUM(CASE WHEN endpoint = ?3 AND status BETWEEN 200 AND 299 THEN 1 ELSE 0 END), 0) AS BIGINT)
         FROM usage_ledger WHERE partner_id = ?1 AND created_at >= ?2 GROUP BY day ORDER BY day",
        args![&pid, &since, MATCHING_ENDPOINT],
        |r| Ok((r.get::<String>(0)?, r.get::<i64>(1)?, r.get::<i64>(2)?)),
    )?;
    for (date, requests, matching_requests) in days {
        let date = NaiveDate::parse_from_str(&date, "%Y-%m-%d")
            .map_err(|e| ServerError::Task(format!("usage ledger: day `{date}`: {e}")))?;
        by_day.push(UsageDay {
            date,
            requests: count(requests),
            matching_requests: count(matching_requests),
        });
    }
    Ok(UsageStats {
        total_requests: count(total),
        successful_requests: count(ok),
        failed_requests: count(failed),
        matching_requests: count(matching),
        grants_requests: count(grants),
        active_organizations: count(orgs),
        average_response_time_ms: avg.map_or(0, |a| a.round().max(0.0) as u64),
        average_response_time_ms_precise: avg.map_or(0.0, |a| (a.max(0.0) * 10.0).round() / 10.0),
        by_endpoint,
        by_day,
    })
}

/// Queues a warning e-mail unless the partner already has one for this quarter and
/// limit (a UNIQUE constraint makes this exact, across processes and replicas).
/// Returns 1 when queued, 0 when it was there already.
pub(crate) fn queue_mail(
    conn: &mut Conn,
    partner: &Partner,
    quarter: &str,
    kind: WarningKind,
    subject: &str,
    body: &str,
    now: DateTime<Utc>,
) -> Result<usize, ServerError> {
    conn.execute(
        "INSERT INTO email_outbox (partner_id, quarter, kind, recipient, subject, body, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
         ON CONFLICT DO NOTHING",
        args![partner.id, quarter, kind.as_str(), &partner.contact_email, subject, body, now],
    )
}

/// An e-mail waiting in (or sent from) the outbox.
#[derive(Debug, Clone, PartialEq)]
pub struct OutboxMail {
    pub id: i64,
    pub partner_id: String,
    pub kind: WarningKind,
    pub quarter: String,
    pub recipient: Option<String>,
    pub subject: String,
    pub body: String,
    pub sent: bool,
}

pub fn outbox(db: &Db, unsent_only: bool) -> Result<Vec<OutboxMail>, ServerError> {
    db.reader().query_map(
        "SELECT id, partner_id, kind, quarter, recipient, subject, body, sent_at IS NOT NULL FROM email_outbox
         WHERE (?1 = 0 OR sent_at IS NULL) ORDER BY id",
        args![unsent_only],
        |r| {
            let k: String = r.get(2)?;
            Ok(OutboxMail {
                id: r.get(0)?,
                partner_id: r.get(1)?,
                kind: WarningKind::parse(&k)
                    .ok_or_else(|| ServerError::Database(format!("unknown warning kind `{k}`")))?,
                quarter: r.get(3)?,
                recipient: r.get(4)?,
                subject: r.get(5)?,
                body: r.get(6)?,
                sent: r.get(7)?,
            })
        },
    )
}

/// How long a claim on an outbox e-mail holds: a sender that has not marked the
/// e-mail sent (or failed) by then is taken to have crashed, and another may send it.
pub const CLAIM_LEASE: chrono::Duration = chrono::Duration::minutes(10);

/// Claims an unsent e-mail for sending by this process. True when the caller may send
/// it: no other process (replica) holds a claim younger than [`CLAIM_LEASE`]. One
/// statement, so two replicas never both get the same e-mail.
pub fn claim_mail(db: &Db, id: i64, now: DateTime<Utc>) -> Result<bool, ServerError> {
    let n = db.writer().execute(
        "UPDATE email_outbox SET claimed_at = ?2
         WHERE id = ?1 AND sent_at IS NULL AND (claimed_at IS NULL OR claimed_at < ?3)",
        args![id, now, now - CLAIM_LEASE],
    )?;
    Ok(n == 1)
}

/// Records the outcome of sending an e-mail; a failure releases the claim (it is sent
/// again on a later pass, by any replica).
pub fn mark_sent(
    db: &Db,
    id: i64,
    result: Result<(), String>,
    now: DateTime<Utc>,
) -> Result<(), ServerError> {
    match result {
        Ok(()) => db.writer().execute(
            "UPDATE email_outbox SET sent_at = ?2, last_error = NULL WHERE id = ?1",
            args![id, now],
        )?,
        Err(e) => db.writer().execute(
            "UPDATE email_outbox SET last_error = ?2, claimed_at = NULL WHERE id = ?1",
            args![id, e],
        )?,
    };
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::NewPartner;
    use chrono::TimeZone;

    #[test]
    fn an_outbox_mail_is_claimed_by_one_sender_at_a_time() {
        let db = Db::in_memory().unwrap();
        let p = db
            .create_partner(&NewPartner {
                name: "P".into(),
                tier: "starter".into(),
                contact_email: Some("p@example.org".into()),
                ..Default::default()
            })
            .unwrap();
        let now = Utc.with_ymd_and_hms(2026, 11, 26, 12, 0, 0).unwrap();
        let kind = WarningKind::MatchingRequests;
        assert_eq!(
            queue_mail(&mut db.writer(), &p, "2026-Q4", kind, "s", "b", now).unwrap(),
            1
        );
        assert_eq!(
            queue_mail(&mut db.writer(), &p, "2026-Q4", kind, "s", "b", now).unwrap(),
            0
        );
        let id = outbox(&db, true).unwrap()[0].id;
        // Two replicas: the first claim wins, the second waits for the lease.
        assert!(claim_mail(&db, id, now).unwrap());
        assert!(!claim_mail(&db, id, now + chrono::Duration::seconds(30)).unwrap());
        // A failed send releases the claim.
        mark_sent(&db, id, Err("relay down".into()), now).unwrap();
        assert!(claim_mail(&db, id, now).unwrap());
        // A sender that crashed holding the claim: another takes over after the lease.
        assert!(!claim_mail(&db, id, now + CLAIM_LEASE).unwrap());
        let later = now + CLAIM_LEASE + chrono::Duration::seconds(1);
        assert!(claim_mail(&db, id, later).unwrap());
        // Sent: nobody claims it again.
        mark_sent(&db, id, Ok(()), later).unwrap();
        assert!(!claim_mail(&db, id, later + CLAIM_LEASE * 2).unwrap());
        assert!(outbox(&db, true).unwrap().is_empty());
    }
}
