//! The embedded SQLite database of a data directory: partners and tokens.
//!
//! Tokens are stored only as SHA-256 hashes; the plain token is shown once at creation.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, TryLockError};

use chrono::{DateTime, Utc};
use rand::RngCore;
use rusqlite::{params, Connection, OptionalExtension};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use uuid::Uuid;

use crate::error::ServerError;
use crate::views::Tier;

pub const DB_FILE: &str = "grantmatch.sqlite";

/// Token scopes of the API.
pub const SCOPES: [&str; 3] = ["grants:read", "matching:use", "usage:read"];

const MIGRATIONS: &[&str] = &[
    r#"
CREATE TABLE partners (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    tier TEXT NOT NULL,
    contact_email TEXT,
    created_at TEXT NOT NULL
);
CREATE TABLE partner_regions (
    partner_id TEXT NOT NULL REFERENCES partners(id),
    region_id TEXT NOT NULL,
    PRIMARY KEY (partner_id, region_id)
);
CREATE TABLE partner_grant_areas (
    partner_id TEXT NOT NULL REFERENCES partners(id),
    grant_area_id TEXT NOT NULL,
    PRIMARY KEY (partner_id, grant_area_id)
);
CREATE TABLE tokens (
    id TEXT PRIMARY KEY,
    partner_id TEXT NOT NULL REFERENCES partners(id),
    hash BLOB NOT NULL UNIQUE,
    scopes TEXT NOT NULL,
    created_at TEXT NOT NULL,
    revoked_at TEXT
);
"#,
    r#"
CREATE TABLE matching_requests (
    id TEXT PRIMARY KEY,
    partner_id TEXT NOT NULL REFERENCES partners(id),
    token_id TEXT NOT NULL,
    organization_id TEXT NOT NULL,
    request_json TEXT NOT NULL,
    status TEXT NOT NULL,
    results_json TEXT,
    results_count INTEGER,
    error TEXT,
    created_at TEXT NOT NULL,
    completed_at TEXT
);
CREATE INDEX matching_requests_partner ON matching_requests (partner_id, created_at);
CREATE INDEX matching_requests_status ON matching_requests (status);
"#,
    r#"
CREATE TABLE usage_ledger (
    id INTEGER PRIMARY KEY,
    partner_id TEXT,
    token_id TEXT,
    method TEXT NOT NULL,
    endpoint TEXT NOT NULL,
    status INTEGER NOT NULL,
    latency_ms REAL NOT NULL,
    organization_id TEXT,
    created_at TEXT NOT NULL
);
CREATE INDEX usage_ledger_partner ON usage_ledger (partner_id, created_at);
CREATE TABLE email_outbox (
    id INTEGER PRIMARY KEY,
    partner_id TEXT NOT NULL,
    quarter TEXT NOT NULL,
    kind TEXT NOT NULL,
    recipient TEXT,
    subject TEXT NOT NULL,
    body TEXT NOT NULL,
    created_at TEXT NOT NULL,
    sent_at TEXT,
    last_error TEXT,
    UNIQUE (partner_id, quarter, kind)
);
"#,
    // Per-partner qualification prompt, custom categories and per-grant results
    // (server/src/qualification.rs).
    r#"
CREATE TABLE partner_assessment (
    partner_id TEXT PRIMARY KEY REFERENCES partners(id),
    prompt TEXT,
    prompt_updated_at TEXT,
    version INTEGER NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE TABLE partner_categories (
    id TEXT PRIMARY KEY,
    partner_id TEXT NOT NULL REFERENCES partners(id),
    name TEXT NOT NULL,
    name_en TEXT NOT NULL,
    description TEXT,
    keywords TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX partner_categories_partner ON partner_categories (partner_id);
CREATE TABLE partner_grant_results (
    partner_id TEXT NOT NULL REFERENCES partners(id),
    grant_id TEXT NOT NULL,
    ai_qualified INTEGER,
    reasoning TEXT,
    qualification_key TEXT,
    category_ids TEXT,
    categories_key TEXT,
    assessed_for_version INTEGER NOT NULL,
    assessed_at TEXT NOT NULL,
    PRIMARY KEY (partner_id, grant_id)
);
"#,
    // Matchings per partner, quarter and organisation, kept in step with
    // matching_requests: the quota reads a partner's quarter from here in O(organisations)
    // on every matching request instead of counting its rows. Filled from the existing
    // requests (created_at is RFC 3339 in UTC: year and month are its first characters).
    r#"
CREATE TABLE matching_quota_usage (
    partner_id TEXT NOT NULL,
    quarter TEXT NOT NULL,
    organization_id TEXT NOT NULL,
    matchings INTEGER NOT NULL,
    PRIMARY KEY (partner_id, quarter, organization_id)
);
INSERT INTO matching_quota_usage (partner_id, quarter, organization_id, matchings)
SELECT partner_id,
       substr(created_at, 1, 4) || '-Q' || ((CAST(substr(created_at, 6, 2) AS INTEGER) + 2) / 3),
       organization_id,
       COUNT(*)
FROM matching_requests
GROUP BY 1, 2, 3;
"#,
    // The partner's corrections to how its prompt was read (JSON of
    // `grantmatch_engine::qualify::QualificationRules`), NULL when none.
    r#"
ALTER TABLE partner_assessment ADD COLUMN rules TEXT;
"#,
    // Partner dashboard (server/src/dashboard/): users with argon2id password hashes,
    // one-time invites and sessions stored as SHA-256 hashes, failed sign-ins.
    r#"
CREATE TABLE partner_users (
    id TEXT PRIMARY KEY,
    partner_id TEXT NOT NULL REFERENCES partners(id),
    email TEXT NOT NULL UNIQUE,
    password_hash TEXT,
    created_at TEXT NOT NULL
);
CREATE TABLE partner_user_invites (
    hash BLOB PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES partner_users(id) ON DELETE CASCADE,
    expires_at TEXT NOT NULL,
    used_at TEXT
);
CREATE TABLE dashboard_sessions (
    hash BLOB PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES partner_users(id) ON DELETE CASCADE,
    csrf TEXT NOT NULL,
    expires_at TEXT NOT NULL
);
CREATE TABLE dashboard_sign_in_failures (
    email TEXT NOT NULL,
    at TEXT NOT NULL
);
CREATE INDEX dashboard_sign_in_failures_email ON dashboard_sign_in_failures (email, at);
"#,
    // A per-partner generation of what the grant views show of the partner (its results,
    // categories and whether it is configured), bumped by triggers in the same
    // transaction as every change of those rows — by any process, the CLI included.
    // Authentication reads it with the token, so the server can keep the partner's
    // annotations in memory and know, on every request, whether they are still the
    // database's (README: the store).
    r#"
CREATE TABLE partner_annotations_generation (
    partner_id TEXT PRIMARY KEY,
    generation INTEGER NOT NULL
);
CREATE TRIGGER partner_grant_results_insert_generation AFTER INSERT ON partner_grant_results BEGIN
    INSERT INTO partner_annotations_generation (partner_id, generation) VALUES (NEW.partner_id, 1)
    ON CONFLICT (partner_id) DO UPDATE SET generation = generation + 1;
END;
CREATE TRIGGER partner_grant_results_update_generation AFTER UPDATE ON partner_grant_results BEGIN
    INSERT INTO partner_annotations_generation (partner_id, generation) VALUES (NEW.partner_id, 1)
    ON CONFLICT (partner_id) DO UPDATE SET generation = generation + 1;
    INSERT INTO partner_annotations_generation (partner_id, generation) VALUES (OLD.partner_id, 1)
    ON CONFLICT (partner_id) DO UPDATE SET generation = generation + 1;
END;
CREATE TRIGGER partner_grant_results_delete_generation AFTER DELETE ON partner_grant_results BEGIN
    INSERT INTO partner_annotations_generation (partner_id, generation) VALUES (OLD.partner_id, 1)
    ON CONFLICT (partner_id) DO UPDATE SET generation = generation + 1;
END;
CREATE TRIGGER partner_categories_insert_generation AFTER INSERT ON partner_categories BEGIN
    INSERT INTO partner_annotations_generation (partner_id, generation) VALUES (NEW.partner_id, 1)
    ON CONFLICT (partner_id) DO UPDATE SET generation = generation + 1;
END;
CREATE TRIGGER partner_categories_update_generation AFTER UPDATE ON partner_categories BEGIN
    INSERT INTO partner_annotations_generation (partner_id, generation) VALUES (NEW.partner_id, 1)
    ON CONFLICT (partner_id) DO UPDATE SET generation = generation + 1;
    INSERT INTO partner_annotations_generation (partner_id, generation) VALUES (OLD.partner_id, 1)
    ON CONFLICT (partner_id) DO UPDATE SET generation = generation + 1;
END;
CREATE TRIGGER partner_categories_delete_generation AFTER DELETE ON partner_categories BEGIN
    INSERT INTO partner_annotations_generation (partner_id, generation) VALUES (OLD.partner_id, 1)
    ON CONFLICT (partner_id) DO UPDATE SET generation = generation + 1;
END;
CREATE TRIGGER partner_assessment_insert_generation AFTER INSERT ON partner_assessment BEGIN
    INSERT INTO partner_annotations_generation (partner_id, generation) VALUES (NEW.partner_id, 1)
    ON CONFLICT (partner_id) DO UPDATE SET generation = generation + 1;
END;
CREATE TRIGGER partner_assessment_delete_generation AFTER DELETE ON partner_assessment BEGIN
    INSERT INTO partner_annotations_generation (partner_id, generation) VALUES (OLD.partner_id, 1)
    ON CONFLICT (partner_id) DO UPDATE SET generation = generation + 1;
END;
"#,
];

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Partner {
    pub id: Uuid,
    pub name: String,
    pub tier: String,
    pub contact_email: Option<String>,
    pub region_ids: Vec<Uuid>,
    pub grant_area_ids: Vec<Uuid>,
    pub created_at: DateTime<Utc>,
}

/// A valid (not revoked) token as seen by the authentication layer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenInfo {
    pub id: Uuid,
    pub partner_id: Uuid,
    pub scopes: Vec<String>,
    /// The partner's annotations generation read with the token (0 when its results,
    /// categories and configuration were never written): the in-memory annotations of
    /// the partner are current exactly when they were loaded at this generation.
    pub annotations_generation: i64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenRow {
    pub id: Uuid,
    pub partner_id: Uuid,
    pub scopes: Vec<String>,
    pub created_at: DateTime<Utc>,
    pub revoked_at: Option<DateTime<Utc>>,
}

/// Partner data to create.
#[derive(Debug, Clone, Default)]
pub struct NewPartner {
    pub name: String,
    pub tier: String,
    pub contact_email: Option<String>,
    pub region_ids: Vec<Uuid>,
    pub grant_area_ids: Vec<Uuid>,
}

/// Read connections of a database file: reads never wait for the writer (WAL), and up
/// to this many at once run in parallel.
pub const READERS: usize = 4;

/// The database: one writer connection and a small fixed set of read connections, each
/// behind its own mutex (issue #14). Every write — and every read that must see the
/// state inside a write transaction — goes through [`Db::writer`]; other reads go
/// through [`Db::reader`], on a connection of their own, so a write holding the writer
/// (the ledger flush with its fsync, a matching insert) never holds up a read: in WAL
/// mode a reader sees the last committed state without waiting for a writer.
/// An in-memory database (tests) has no read connections: its reads use the writer.
pub struct Db {
    writer: Mutex<Connection>,
    readers: Vec<Mutex<Connection>>,
    /// Where the next reader search starts (round robin).
    next_reader: AtomicUsize,
}

fn lock(m: &Mutex<Connection>) -> MutexGuard<'_, Connection> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The rule "no SQLite call on an async worker thread", checked on every use of a
/// connection, the writer's and the readers'.
fn check_thread() {
    if crate::store::on_async_worker() {
        if cfg!(debug_assertions) {
            panic!("{}", crate::store::ASYNC_WORKER_MESSAGE);
        }
        static WARNED: std::sync::Once = std::sync::Once::new();
        WARNED.call_once(|| tracing::warn!("{}", crate::store::ASYNC_WORKER_MESSAGE));
    }
}

pub(crate) fn hash_token(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

pub(crate) fn parse_uuid(s: String) -> rusqlite::Result<Uuid> {
    Uuid::parse_str(&s).map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(0, rusqlite::types::Type::Text, Box::new(e))
    })
}

pub(crate) fn parse_time(s: String) -> rusqlite::Result<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(&s)
        .map(|d| d.with_timezone(&Utc))
        .map_err(|e| {
            rusqlite::Error::FromSqlConversionFailure(0, rusqlite::types::Type::Text, Box::new(e))
        })
}

