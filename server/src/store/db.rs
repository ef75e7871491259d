//! The store's database and its connections: the embedded SQLite file of a data
//! directory (the default) or a PostgreSQL server (`--database-url postgres://…`).
//! Both get one writer and a small fixed set of read connections; the statements
//! (in `partners`, `matching`, `ledger`, `usage`, `qualification`, `dashboard`) are
//! the same for both, over [`Conn`].
//!
//! Tokens are stored only as SHA-256 hashes; the plain token is shown once at creation.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, TryLockError};

use sha2::{Digest, Sha256};

use super::conn::{Conn, Dialect, PgConn};
use super::migrations;
use super::token_cache::TokenCache;
use crate::error::ServerError;

pub use super::partners::{NewPartner, Partner, TokenInfo, TokenRow, SCOPES};

pub const DB_FILE: &str = "grantmatch.sqlite";

/// Where the store lives, from `--database-url` (`GRANTMATCH_DATABASE_URL`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// An SQLite file: by default `grantmatch.sqlite` in the data directory.
    Sqlite(PathBuf),
    /// A PostgreSQL server: a `postgres://` or `postgresql://` URL (or key=value
    /// connection string), given to the driver as it is.
    Postgres(String),
}

impl Location {
    /// The store of `url` for `data_dir`: none, `sqlite:` or `sqlite://` = the data
    /// directory's file; `sqlite://PATH` = that file; `postgres://…` or
    /// `postgresql://…` = that server.
    pub fn parse(url: Option<&str>, data_dir: &Path) -> Result<Self, ServerError> {
        let url = url.map(str::trim).unwrap_or("");
        if url.is_empty() || url == "sqlite:" || url == "sqlite://" {
            return Ok(Location::Sqlite(data_dir.join(DB_FILE)));
        }
        if let Some(path) = url.strip_prefix("sqlite://") {
            return Ok(Location::Sqlite(PathBuf::from(path)));
        }
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            return Ok(Location::Postgres(url.to_string()));
        }
        Err(ServerError::Invalid(format!(
            "database URL `{}`: expected sqlite://PATH or postgres://…",
            url.split('@').next_back().unwrap_or(url)
        )))
    }

    /// The location without a password, for logs and `GET /health`.
    pub fn describe(&self) -> String {
        match self {
            Location::Sqlite(p) => format!("sqlite://{}", p.display()),
            Location::Postgres(url) => match super::tls::target(url)
                .ok()
                .and_then(|t| t.url.parse::<tokio_postgres::Config>().ok())
            {
                Some(c) => {
                    let host = c
                        .get_hosts()
                        .first()
                        .map(|h| match h {
                            tokio_postgres::config::Host::Tcp(h) => h.clone(),
                            tokio_postgres::config::Host::Unix(p) => p.display().to_string(),
                        })
                        .unwrap_or_default();
                    let port = c.get_ports().first().copied().unwrap_or(5432);
                    format!(
                        "postgres://{}@{host}:{port}/{}",
                        c.get_user().unwrap_or(""),
                        c.get_dbname().unwrap_or("")
                    )
                }
                None => "postgres://…".to_string(),
            },
        }
    }
}

/// Read connections of a database: reads never wait for the writer (SQLite: WAL), and
/// up to this many at once run in parallel.
pub const READERS: usize = 4;

/// The database: one writer connection and a small fixed set of read connections, each
/// behind its own mutex (issue #14). Every write — and every read that must see the
/// state inside a write transaction — goes through [`Db::writer`]; other reads go
/// through [`Db::reader`], on a connection of their own, so a write holding the writer
/// (the ledger flush with its fsync, a matching insert) never holds up a read: in WAL
/// mode (and in PostgreSQL) a reader sees the last committed state without waiting for
/// a writer. An in-memory database (tests) has no read connections: its reads use the
/// writer. A PostgreSQL connection the server closed is opened again on its next use.
pub struct Db {
    writer: Mutex<Conn>,
    readers: Vec<Mutex<Conn>>,
    /// Where the next reader search starts (round robin).
    next_reader: AtomicUsize,
    location: Option<Location>,
    /// Valid tokens read in the last second ([`TokenCache`]).
    pub(crate) token_cache: TokenCache,
}

fn lock(m: &Mutex<Conn>) -> MutexGuard<'_, Conn> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The rule "no SQLite call on an async worker thread", checked on every use of a
/// connection, the writer's and the readers', of both backends.
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

