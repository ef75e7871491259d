//! Test support: the database a test runs against. With `GRANTMATCH_TEST_DATABASE_URL`
//! unset the tests use SQLite (in memory, or the file in the test's data directory);
//! set to a PostgreSQL URL (`make test` starts a throwaway server and sets it), every
//! new test database is a schema of its own on that server, so the whole suite runs
//! unchanged against PostgreSQL.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::db::{Db, Location};
use crate::error::ServerError;

/// The variable naming the PostgreSQL server of the tests.
pub const TEST_DATABASE_URL: &str = "GRANTMATCH_TEST_DATABASE_URL";

/// The PostgreSQL URL of the tests, if they run against PostgreSQL.
pub fn postgres_url() -> Option<String> {
    std::env::var(TEST_DATABASE_URL)
        .ok()
        .filter(|u| u.starts_with("postgres://") || u.starts_with("postgresql://"))
}

/// `url` with `search_path` set to `schema`.
pub fn with_schema(url: &str, schema: &str) -> String {
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}options=-csearch_path%3D{schema}")
}

/// A new, empty schema on the tests' PostgreSQL server; its URL.
pub fn fresh_schema(url: &str) -> Result<String, ServerError> {
    let schema = format!("t_{}", uuid::Uuid::new_v4().simple());
    let mut conn = super::conn::Conn::Postgres(Box::new(super::conn::PgConn::connect(url)?));
    conn.batch(&format!("CREATE SCHEMA {schema}"))?;
    Ok(with_schema(url, &schema))
}

/// The store of a test's data directory: its SQLite file, or (PostgreSQL) a schema of
/// its own — the same schema for every call with the same directory, as two processes
/// on one data directory share one database.
pub fn location(data_dir: &Path) -> Location {
    static SCHEMAS: Mutex<Option<HashMap<PathBuf, String>>> = Mutex::new(None);
    let Some(url) = postgres_url() else {
        return Location::Sqlite(data_dir.join(super::db::DB_FILE));
    };
    let mut schemas = SCHEMAS.lock().unwrap_or_else(|p| p.into_inner());
    let url = schemas
        .get_or_insert_with(HashMap::new)
        .entry(data_dir.to_path_buf())
        .or_insert_with(|| fresh_schema(&url).expect("a schema on the test database"))
        .clone();
    Location::Postgres(url)
}

impl Db {
    /// A fresh, empty database for a test: in memory, or a new schema on the tests'
    /// PostgreSQL server ([`TEST_DATABASE_URL`]).
    pub fn for_tests() -> Result<Db, ServerError> {
        match postgres_url() {
            None => Db::in_memory(),
            Some(url) => Db::connect(&Location::Postgres(fresh_schema(&url)?)),
        }
    }

    /// The database of a test's data directory (see [`location`]).
    pub fn for_tests_in(data_dir: &Path) -> Result<Db, ServerError> {
        Db::connect(&location(data_dir))
    }
}

/// A plain connection to the database of a test's data directory, as another process
/// (the CLI, a second server) has: no store, no thread rule.
pub fn other_connection(data_dir: &Path) -> Result<super::conn::Conn, ServerError> {
    super::db::open_connection(&location(data_dir))
}
