//! Matching requests in the database: the billing record of every matching and the
//! stored results that `GET /matching/:id` returns. Each row is committed (WAL,
//! `synchronous=FULL`) before the response that announces it is sent.

use chrono::{DateTime, Utc};
use rusqlite::{params, Connection, OptionalExtension, Row};
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
fn to_json(results: &impl Serialize) -> rusqlite::Result<String> {
    serde_json::to_string(results).map_err(|e| rusqlite::Error::ToSqlConversionFailure(e.into()))
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

fn uuid_col(r: &Row, i: usize) -> rusqlite::Result<Uuid> {
    let s: String = r.get(i)?;
    Uuid::parse_str(&s).map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(i, rusqlite::types::Type::Text, Box::new(e))
    })
}

fn time_col(r: &Row, i: usize) -> rusqlite::Result<Option<DateTime<Utc>>> {
    let s: Option<String> = r.get(i)?;
    s.map(|s| {
        DateTime::parse_from_rfc3339(&s)
            .map(|d| d.with_timezone(&Utc))
            .map_err(|e| {
                rusqlite::Error::FromSqlConversionFailure(
                    i,
                    rusqlite::types::Type::Text,
                    Box::new(e),
                )
            })
    })
    .transpose()
}

fn status_col(r: &Row, i: usize) -> rusqlite::Result<MatchingStatus> {
    let s: String = r.get(i)?;
    MatchingStatus::parse(&s).ok_or_else(|| {
        let e = format!("unknown matching status `{s}`");
        rusqlite::Error::FromSqlConversionFailure(i, rusqlite::types::Type::Text, e.into())
    })
}

fn json_col<T: DeserializeOwned>(r: &Row, i: usize) -> rusqlite::Result<Option<T>> {
    let s: Option<String> = r.get(i)?;
    s.map(|s| {
        serde_json::from_str(&s).map_err(|e| {
            rusqlite::Error::FromSqlConversionFailure(i, rusqlite::types::Type::Text, Box::new(e))
        })
    })
    .transpose()
}

const COLUMNS: &str = "id, partner_id, token_id, organization_id, request_json, status, results_json, results_count, error, created_at, completed_at";

fn record(r: &Row) -> rusqlite::Result<MatchingRecord> {
    Ok(MatchingRecord {
        id: uuid_col(r, 0)?,
        partner_id: uuid_col(r, 1)?,
        token_id: uuid_col(r, 2)?,
        organization_id: r.get(3)?,
        request: json_col(r, 4)?.unwrap_or(Value::Null),
        status: status_col(r, 5)?,
        results: json_col(r, 6)?,
        results_count: r.get(7)?,
        error: r.get(8)?,
        created_at: time_col(r, 9)?.unwrap_or_default(),
        completed_at: time_col(r, 10)?,
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
fn insert_on(tx: &Connection, m: &MatchingRecord) -> Result<(), ServerError> {
    tx.execute(
        &format!("INSERT INTO matching_requests ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)"),
        params![
            m.id.to_string(),
            m.partner_id.to_string(),
            m.token_id.to_string(),
            m.organization_id,
            m.request.to_string(),
            m.status.as_str(),
            m.results.as_ref().map(to_json).transpose()?,
            m.results_count,
            m.error,
            m.created_at.to_rfc3339(),
            m.completed_at.map(|t| t.to_rfc3339()),
        ],
    )?;
    tx.execute(
        "INSERT INTO matching_quota_usage (partner_id, quarter, organization_id, matchings)
         VALUES (?1, ?2, ?3, 1)
         ON CONFLICT (partner_id, quarter, organization_id) DO UPDATE SET matchings = matchings + 1",
        params![
            m.partner_id.to_string(),
            quarter_of(m.created_at).0,
            m.organization_id
        ],
    )?;
    Ok(())
}

/// Matching requests of a partner in a quarter (`2026-Q4`) and its distinct
/// organisations, read on `conn`.
pub(crate) fn matching_usage_on(
    conn: &Connection,
    partner_id: Uuid,
    quarter: &str,
) -> Result<(i64, i64), ServerError> {
    Ok(conn.query_row(
        "SELECT COALESCE(SUM(matchings), 0), COUNT(*) FROM matching_quota_usage WHERE partner_id = ?1 AND quarter = ?2",
        params![partner_id.to_string(), quarter],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?)
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
        let tx = conn.transaction()?;
        insert_on(&tx, m)?;
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
        let tx = conn.transaction()?;
        insert_on(&tx, b.record)?;
        let quota = QuotaView::compute_on(&tx, b.partner, b.now, b.policy)?;
        let warnings_queued = queue_quota_warnings_on(&tx, b.partner, &quota, b.now)?;
        if let Some(row) = b.ledger_row {
            crate::ledger::insert_rows(&tx, std::slice::from_ref(row))?;
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
        let now = Utc::now().to_rfc3339();
        let conn = self.writer();
        match outcome {
            Ok(results) => conn.execute(
                "UPDATE matching_requests SET status = ?2, results_json = ?3, results_count = ?4, completed_at = ?5 WHERE id = ?1",
                params![
                    id.to_string(),
                    MatchingStatus::Completed.as_str(),
                    to_json(&results)?,
                    results.len() as i64,
                    now
                ],
            )?,
            Err(error) => conn.execute(
                "UPDATE matching_requests SET status = ?2, error = ?3, completed_at = ?4 WHERE id = ?1",
                params![id.to_string(), MatchingStatus::Failed.as_str(), error, now],
            )?,
        };
        Ok(())
    }

    pub fn matching(&self, id: Uuid) -> Result<Option<MatchingRecord>, ServerError> {
        Ok(self
            .reader()
            .query_row(
                &format!("SELECT {COLUMNS} FROM matching_requests WHERE id = ?1"),
                [id.to_string()],
                record,
            )
            .optional()?)
    }

    /// Requests still pending (e.g. interrupted by a restart), oldest first.
    pub fn pending_matchings(&self) -> Result<Vec<MatchingRecord>, ServerError> {
        let conn = self.reader();
        let mut st = conn.prepare(&format!(
            "SELECT {COLUMNS} FROM matching_requests WHERE status = ?1 ORDER BY created_at"
        ))?;
        let rows = st
            .query_map([MatchingStatus::Pending.as_str()], record)?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    }

    /// A partner's most recent matching requests, newest first (the dashboard's history).
    pub fn recent_matchings(
        &self,
        partner_id: Uuid,
        limit: usize,
    ) -> Result<Vec<MatchingRecord>, ServerError> {
        let conn = self.reader();
        let mut st = conn.prepare(&format!(
            "SELECT {COLUMNS} FROM matching_requests WHERE partner_id = ?1 ORDER BY created_at DESC, rowid DESC LIMIT ?2"
        ))?;
        let rows = st
            .query_map(params![partner_id.to_string(), limit as i64], record)?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    }

    /// Matching requests of a partner in a quarter (`2026-Q4`) and its distinct
    /// organisations.
    pub fn matching_usage(
        &self,
        partner_id: Uuid,
        quarter: &str,
    ) -> Result<(i64, i64), ServerError> {
        matching_usage_on(&self.reader(), partner_id, quarter)
    }
}
