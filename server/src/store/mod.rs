//! All persistence of the service — every SQL statement — lives in this module:
//! partners and tokens (`partners`), matching requests with their stored results and
//! the billed matching's transaction (`matching`), the usage ledger (`ledger`), usage
//! statistics and the quota e-mail outbox (`usage`), partner qualification
//! configuration and results (`qualification`), the dashboard's users and sessions
//! (`dashboard`), the catalogue recorded as current for replicas (`catalogue`), the schema (`migrations`) and the connections (`db`, `conn`, `sql`).
//! The modules are also reachable at their old paths (`crate::db`,
//! `crate::matching_store`, `crate::ledger`).
//!
//! Two backends, one set of statements: the embedded SQLite file in the data directory
//! (default) and PostgreSQL (`--database-url postgres://…`, for several replicas). The
//! statements are written once over [`conn::Conn`]; where the dialects differ (the
//! migrations, a lock in a test) both versions stand next to each other.
//!
//! Connections: one writer and a small fixed set of read connections
//! ([`db::READERS`], `query_only`), each behind its own mutex; SQLite runs in WAL mode,
//! so a read never waits for a write — the ledger flush's fsync holds the writer only.
//!
//! Two faces. [`Store`] (`api`) is the async API the server uses: a cloneable handle
//! (the database and the ledger's buffer) whose `async fn`s are the operations of the
//! server — authenticate a token, bill a matching request (with the ranking, one
//! transaction), read a stored request, quotas, usage, the outbox, qualification, the
//! dashboard's sessions — each one unit of work, one hop to tokio's blocking pool,
//! with typed results and [`ServerError`]. [`db::Db`] is the synchronous store under
//! it, which the CLI (no runtime) calls directly and [`Store::db`] hands out for
//! code off the runtime (tests' own set-up).
//!
//! Rule: no SQLite call (nor PostgreSQL call) runs on an async worker thread. The
//! server's state holds a [`Store`], not a `Db`; the one way from async code to a
//! connection is a `Store` method, which runs its work inside the store's private
//! blocking section (`blocking`, on tokio's blocking pool). `Db::writer` and
//! `Db::reader` panic in debug builds when they are called on a thread inside a tokio
//! runtime outside that section (release builds log one warning). Code without a
//! runtime (the CLI) calls the database directly.

pub mod api;
pub mod catalogue;
pub mod conn;
pub mod dashboard;
pub mod db;
pub mod ledger;
pub mod matching;
pub mod migrations;
pub mod partners;
pub mod qualification;
pub mod sql;
#[doc(hidden)]
pub mod testing;
pub mod tls;
pub mod token_cache;
pub mod usage;

use std::cell::Cell;

pub use api::{MatchingBill, Overview, SignIn, Store, TokenPage};

use crate::error::ServerError;

// The rule "no SQLite call on an async worker thread": every database call of the
// server runs inside `blocking` (on tokio's blocking pool), and `Db::writer` and `Db::reader` check it.
thread_local! {
    /// Set while the current thread runs a closure of [`blocking`].
    static IN_BLOCKING_SECTION: Cell<bool> = const { Cell::new(false) };
}

/// Resets the flag when the closure ends (also when it panics): blocking-pool threads
/// are reused for other work.
struct SectionGuard {
    previous: bool,
}

impl Drop for SectionGuard {
    fn drop(&mut self) {
        IN_BLOCKING_SECTION.with(|f| f.set(self.previous));
    }
}

/// Runs `f` with the "inside the store's blocking section" flag set on this thread.
fn in_section<T>(f: impl FnOnce() -> T) -> T {
    let _guard = SectionGuard {
        previous: IN_BLOCKING_SECTION.with(|f| f.replace(true)),
    };
    f()
}

/// Runs `f` — database work, possibly with other blocking work around it — on tokio's
/// blocking pool, marked as the store's blocking section so that `Db::writer` and
/// `Db::reader` accept it. Private to the store: async code reaches the database through
/// [`Store`]. The result is that of `tokio::task::spawn_blocking(f).await` (a panic of
/// `f` is a `JoinError`).
async fn blocking<T, F>(f: F) -> Result<T, tokio::task::JoinError>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    tokio::task::spawn_blocking(move || in_section(f)).await
}

/// [`blocking`] with a failed task (a panic) as [`ServerError::Task`] naming `what`.
async fn blocking_task<T, F>(what: &str, f: F) -> Result<T, ServerError>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    blocking(f)
        .await
        .map_err(|e| ServerError::Task(format!("{what}: {e}")))
}

