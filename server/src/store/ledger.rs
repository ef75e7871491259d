//! The usage ledger: one row per API request (also failed ones) with partner, token,
//! endpoint label, HTTP status, latency, time and — for matching — the organisation.
//!
//! Matching requests are written before their response is sent. Other requests are
//! buffered and written in batches (at least every [`FLUSH_INTERVAL`]); a graceful
//! shutdown flushes the buffer, and statistics flush it before they count.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::args;
use crate::store::conn::Conn;
use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::db::Db;
use crate::error::ServerError;

pub const FLUSH_INTERVAL: Duration = Duration::from_millis(500);

#[derive(Debug, Clone, PartialEq)]
pub struct LedgerRow {
    pub partner_id: Option<Uuid>,
    pub token_id: Option<Uuid>,
    pub method: String,
    pub endpoint: String,
    pub status: u16,
    pub latency_ms: f64,
    pub organization_id: Option<String>,
    pub created_at: DateTime<Utc>,
}

pub struct Ledger {
    db: Arc<Db>,
    buffer: Mutex<Vec<LedgerRow>>,
}

impl Ledger {
    pub fn new(db: Arc<Db>) -> Self {
        Ledger {
            db,
            buffer: Mutex::new(Vec::new()),
        }
    }

    /// Queues a row for the next batch.
    pub fn record(&self, row: LedgerRow) {
        self.buffer
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(row);
    }

    /// Rows waiting for the next batch write and the time of the oldest.
    pub fn backlog(&self) -> (usize, Option<DateTime<Utc>>) {
        let buf = self.buffer.lock().unwrap_or_else(|p| p.into_inner());
        (buf.len(), buf.iter().map(|r| r.created_at).min())
    }

    /// Writes a row now (matching requests: durable before the response).
    pub fn record_now(&self, row: LedgerRow) -> Result<(), ServerError> {
        self.write(std::slice::from_ref(&row))
    }

    /// Writes every buffered row. On failure the rows go back into the buffer.
    pub fn flush(&self) -> Result<usize, ServerError> {
        let rows = std::mem::take(&mut *self.buffer.lock().unwrap_or_else(|p| p.into_inner()));
        if rows.is_empty() {
            return Ok(0);
        }
        match self.write(&rows) {
            Ok(()) => Ok(rows.len()),
            Err(e) => {
                let mut buf = self.buffer.lock().unwrap_or_else(|p| p.into_inner());
                let newer = std::mem::replace(&mut *buf, rows);
                buf.extend(newer);
                Err(e)
            }
        }
    }

    fn write(&self, rows: &[LedgerRow]) -> Result<(), ServerError> {
        let mut conn = self.db.writer();
        let mut tx = conn.transaction()?;
        insert_rows(&mut tx, rows)?;
        tx.commit()?;
        Ok(())
    }

    /// Flushes periodically until the process ends.
    pub fn spawn_flusher(self: &Arc<Self>) {
        let ledger = self.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(FLUSH_INTERVAL);
            loop {
                tick.tick().await;
                let l = ledger.clone();
                match crate::store::blocking(move || l.flush()).await {
                    Ok(Err(e)) => {
                        tracing::error!(error = %e, "cannot write the usage ledger; will retry")
                    }
                    Err(e) => tracing::error!(error = %e, "ledger flush task failed"),
                    Ok(Ok(_)) => {}
                }
            }
        });
    }
}

/// Inserts ledger rows on `conn` (inside the caller's transaction).
pub(crate) fn insert_rows(conn: &mut Conn, rows: &[LedgerRow]) -> Result<(), ServerError> {
    for r in rows {
        conn.execute(
            "INSERT INTO usage_ledger (partner_id, token_id, method, endpoint, status, latency_ms, organization_id, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            args![
                r.partner_id,
                r.token_id,
                &r.method,
                &r.endpoint,
                r.status,
                r.latency_ms,
                &r.organization_id,
                r.created_at,
            ],
        )?;
    }
    Ok(())
}