impl Db {
    /// Opens (and creates or migrates) the database in `data_dir`.
    pub fn open(data_dir: &Path) -> Result<Self, ServerError> {
        std::fs::create_dir_all(data_dir)
            .map_err(|e| ServerError::Io(format!("{}: {e}", data_dir.display())))?;
        let path = data_dir.join(DB_FILE);
        let writer = Self::init(Connection::open(&path)?)?;
        // Opened after the migrations: the readers see the current schema.
        let readers = (0..READERS)
            .map(|_| {
                let conn = Connection::open(&path)?;
                conn.busy_timeout(std::time::Duration::from_secs(5))?;
                // A read connection never writes: a write sent to it by mistake fails
                // instead of bypassing the one writer.
                conn.pragma_update(None, "query_only", "ON")?;
                Ok(Mutex::new(conn))
            })
            .collect::<Result<Vec<_>, ServerError>>()?;
        Ok(Db {
            writer: Mutex::new(writer),
            readers,
            next_reader: AtomicUsize::new(0),
        })
    }

    /// An in-memory database (tests): one connection, for writes and reads.
    pub fn in_memory() -> Result<Self, ServerError> {
        Ok(Db {
            writer: Mutex::new(Self::init(Connection::open_in_memory()?)?),
            readers: Vec::new(),
            next_reader: AtomicUsize::new(0),
        })
    }