fn sqlite_conn(path: &Path, reader: bool) -> Result<Conn, ServerError> {
    let conn = rusqlite::Connection::open(path)?;
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    conn.set_prepared_statement_cache_capacity(64);
    if reader {
        // A read connection never writes: a write sent to it by mistake fails
        // instead of bypassing the one writer.
        conn.pragma_update(None, "query_only", "ON")?;
    } else {
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "FULL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
    }
    Ok(Conn::Sqlite(conn))
}

fn postgres_conn(url: &str, reader: bool) -> Result<Conn, ServerError> {
    let mut conn = Conn::Postgres(Box::new(PgConn::connect(url)?));
    // As SQLite's `query_only`: a write sent to a read connection fails.
    // Notices ("already exists, skipping") are no news for the log.
    conn.batch(if reader {
        "SET default_transaction_read_only = on; SET client_min_messages = warning"
    } else {
        "SET client_min_messages = warning"
    })?;
    Ok(conn)
}

/// A writing connection to `location` outside any store (tests: another process).
pub fn open_connection(location: &Location) -> Result<Conn, ServerError> {
    connect(location, false)
}

fn connect(location: &Location, reader: bool) -> Result<Conn, ServerError> {
    match location {
        Location::Sqlite(path) => sqlite_conn(path, reader),
        Location::Postgres(url) => postgres_conn(url, reader),
    }
}

impl Db {
    /// Opens (and creates or migrates) the SQLite database in `data_dir`.
    pub fn open(data_dir: &Path) -> Result<Self, ServerError> {
        Self::connect(&Location::Sqlite(data_dir.join(DB_FILE)))
    }

    /// Opens (and creates or migrates) the database at `location`.
    pub fn connect(location: &Location) -> Result<Self, ServerError> {
        if let Location::Sqlite(path) = location {
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir)
                    .map_err(|e| ServerError::Io(format!("{}: {e}", dir.display())))?;
            }
        }
        let mut writer = connect(location, false)?;
        migrate(&mut writer)?;
        // Opened after the migrations: the readers see the current schema.
        let readers = (0..READERS)
            .map(|_| connect(location, true).map(Mutex::new))
            .collect::<Result<Vec<_>, ServerError>>()?;
        Ok(Db {
            writer: Mutex::new(writer),
            readers,
            next_reader: AtomicUsize::new(0),
            location: Some(location.clone()),
            token_cache: TokenCache::new(
                super::token_cache::ttl_for(matches!(location, Location::Postgres(_))),
                super::token_cache::TOKEN_CACHE_CAPACITY,
            ),
        })
    }

    /// An in-memory SQLite database (tests): one connection, for writes and reads.
    pub fn in_memory() -> Result<Self, ServerError> {
        let conn = rusqlite::Connection::open_in_memory()?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        let mut conn = Conn::Sqlite(conn);
        migrate(&mut conn)?;
        Ok(Db {
            writer: Mutex::new(conn),
            readers: Vec::new(),
            next_reader: AtomicUsize::new(0),
            location: None,
            token_cache: TokenCache::default(),
        })
    }

    /// The same store with token lookups cached for `ttl` (tests of the cache on SQLite;
    /// see [`super::token_cache::ttl_for`] for the defaults).
    pub fn with_token_ttl(mut self, ttl: std::time::Duration) -> Self {
        self.token_cache = TokenCache::new(ttl, super::token_cache::TOKEN_CACHE_CAPACITY);
        self
    }

    /// How long this store reuses a token lookup ([`super::token_cache::ttl_for`]).
    pub fn token_ttl(&self) -> std::time::Duration {
        self.token_cache.ttl()
    }

    /// Where the database lives (`None`: in memory).
    pub fn location(&self) -> Option<&Location> {
        self.location.as_ref()
    }

    /// The SQL dialect of the database.
    pub fn dialect(&self) -> Dialect {
        match self.location {
            Some(Location::Postgres(_)) => Dialect::Postgres,
            _ => Dialect::Sqlite,
        }
    }

    /// The schema version of the database (the number of applied migrations).
    pub fn schema_version(&self) -> Result<i64, ServerError> {
        schema_version(&mut self.reader())
    }

    /// The writer connection: every write, and reads that belong to a write
    /// transaction. Inside a tokio runtime this must run in the store's blocking section
    /// (a [`crate::store::Store`] method): a database call on an async worker thread
    /// panics in debug builds and is logged (once per process) in release builds.
    pub fn writer(&self) -> MutexGuard<'_, Conn> {
        check_thread();
        self.usable(lock(&self.writer), false)
    }

    /// A read connection (`query_only` / read-only), never the writer's of a database
    /// file or server: a free one if there is one, else it waits for one (not for the
    /// writer). Each read sees the last committed state — of this process or any other.
    /// The same rule as [`Db::writer`] on async worker threads.
    pub fn reader(&self) -> MutexGuard<'_, Conn> {
        check_thread();
        let n = self.readers.len();
        if n == 0 {
            return self.usable(lock(&self.writer), false);
        }
        let start = self.next_reader.fetch_add(1, Ordering::Relaxed) % n;
        for i in 0..n {
            match self.readers[(start + i) % n].try_lock() {
                Ok(guard) => return self.usable(guard, true),
                Err(TryLockError::Poisoned(p)) => return self.usable(p.into_inner(), true),
                Err(TryLockError::WouldBlock) => {}
            }
        }
        self.usable(lock(&self.readers[start]), true)
    }

    /// `conn`, opened again first when the server closed it (PostgreSQL restarted or
    /// dropped the connection); a failed reconnect leaves it closed, and the statement
    /// then fails with the driver's error.
    fn usable<'a>(&self, mut conn: MutexGuard<'a, Conn>, reader: bool) -> MutexGuard<'a, Conn> {
        if conn.is_broken() {
            if let Some(location) = &self.location {
                match connect(location, reader) {
                    Ok(fresh) => *conn = fresh,
                    Err(e) => tracing::warn!(error = %e, "cannot reconnect to the database"),
                }
            }
        }
        conn
    }

    /// Whether the database answers (`GET /health`).
    pub fn ping(&self) -> bool {
        self.reader()
            .query_row("SELECT 1", crate::args![], |r| r.get::<i64>(0))
            .is_ok()
    }

    /// Whether reads have connections of their own (a database file or server).
    pub fn has_readers(&self) -> bool {
        !self.readers.is_empty()
    }
}