/// The ledger's part in a request, set by the middleware before the handler runs: when
/// the request started, and whether its row was already written with the request's
/// own transaction (a billed matching: the row commits with the matching request,
/// its quota counter and outbox entry), so that the middleware does not write a
/// second one.
#[derive(Debug, Clone)]
pub struct RequestLedger {
    pub started: std::time::Instant,
    pub at: DateTime<Utc>,
    written: Arc<std::sync::atomic::AtomicBool>,
}

impl RequestLedger {
    pub fn new(started: std::time::Instant, at: DateTime<Utc>) -> Self {
        RequestLedger {
            started,
            at,
            written: Arc::default(),
        }
    }

    /// The row of this request, answered with `status` now.
    pub fn row(
        &self,
        partner_id: Uuid,
        token_id: Uuid,
        endpoint: &str,
        status: u16,
        organization_id: Option<String>,
    ) -> LedgerRow {
        LedgerRow {
            partner_id: Some(partner_id),
            token_id: Some(token_id),
            method: endpoint.split(' ').next().unwrap_or("").to_string(),
            endpoint: endpoint.to_string(),
            status,
            latency_ms: self.started.elapsed().as_secs_f64() * 1000.0,
            organization_id,
            created_at: self.at,
        }
    }

    /// Marks the row as written (after its transaction committed).
    pub fn mark_written(&self) {
        self.written
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// True when the request's row was written with the request's transaction.
    pub fn is_written(&self) -> bool {
        self.written.load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// The endpoint label of a request: method and route template, e.g.
/// `GET /api/v1/grants/{id}`; paths outside the API's routes are `other`.
pub fn endpoint_label(method: &str, path: &str) -> String {
    let segs: Vec<&str> = path.trim_end_matches('/').split('/').collect();
    // ["", "api", "v1", resource, id?, sub?]
    if segs.len() < 4 || segs[1] != "api" || segs[2] != "v1" {
        return format!("{method} other");
    }
    const RESOURCES: [&str; 9] = [
        "grants",
        "grant_providers",
        "regions",
        "grant_areas",
        "eligible_entities",
        "target_groups",
        "matching",
        "usage",
        "openapi.json",
    ];
    if !RESOURCES.contains(&segs[3]) {
        return format!("{method} other");
    }
    let template = match (segs[3], segs.len()) {
        ("usage", 5) if matches!(segs[4], "stats" | "quota") => {
            format!("/api/v1/usage/{}", segs[4])
        }
        ("usage", _) => return format!("{method} other"),
        (r, 4) => format!("/api/v1/{r}"),
        (r, 5) => format!("/api/v1/{r}/{{id}}"),
        ("matching", 6) if segs[5] == "results" => "/api/v1/matching/{id}/results".to_string(),
        _ => return format!("{method} other"),
    };
    format!("{method} {template}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels() {
        assert_eq!(
            endpoint_label("GET", "/api/v1/grants"),
            "GET /api/v1/grants"
        );
        assert_eq!(
            endpoint_label("GET", "/api/v1/grants/abc"),
            "GET /api/v1/grants/{id}"
        );
        assert_eq!(
            endpoint_label("GET", "/api/v1/matching/x/results"),
            "GET /api/v1/matching/{id}/results"
        );
        assert_eq!(
            endpoint_label("POST", "/api/v1/matching"),
            "POST /api/v1/matching"
        );
        assert_eq!(
            endpoint_label("GET", "/api/v1/usage/stats"),
            "GET /api/v1/usage/stats"
        );
        assert_eq!(endpoint_label("GET", "/api/v1/nope"), "GET other");
        assert_eq!(endpoint_label("GET", "/api/v1/grants/a/b/c"), "GET other");
    }

    #[test]
    fn flush_writes_buffer() {
        let db = Arc::new(Db::in_memory().unwrap());
        let l = Ledger::new(db.clone());
        for _ in 0..3 {
            l.record(LedgerRow {
                partner_id: None,
                token_id: None,
                method: "GET".into(),
                endpoint: "GET other".into(),
                status: 404,
                latency_ms: 1.0,
                organization_id: None,
                created_at: Utc::now(),
            });
        }
        assert_eq!(l.flush().unwrap(), 3);
        assert_eq!(l.flush().unwrap(), 0);
        let n: i64 = db
            .writer()
            .query_row("SELECT COUNT(*) FROM usage_ledger", args![], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 3);
    }
}