/// Whether a database call on this thread breaks the rule: the thread is inside a tokio
/// runtime (an async worker, or a `block_on` thread) and not in [`blocking`]. Threads
/// without a runtime (the CLI, plain unit tests) may call the database directly.
pub(crate) fn on_async_worker() -> bool {
    !IN_BLOCKING_SECTION.with(Cell::get) && tokio::runtime::Handle::try_current().is_ok()
}

/// The message of the guard in `Db::writer` and `Db::reader`.
pub(crate) const ASYNC_WORKER_MESSAGE: &str = "SQLite call on an async worker thread: \
     reach the database through grantmatch_server::store::Store (rule: no SQLite call \
     runs on an async worker thread)";

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::db::Db;
    use super::*;

    fn select_one(db: &Db) -> i64 {
        db.writer()
            .query_row("SELECT 1", crate::args![], |r| r.get(0))
            .expect("SELECT 1")
    }

    #[test]
    fn without_a_runtime_the_database_is_called_directly() {
        // The CLI and plain unit tests: no runtime, no check.
        let db = Db::in_memory().unwrap();
        assert!(!on_async_worker());
        assert_eq!(select_one(&db), 1);
    }

    #[cfg(debug_assertions)]
    #[tokio::test]
    #[should_panic(expected = "SQLite call on an async worker thread")]
    async fn a_database_call_on_the_runtime_thread_panics() {
        let db = Db::in_memory().unwrap();
        select_one(&db);
    }

    #[cfg(debug_assertions)]
    #[tokio::test]
    #[should_panic(expected = "SQLite call on an async worker thread")]
    async fn a_read_connection_on_the_runtime_thread_panics() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path()).unwrap();
        let _ = db.partners();
    }

    #[tokio::test]
    async fn through_blocking_a_read_connection_is_used() {
        let dir = tempfile::tempdir().unwrap();
        let db = Arc::new(Db::open(dir.path()).unwrap());
        let d = db.clone();
        let n = blocking(move || d.partners().unwrap().len()).await.unwrap();
        assert_eq!(n, 0);
    }

    /// The message of a task that panicked with a formatted message.
    #[cfg(debug_assertions)]
    fn panic_message(err: tokio::task::JoinError) -> String {
        err.into_panic()
            .downcast_ref::<String>()
            .cloned()
            .unwrap_or_default()
    }

    #[cfg(debug_assertions)]
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_database_call_on_an_async_worker_panics() {
        let db = Arc::new(Db::in_memory().unwrap());
        let err = tokio::spawn(async move { select_one(&db) })
            .await
            .expect_err("the guard panics");
        let message = panic_message(err);
        assert!(
            message.contains("no SQLite call runs on an async worker thread"),
            "{message}"
        );
    }

    /// Even on tokio's blocking pool, a database call outside the store's section (a
    /// plain `spawn_blocking` over `Store::db()`) is refused: the only way is `Store`.
    #[cfg(debug_assertions)]
    #[tokio::test]
    async fn a_database_call_on_the_blocking_pool_outside_the_store_panics() {
        let store = Store::from(Db::in_memory().unwrap());
        let db = store.db().clone();
        let err = tokio::task::spawn_blocking(move || select_one(&db))
            .await
            .expect_err("the guard panics");
        let message = panic_message(err);
        assert!(
            message.contains("grantmatch_server::store::Store"),
            "{message}"
        );
        // Through the store's API the same database answers.
        assert!(store.ping().await);
    }

    #[tokio::test]
    async fn through_blocking_the_database_is_called() {
        let db = Arc::new(Db::in_memory().unwrap());
        let d = db.clone();
        assert_eq!(blocking(move || select_one(&d)).await.unwrap(), 1);
        let n = blocking_task("select", move || select_one(&db))
            .await
            .unwrap();
        assert_eq!(n, 1);
        // The flag belongs to the blocking section only, never to the async thread.
        assert!(on_async_worker());
    }

    #[test]
    fn the_flag_is_reset_after_the_section_also_on_a_panic() {
        assert!(!IN_BLOCKING_SECTION.with(Cell::get));
        assert!(in_section(|| IN_BLOCKING_SECTION.with(Cell::get)));
        assert!(!IN_BLOCKING_SECTION.with(Cell::get));
        let r = std::panic::catch_unwind(|| in_section(|| panic!("inside")));
        assert!(r.is_err());
        assert!(!IN_BLOCKING_SECTION.with(Cell::get));
    }
}