    /// Sets the writer connection up and migrates the schema.
    fn init(mut conn: Connection) -> Result<Connection, ServerError> {
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "FULL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        let version: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
        let tx = conn.transaction()?;
        for (i, m) in MIGRATIONS.iter().enumerate().skip(version as usize) {
            tx.execute_batch(m)?;
            tx.pragma_update(None, "user_version", (i + 1) as i64)?;
        }
        tx.commit()?;
        Ok(conn)
    }

    /// The writer connection: every write, and reads that belong to a write
    /// transaction. Inside a tokio runtime this must run in [`crate::store::blocking`]:
    /// a database call on an async worker thread panics in debug builds and is logged
    /// (once per process) in release builds.
    pub(crate) fn writer(&self) -> MutexGuard<'_, Connection> {
        check_thread();
        lock(&self.writer)
    }

    /// A read connection (`query_only`), never the writer's of a database file: a free
    /// one if there is one, else it waits for one (not for the writer). Each read sees
    /// the last committed state — of this process or any other. The same rule as
    /// [`Db::writer`] on async worker threads.
    pub(crate) fn reader(&self) -> MutexGuard<'_, Connection> {
        check_thread();
        let n = self.readers.len();
        if n == 0 {
            return lock(&self.writer);
        }
        let start = self.next_reader.fetch_add(1, Ordering::Relaxed) % n;
        for i in 0..n {
            match self.readers[(start + i) % n].try_lock() {
                Ok(guard) => return guard,
                Err(TryLockError::Poisoned(p)) => return p.into_inner(),
                Err(TryLockError::WouldBlock) => {}
            }
        }
        lock(&self.readers[start])
    }

    /// Whether reads have connections of their own (a database file).
    pub fn has_readers(&self) -> bool {
        !self.readers.is_empty()
    }

    pub fn create_partner(&self, p: &NewPartner) -> Result<Partner, ServerError> {
        if p.name.trim().is_empty() {
            return Err(ServerError::Invalid(
                "partner name must not be empty".into(),
            ));
        }
        if Tier::parse(&p.tier).is_none() {
            let names = Tier::ALL.map(Tier::as_str);
            return Err(ServerError::Invalid(format!(
                "unknown tier `{}` (one of: {})",
                p.tier,
                names.join(", ")
            )));
        }
        if let Some(e) = &p.contact_email {
            if !e.contains('@') || e.contains(char::is_whitespace) {
                return Err(ServerError::Invalid(format!(
                    "`{e}` is not an e-mail address"
                )));
            }
        }
        let mut conn = self.writer();
        let tx = conn.transaction()?;
        let exists: bool = tx
            .query_row("SELECT 1 FROM partners WHERE name = ?1", [&p.name], |_| {
                Ok(true)
            })
            .optional()?
            .unwrap_or(false);
        if exists {
            return Err(ServerError::Invalid(format!(
                "a partner named `{}` already exists",
                p.name
            )));
        }
        let partner = Partner {
            id: Uuid::new_v4(),
            name: p.name.clone(),
            tier: p.tier.clone(),
            contact_email: p.contact_email.clone(),
            region_ids: p.region_ids.clone(),
            grant_area_ids: p.grant_area_ids.clone(),
            created_at: Utc::now(),
        };
        tx.execute(
            "INSERT INTO partners (id, name, tier, contact_email, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![
                partner.id.to_string(),
                partner.name,
                partner.tier,
                partner.contact_email,
                partner.created_at.to_rfc3339()
            ],
        )?;
        for r in &partner.region_ids {
            tx.execute(
                "INSERT OR IGNORE INTO partner_regions (partner_id, region_id) VALUES (?1, ?2)",
                params![partner.id.to_string(), r.to_string()],
            )?;
        }
        for a in &partner.grant_area_ids {
            tx.execute(
                "INSERT OR IGNORE INTO partner_grant_areas (partner_id, grant_area_id) VALUES (?1, ?2)",
                params![partner.id.to_string(), a.to_string()],
            )?;
        }
        tx.commit()?;
        Ok(partner)
    }

    fn load_partner(conn: &Connection, id: &str) -> Result<Option<Partner>, ServerError> {
        let row = conn
            .query_row(
                "SELECT id, name, tier, contact_email, created_at FROM partners WHERE id = ?1",
                [id],
                |r| {
                    Ok((
                        parse_uuid(r.get(0)?)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, String>(2)?,
                        r.get::<_, Option<String>>(3)?,
                        parse_time(r.get(4)?)?,
                    ))
                },
            )
            .optional()?;
        let Some((id, name, tier, contact_email, created_at)) = row else {
            return Ok(None);
        };
        let list = |sql: &str| -> Result<Vec<Uuid>, ServerError> {
            let mut st = conn.prepare_cached(sql)?;
            let ids = st
                .query_map([id.to_string()], |r| parse_uuid(r.get(0)?))?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(ids)
        };
        let region_ids =
            list("SELECT region_id FROM partner_regions WHERE partner_id = ?1 ORDER BY rowid")?;
        let grant_area_ids = list(
            "SELECT grant_area_id FROM partner_grant_areas WHERE partner_id = ?1 ORDER BY rowid",
        )?;
        Ok(Some(Partner {
            id,
            name,
            tier,
            contact_email,
            region_ids,
            grant_area_ids,
            created_at,
        }))
    }

    pub fn partner(&self, id: Uuid) -> Result<Option<Partner>, ServerError> {
        Self::load_partner(&self.reader(), &id.to_string())
    }

    /// Finds a partner by UUID or exact name.
    pub fn find_partner(&self, name_or_id: &str) -> Result<Option<Partner>, ServerError> {
        let conn = self.reader();
        let id: Option<String> = conn
            .query_row(
                "SELECT id FROM partners WHERE id = ?1 OR name = ?1",
                [name_or_id],
                |r| r.get(0),
            )
            .optional()?;
        match id {
            Some(id) => Self::load_partner(&conn, &id),
            None => Ok(None),
        }
    }

    pub fn partners(&self) -> Result<Vec<Partner>, ServerError> {
        let conn = self.reader();
        let ids: Vec<String> = conn
            .prepare("SELECT id FROM partners ORDER BY created_at, name")?
            .query_map([], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        ids.iter()
            .filter_map(|id| Self::load_partner(&conn, id).transpose())
            .collect()
    }

    /// Creates a token; returns its row and the plain token (shown once).
    pub fn create_token(
        &self,
        partner_id: Uuid,
        scopes: &[String],
    ) -> Result<(TokenRow, String), ServerError> {
        if scopes.is_empty() {
            return Err(ServerError::Invalid(
                "a token needs at least one scope".into(),
            ));
        }
        for s in scopes {
            if !SCOPES.contains(&s.as_str()) {
                return Err(ServerError::Invalid(format!(
                    "unknown scope `{s}` (one of: {})",
                    SCOPES.join(", ")
                )));
            }
        }
        let mut bytes = [0u8; 32];
        rand::rng().fill_bytes(&mut bytes);
        let token = format!("gm_{}", hex::encode(bytes));
        let row = TokenRow {
            id: Uuid::new_v4(),
            partner_id,
            scopes: scopes.to_vec(),
            created_at: Utc::now(),
            revoked_at: None,
        };
        self.writer().execute(
            "INSERT INTO tokens (id, partner_id, hash, scopes, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![
                row.id.to_string(),
                partner_id.to_string(),
                hash_token(&token).to_vec(),
                scopes.join(","),
                row.created_at.to_rfc3339()
            ],
        )?;
        Ok((row, token))
    }

    /// Revokes a token by id. Returns false when no such active token exists.
    pub fn revoke_token(&self, id: Uuid) -> Result<bool, ServerError> {
        let n = self.writer().execute(
            "UPDATE tokens SET revoked_at = ?2 WHERE id = ?1 AND revoked_at IS NULL",
            params![id.to_string(), Utc::now().to_rfc3339()],
        )?;
        Ok(n == 1)
    }

    pub fn tokens(&self, partner_id: Uuid) -> Result<Vec<TokenRow>, ServerError> {
        let conn = self.reader();
        let mut st = conn.prepare(
            "SELECT id, partner_id, scopes, created_at, revoked_at FROM tokens WHERE partner_id = ?1 ORDER BY created_at",
        )?;
        let rows = st
            .query_map([partner_id.to_string()], |r| {
                Ok(TokenRow {
                    id: parse_uuid(r.get(0)?)?,
                    partner_id: parse_uuid(r.get(1)?)?,
                    scopes: r
                        .get::<_, String>(2)?
                        .split(',')
                        .map(str::to_string)
                        .collect(),
                    created_at: parse_time(r.get(3)?)?,
                    revoked_at: r.get::<_, Option<String>>(4)?.map(parse_time).transpose()?,
                })
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    }

    /// Looks an active token up by the hash of the presented secret; the stored hash is
    /// compared in constant time.
    pub fn authenticate(&self, presented: &str) -> Result<Option<TokenInfo>, ServerError> {
        let hash = hash_token(presented);
        let conn = self.reader();
        // One statement, so one read snapshot: the token as it is now (a revocation
        // committed by any process before this read is seen) and the partner's
        // annotations generation of the same moment.
        let mut st = conn.prepare_cached(
            "SELECT t.id, t.partner_id, t.scopes, t.hash, COALESCE(g.generation, 0)
             FROM tokens t LEFT JOIN partner_annotations_generation g ON g.partner_id = t.partner_id
             WHERE t.hash = ?1 AND t.revoked_at IS NULL",
        )?;
        let row = st
            .query_row([hash.to_vec()], |r| {
                Ok((
                    parse_uuid(r.get(0)?)?,
                    parse_uuid(r.get(1)?)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, Vec<u8>>(3)?,
                    r.get::<_, i64>(4)?,
                ))
            })
            .optional()?;
        Ok(
            row.and_then(|(id, partner_id, scopes, stored, generation)| {
                bool::from(stored.ct_eq(&hash)).then(|| TokenInfo {
                    id,
                    partner_id,
                    scopes: scopes.split(',').map(str::to_string).collect(),
                    annotations_generation: generation,
                })
            }),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matching_store::completed_matching;
    use chrono::TimeZone;

    fn matching(db: &Db, partner: Uuid, org: &str, at: DateTime<Utc>) {
        db.insert_matching(&completed_matching(partner, org, at))
            .unwrap();
    }

    #[test]
    fn quota_usage_counts_per_quarter_and_the_migration_rebuilds_it() {
        let db = Db::in_memory().unwrap();
        let (a, b) = (partner(&db, "A").id, partner(&db, "B").id);
        let at = |m, d, h| Utc.with_ymd_and_hms(2026, m, d, h, 0, 0).unwrap();
        matching(&db, a, "org-1", at(9, 30, 23)); // Q3
        matching(&db, a, "org-1", at(10, 1, 0)); // Q4 from here
        matching(&db, a, "org-1", at(11, 22, 10));
        matching(&db, a, "org-2", at(12, 31, 23));
        matching(&db, b, "org-1", at(11, 22, 10));
        assert_eq!(db.matching_usage(a, "2026-Q4").unwrap(), (3, 2));
        assert_eq!(db.matching_usage(a, "2026-Q3").unwrap(), (1, 1));
        assert_eq!(db.matching_usage(b, "2026-Q4").unwrap(), (1, 1));
        assert_eq!(db.matching_usage(b, "2027-Q1").unwrap(), (0, 0));

        // The migration's backfill from matching_requests gives the same counts.
        let backfill = MIGRATIONS
            .iter()
            .find(|m| m.contains("CREATE TABLE matching_quota_usage"))
            .unwrap();
        let insert = &backfill[backfill.find("INSERT INTO").unwrap()..];
        db.writer()
            .execute_batch("DELETE FROM matching_quota_usage")
            .unwrap();
        db.writer().execute_batch(insert).unwrap();
        assert_eq!(db.matching_usage(a, "2026-Q4").unwrap(), (3, 2));
        assert_eq!(db.matching_usage(a, "2026-Q3").unwrap(), (1, 1));
        assert_eq!(db.matching_usage(b, "2026-Q4").unwrap(), (1, 1));
    }

    fn partner(db: &Db, name: &str) -> Partner {
        db.create_partner(&NewPartner {
            name: name.into(),
            tier: "starter".into(),
            ..Default::default()
        })
        .unwrap()
    }

    #[test]
    fn token_lifecycle() {
        let db = Db::in_memory().unwrap();
        let p = partner(&db, "Acme");
        let (row, token) = db.create_token(p.id, &["grants:read".into()]).unwrap();
        let info = db.authenticate(&token).unwrap().unwrap();
        assert_eq!(info.partner_id, p.id);
        assert_eq!(info.scopes, vec!["grants:read"]);
        assert!(db.authenticate("gm_wrong").unwrap().is_none());
        assert!(db.revoke_token(row.id).unwrap());
        assert!(db.authenticate(&token).unwrap().is_none());
        assert!(!db.revoke_token(row.id).unwrap());
    }

    #[test]
    fn every_change_of_a_partners_annotations_bumps_its_generation() {
        use crate::qualification::{self as q, NewCategory, PartnerAnnotations};
        let dir = tempfile::tempdir().unwrap();
        let server = Db::open(dir.path()).unwrap();
        let p = partner(&server, "Acme");
        let other = partner(&server, "Other");
        let (_, token) = server.create_token(p.id, &["grants:read".into()]).unwrap();
        let generation = || {
            server
                .authenticate(&token)
                .unwrap()
                .unwrap()
                .annotations_generation
        };
        assert_eq!(generation(), 0);
        // The CLI: another process, its own connection.
        let cli = Db::open(dir.path()).unwrap();
        let mut seen = vec![generation()];
        let mut changed = |what: &str| {
            let g = generation();
            assert!(g > *seen.last().unwrap(), "{what}: {seen:?} then {g}");
            // The annotations read in one snapshot carry the same generation.
            assert_eq!(
                PartnerAnnotations::load_current(&server, p.id).unwrap().0,
                g
            );
            seen.push(g);
        };
        q::set_prompt(&cli, p.id, "Vereine in Sachsen", None).unwrap();
        changed("prompt set");
        let grant = Uuid::new_v4().to_string();
        cli.writer()
            .execute(
                "INSERT INTO partner_grant_results (partner_id, grant_id, ai_qualified, reasoning, assessed_for_version, assessed_at)
                 VALUES (?1, ?2, 1, 'r', 1, 'now')",
                params![p.id.to_string(), grant],
            )
            .unwrap();
        changed("result written");
        let cat = NewCategory {
            name: "Sport".into(),
            name_en: "Sports".into(),
            keywords: vec!["Sport".into()],
            ..Default::default()
        };
        let c = q::add_category(&cli, p.id, &cat).unwrap();
        changed("category added");
        q::set_prompt(&cli, p.id, "Sportvereine", None).unwrap();
        changed("prompt changed (results cleared)");
        assert!(q::remove_category(&cli, p.id, c.id).unwrap());
        changed("category removed");
        assert!(q::clear_prompt(&cli, p.id).unwrap());
        changed("prompt cleared");
        // Another partner's changes leave this partner's generation alone.
        let before = generation();
        q::set_prompt(&cli, other.id, "Kommunen", None).unwrap();
        q::add_category(&cli, other.id, &cat).unwrap();
        assert_eq!(generation(), before);
    }

    /// A database file with one partner and a token of it.
    fn file_db() -> (tempfile::TempDir, Db, Partner, TokenRow, String) {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path()).unwrap();
        assert!(db.has_readers());
        let p = partner(&db, "Acme");
        let (row, token) = db.create_token(p.id, &["grants:read".into()]).unwrap();
        (dir, db, p, row, token)
    }

    #[test]
    fn reads_do_not_wait_for_the_writer() {
        let (_dir, db, p, _, token) = file_db();
        let db = std::sync::Arc::new(db);
        let (held, release) = (std::sync::mpsc::channel(), std::sync::mpsc::channel::<()>());
        let writer = {
            let db = db.clone();
            std::thread::spawn(move || {
                // As the ledger flush during its fsync: the writer taken, a write
                // transaction open and not yet committed.
                let mut conn = db.writer();
                let tx = conn.transaction().unwrap();
                tx.execute("UPDATE tokens SET scopes = 'usage:read'", [])
                    .unwrap();
                held.0.send(()).unwrap();
                release.1.recv().unwrap();
                tx.commit().unwrap();
            })
        };
        held.1.recv().unwrap();
        let (done, reads) = std::sync::mpsc::channel();
        let reading = {
            let db = db.clone();
            std::thread::spawn(move || {
                for _ in 0..2 * READERS {
                    // The committed state, at once: not the uncommitted scopes.
                    let info = db.authenticate(&token).unwrap().unwrap();
                    assert_eq!(info.scopes, vec!["grants:read"]);
                    assert_eq!(db.partner(p.id).unwrap().unwrap().name, "Acme");
                }
                done.send(token).unwrap();
            })
        };
        let token = reads
            .recv_timeout(std::time::Duration::from_secs(2))
            .expect("the reads finish while the writer is held");
        reading.join().unwrap();
        release.0.send(()).unwrap();
        writer.join().unwrap();
        let info = db.authenticate(&token).unwrap().unwrap();
        assert_eq!(info.scopes, vec!["usage:read"]);
    }

    #[test]
    fn every_read_connection_sees_a_revocation_by_another_process_at_once() {
        let (dir, db, _, row, token) = file_db();
        // Every read connection has read the token (and cached its statement).
        for _ in 0..2 * READERS {
            assert!(db.authenticate(&token).unwrap().is_some());
        }
        let cli = Db::open(dir.path()).unwrap();
        assert!(cli.revoke_token(row.id).unwrap());
        for _ in 0..2 * READERS {
            assert!(db.authenticate(&token).unwrap().is_none());
        }
    }

    #[test]
    fn a_read_connection_refuses_writes() {
        let (_dir, db, _, _, _) = file_db();
        let err = db
            .reader()
            .execute("DELETE FROM tokens", [])
            .expect_err("query_only");
        assert!(err.to_string().contains("readonly"), "{err}");
        assert_eq!(db.tokens(partner(&db, "B").id).unwrap().len(), 0);
    }

    #[test]
    fn rejects_bad_partner_input() {
        let db = Db::in_memory().unwrap();
        partner(&db, "Acme");
        assert!(db
            .create_partner(&NewPartner {
                name: "Acme".into(),
                tier: "starter".into(),
                ..Default::default()
            })
            .is_err());
        assert!(db
            .create_partner(&NewPartner {
                name: "B".into(),
                tier: "gold".into(),
                ..Default::default()
            })
            .is_err());
        let p = db.find_partner("Acme").unwrap().unwrap();
        assert!(db.create_token(p.id, &["admin".into()]).is_err());
    }

    #[test]
    fn token_hash_is_stored_not_token() {
        let db = Db::in_memory().unwrap();
        let p = partner(&db, "Acme");
        let (_, token) = db.create_token(p.id, &["grants:read".into()]).unwrap();
        let stored: Vec<u8> = db
            .writer()
            .query_row("SELECT hash FROM tokens", [], |r| r.get(0))
            .unwrap();
        assert_ne!(stored, token.as_bytes());
        assert_eq!(stored, hash_token(&token).to_vec());
    }
}
