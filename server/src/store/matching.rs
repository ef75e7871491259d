//! Matching requests in the database: the billing record of every matching and the
//! stored results that `GET /matching/:id` returns. Each row is committed (WAL,
//! `synchronous=FULL`) before the response that announces it is sent.

use crate::args;
use crate::store::conn::Conn;
use crate::store::sql::Row;
use chrono::{DateTime, Utc};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::db::{Db, Partner};
use crate::error::ServerError;
use crate::ledger::LedgerRow;
use crate::quota::quarter_of;
use crate::usage::{queue_quota_warnings_on, QuotaPolicy, QuotaView};
use crate::views::MatchResult;

/// Stored results as JSON text.
fn to_json(results: &impl Serialize) -> Result<String, ServerError> {
    serde_json::to_string(results).map_err(|e| ServerError::Database(format!("results: {e}")))
}

/// Status of a stored matching request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum MatchingStatus {
    Pending,
    Completed,
    Failed,
}

impl MatchingStatus {
    pub const ALL: [MatchingStatus; 3] = [Self::Pending, Self::Completed, Self::Failed];

    /// The name stored in the database and shown by the API.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Completed => "completed",
            Self::Failed => "failed",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.as_str() == s)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct MatchingRecord {
    pub id: Uuid,
    pub partner_id: Uuid,
    pub token_id: Uuid,
    pub organization_id: String,
    pub request: Value,
    pub status: MatchingStatus,
    pub results: Option<Vec<MatchResult>>,
    pub results_count: Option<i64>,
    pub error: Option<String>,
    pub created_at: DateTime<Utc>,
    pub completed_at: Option<DateTime<Utc>>,
}

fn status_col(r: &Row, i: usize) -> Result<MatchingStatus, ServerError> {
    let s: String = r.get(i)?;
    MatchingStatus::parse(&s)
        .ok_or_else(|| ServerError::Database(format!("unknown matching status `{s}`")))
}

fn json_col<T: DeserializeOwned>(r: &Row, i: usize) -> Result<Option<T>, ServerError> {
    let s: Option<String> = r.get(i)?;
    s.map(|s| {
        serde_json::from_str(&s).map_err(|e| ServerError::Database(format!("column {i}: {e}")))
    })
    .transpose()
}

const COLUMNS: &str = "id, partner_id, token_id, organization_id, request_json, status, results_json, results_count, error, created_at, completed_at";

fn record(r: &Row) -> Result<MatchingRecord, ServerError> {
    Ok(MatchingRecord {
        id: r.get(0)?,
        partner_id: r.get(1)?,
        token_id: r.get(2)?,
        organization_id: r.get(3)?,
        request: json_col(r, 4)?.unwrap_or(Value::Null),
        status: status_col(r, 5)?,
        results: json_col(r, 6)?,
        results_count: r.get(7)?,
        error: r.get(8)?,
        created_at: r.get(9)?,
        completed_at: r.get(10)?,
    })
}

/// A completed matching without results, for tests of the counts.
#[cfg(test)]
pub(crate) fn completed_matching(partner: Uuid, org: &str, at: DateTime<Utc>) -> MatchingRecord {
    MatchingRecord {
        id: Uuid::new_v4(),
        partner_id: partner,
        token_id: Uuid::new_v4(),
        organization_id: org.into(),
        request: serde_json::json!({}),
        status: MatchingStatus::Completed,
        results: Some(vec![]),
        results_count: Some(0),
        error: None,
        created_at: at,
        completed_at: Some(at),
    }
}

/// Inserts a matching request and counts it for its partner's quarter, on `tx` (inside
/// the caller's transaction).
fn insert_on(tx: &mut Conn, m: &MatchingRecord) -> Result<(), ServerError> {
    tx.execute(
        &format!("INSERT INTO matching_requests ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)"),
        args![
            m.id,
            m.partner_id,
            m.token_id,
            &m.organization_id,
            m.request.to_string(),
            m.status.as_str(),
            m.results.as_ref().map(to_json).transpose()?,
            m.results_count,
            &m.error,
            m.created_at,
            m.completed_at,
        ],
    )?;
    tx.execute(
        "INSERT INTO matching_quota_usage (partner_id, quarter, organization_id, matchings)
         VALUES (?1, ?2, ?3, 1)
         ON CONFLICT (partner_id, quarter, organization_id)
         DO UPDATE SET matchings = matching_quota_usage.matchings + 1",
        args![m.partner_id, quarter_of(m.created_at).0, &m.organization_id],
    )?;
    Ok(())
}