/// The number of applied migrations.
fn schema_version(conn: &mut Conn) -> Result<i64, ServerError> {
    match conn.dialect() {
        Dialect::Sqlite => conn.query_row("PRAGMA user_version", crate::args![], |r| r.get(0)),
        Dialect::Postgres => conn.query_row(
            "SELECT CAST(COALESCE(MAX(version), 0) AS BIGINT) FROM grantmatch_schema",
            crate::args![],
            |r| r.get(0),
        ),
    }
}

/// Applies the missing migrations in one transaction; returns how many. On PostgreSQL
/// an advisory lock makes replicas that start together migrate one after the other.
pub(crate) fn migrate(conn: &mut Conn) -> Result<usize, ServerError> {
    let dialect = conn.dialect();
    let mut tx = conn.transaction()?;
    let version = match dialect {
        Dialect::Sqlite => schema_version(&mut tx)?,
        Dialect::Postgres => {
            tx.query_row(
                "SELECT pg_advisory_xact_lock(1470014)",
                crate::args![],
                |_| Ok(()),
            )?;
            tx.batch("CREATE TABLE IF NOT EXISTS grantmatch_schema (version INTEGER NOT NULL)")?;
            schema_version(&mut tx)?
        }
    };
    let migrations = match dialect {
        Dialect::Sqlite => &migrations::SQLITE,
        Dialect::Postgres => &migrations::POSTGRES,
    };
    let mut applied = 0;
    for (i, m) in migrations.iter().enumerate().skip(version.max(0) as usize) {
        tx.batch(m)?;
        let v = (i + 1) as i64;
        match dialect {
            Dialect::Sqlite => tx.batch(&format!("PRAGMA user_version = {v}"))?,
            Dialect::Postgres => {
                tx.execute("DELETE FROM grantmatch_schema", crate::args![])?;
                tx.execute(
                    "INSERT INTO grantmatch_schema (version) VALUES (?1)",
                    crate::args![v],
                )?;
            }
        }
        applied += 1;
    }
    tx.commit()?;
    Ok(applied)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args;
    use crate::matching_store::completed_matching;
    use chrono::TimeZone;
    use chrono::{DateTime, Utc};
    use uuid::Uuid;

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
        let backfill = migrations::SQLITE
            .iter()
            .find(|m| m.contains("CREATE TABLE matching_quota_usage"))
            .unwrap();
        let insert = &backfill[backfill.find("INSERT INTO").unwrap()..];
        db.writer()
            .batch("DELETE FROM matching_quota_usage")
            .unwrap();
        db.writer().batch(insert).unwrap();
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
    fn database_urls() {
        let dir = Path::new("/srv/data");
        let file = Location::Sqlite(dir.join(DB_FILE));
        assert_eq!(Location::parse(None, dir).unwrap(), file);
        assert_eq!(Location::parse(Some(""), dir).unwrap(), file);
        assert_eq!(Location::parse(Some("sqlite://"), dir).unwrap(), file);
        assert_eq!(
            Location::parse(Some("sqlite:///var/gm.sqlite"), dir).unwrap(),
            Location::Sqlite("/var/gm.sqlite".into())
        );
        let pg =
            Location::parse(Some("postgres://gm:secret@db.internal:5433/grants"), dir).unwrap();
        assert_eq!(
            pg,
            Location::Postgres("postgres://gm:secret@db.internal:5433/grants".into())
        );
        // Never the password.
        assert_eq!(pg.describe(), "postgres://gm@db.internal:5433/grants");
        let err = Location::parse(Some("mysql://gm:secret@h/db"), dir).unwrap_err();
        assert!(!err.to_string().contains("secret"), "{err}");
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
                args![p.id, grant],
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
                let mut tx = conn.transaction().unwrap();
                tx.execute("UPDATE tokens SET scopes = 'usage:read'", args![])
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
    fn cached_lookups_see_another_process_revocation_within_the_ttl_and_this_process_at_once() {
        use crate::store::token_cache::TOKEN_TTL;
        let (dir, db, p, row, token) = file_db();
        // The TTL of PostgreSQL (SQLite caches nothing by default).
        let db = db.with_token_ttl(TOKEN_TTL);
        assert_eq!(db.cached_token(&token), None);
        let info = db.authenticate_cached(&token).unwrap().unwrap();
        assert_eq!(db.cached_token(&token), Some(info.clone()));
        // Another process revokes: the cache answers for less than the TTL after the
        // read, then the database's answer counts.
        let read_at = std::time::Instant::now();
        let cli = Db::open(dir.path()).unwrap();
        assert!(cli.revoke_token(row.id).unwrap());
        if read_at.elapsed() < TOKEN_TTL / 2 {
            assert_eq!(db.authenticate_cached(&token).unwrap(), Some(info));
        }
        std::thread::sleep(TOKEN_TTL.saturating_sub(read_at.elapsed()));
        assert_eq!(db.cached_token(&token), None);
        assert_eq!(db.authenticate_cached(&token).unwrap(), None);
        // A revoked token is not cached again; this process's revocation holds at once.
        assert_eq!(db.cached_token(&token), None);
        let (row, token) = db.create_token(p.id, &["grants:read".into()]).unwrap();
        assert!(db.authenticate_cached(&token).unwrap().is_some());
        assert!(db.revoke_token(row.id).unwrap());
        assert_eq!(db.cached_token(&token), None);
        assert_eq!(db.authenticate_cached(&token).unwrap(), None);
    }

    /// The CLI contract on the embedded default: a `grantmatch token revoke` (another
    /// process) holds at the server's next request, also right after a cached-path read.
    #[test]
    fn on_sqlite_another_process_revocation_holds_at_the_next_request() {
        let (dir, db, _, row, token) = file_db();
        assert!(db.authenticate_cached(&token).unwrap().is_some());
        assert_eq!(db.cached_token(&token), None);
        let cli = Db::open(dir.path()).unwrap();
        assert!(cli.revoke_token(row.id).unwrap());
        assert_eq!(db.authenticate_cached(&token).unwrap(), None);
    }

    #[test]
    fn a_read_connection_refuses_writes() {
        let (_dir, db, _, _, _) = file_db();
        let err = db
            .reader()
            .execute("DELETE FROM tokens", args![])
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
            .query_row("SELECT hash FROM tokens", args![], |r| r.get(0))
            .unwrap();
        assert_ne!(stored, token.as_bytes());
        assert_eq!(stored, hash_token(&token).to_vec());
    }
}