/// Matching requests of a partner in a quarter (`2026-Q4`) and its distinct
/// organisations, read on `conn`.
pub(crate) fn matching_usage_on(
    conn: &mut Conn,
    partner_id: Uuid,
    quarter: &str,
) -> Result<(i64, i64), ServerError> {
    conn.query_row(
        "SELECT CAST(COALESCE(SUM(matchings), 0) AS BIGINT), COUNT(*) FROM matching_quota_usage WHERE partner_id = ?1 AND quarter = ?2",
        args![partner_id, quarter],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
}

/// What a billed matching request stores.
pub struct Billing<'a> {
    pub record: &'a MatchingRecord,
    pub partner: &'a Partner,
    /// The request's usage-ledger row; `None` leaves it to the middleware.
    pub ledger_row: Option<&'a LedgerRow>,
    pub now: DateTime<Utc>,
    pub policy: &'a QuotaPolicy,
}

/// The outcome of [`Db::bill_matching`]: the partner's quota after the request and how
/// many warning e-mails it queued.
pub struct Billed {
    pub quota: QuotaView,
    pub warnings_queued: usize,
}

impl Db {
    /// Inserts a matching request (pending, or already completed with its results) and
    /// counts it for its partner's quarter, in one transaction.
    pub fn insert_matching(&self, m: &MatchingRecord) -> Result<(), ServerError> {
        let mut conn = self.writer();
        let mut tx = conn.transaction()?;
        insert_on(&mut tx, m)?;
        tx.commit()?;
        Ok(())
    }

    /// A billed matching request in ONE transaction, committed (WAL,
    /// `synchronous=FULL`) before the caller answers: the request (with its results
    /// when completed), its quota counter, the 90 % warning e-mail when a limit is
    /// reached (once per partner, quarter and limit) and its usage-ledger row. Either
    /// all of it is stored or none.
    pub fn bill_matching(&self, b: &Billing<'_>) -> Result<Billed, ServerError> {
        let mut conn = self.writer();
        let mut tx = conn.transaction()?;
        insert_on(&mut tx, b.record)?;
        let quota = QuotaView::compute_on(&mut tx, b.partner, b.now, b.policy)?;
        let warnings_queued = queue_quota_warnings_on(&mut tx, b.partner, &quota, b.now)?;
        if let Some(row) = b.ledger_row {
            crate::ledger::insert_rows(&mut tx, std::slice::from_ref(row))?;
        }
        tx.commit()?;
        Ok(Billed {
            quota,
            warnings_queued,
        })
    }

    /// Stores the outcome of a pending request: results, or an error message.
    pub fn finish_matching(
        &self,
        id: Uuid,
        outcome: Result<&[MatchResult], &str>,
    ) -> Result<(), ServerError> {
        let now = Utc::now();
        let mut conn = self.writer();
        match outcome {
            Ok(results) => conn.execute(
                "UPDATE matching_requests SET status = ?2, results_json = ?3, results_count = ?4, completed_at = ?5 WHERE id = ?1",
                args![
                    id,
                    MatchingStatus::Completed.as_str(),
                    to_json(&results)?,
                    results.len() as i64,
                    now
                ],
            )?,
            Err(error) => conn.execute(
                "UPDATE matching_requests SET status = ?2, error = ?3, completed_at = ?4 WHERE id = ?1",
                args![id, MatchingStatus::Failed.as_str(), error, now],
            )?,
        };
        Ok(())
    }

    pub fn matching(&self, id: Uuid) -> Result<Option<MatchingRecord>, ServerError> {
        self.reader().query_opt(
            &format!("SELECT {COLUMNS} FROM matching_requests WHERE id = ?1"),
            args![id],
            record,
        )
    }

    /// Requests still pending (e.g. interrupted by a restart), oldest first.
    pub fn pending_matchings(&self) -> Result<Vec<MatchingRecord>, ServerError> {
        self.reader().query_map(
            &format!(
                "SELECT {COLUMNS} FROM matching_requests WHERE status = ?1 ORDER BY created_at"
            ),
            args![MatchingStatus::Pending.as_str()],
            record,
        )
    }

    /// A partner's most recent matching requests, newest first (the dashboard's history).
    pub fn recent_matchings(
        &self,
        partner_id: Uuid,
        limit: usize,
    ) -> Result<Vec<MatchingRecord>, ServerError> {
        self.reader().query_map(
            &format!("SELECT {COLUMNS} FROM matching_requests WHERE partner_id = ?1 ORDER BY created_at DESC, rowid DESC LIMIT ?2"),
            args![partner_id, limit as i64],
            record,
        )
    }

    /// Matching requests of a partner in a quarter (`2026-Q4`) and its distinct
    /// organisations.
    pub fn matching_usage(
        &self,
        partner_id: Uuid,
        quarter: &str,
    ) -> Result<(i64, i64), ServerError> {
        matching_usage_on(&mut self.reader(), partner_id, quarter)
    }
}
