//! Catalogue pickup without a restart (issue #14).
//!
//! `grantmatch import` writes a complete new snapshot into `DATA_DIR/catalogue/` and
//! renames a new `CURRENT` pointer into place (`grantmatch_engine::store`). A running
//! server compares that pointer with the snapshot it serves — every [`DEFAULT_POLL`]
//! (`serve --catalogue-poll SECS`; 0 = never) and at once on SIGHUP — and, when it names
//! another snapshot, loads it on the blocking pool and swaps it in
//! ([`crate::AppState::replace_engine`]):
//!
//! - requests that started on the old snapshot finish on it (each request takes the
//!   engine once; an authenticated one uses the engine its partner scope was resolved
//!   against), later requests see the new one;
//! - the embedding model is not reloaded (it belongs to the matcher, not the snapshot);
//! - the partners' resolved scopes are dropped and resolved again against the new
//!   catalogue (no database read); the qualification assessor notices the new snapshot
//!   and re-assesses the grants whose records changed;
//! - a snapshot that fails to load is logged once and not retried until `CURRENT`
//!   names another one (or SIGHUP asks again): the server keeps serving the old one.
//!
//! With PostgreSQL, replicas need not share a data directory: the database records the
//! current catalogue (`crate::store::catalogue`: `grantmatch import` publishes it), and
//! before each check a server installs the recorded snapshot into its own data
//! directory when its `CURRENT` names another one; the check then serves it. A
//! recorded snapshot that cannot be installed is logged once and not retried until the
//! record changes (or SIGHUP).
//!
//! `GET /health` reports the snapshot served in `catalogue.snapshot` and its content
//! fingerprint in `catalogue.fingerprint`.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use grantmatch_engine::store::SnapshotStore;
use grantmatch_engine::Engine;

use crate::error::ServerError;
use crate::AppState;

/// How often a server checks the data directory's `CURRENT` by default.
pub const DEFAULT_POLL: Duration = Duration::from_secs(5);

/// Where a server picks new snapshots up from.
#[derive(Debug, Clone)]
pub struct Watch {
    pub data_dir: PathBuf,
    /// `None`: only on SIGHUP.
    pub poll: Option<Duration>,
    /// Follow the catalogue the database records as current (PostgreSQL).
    pub follow_database: bool,
}

/// The name of the snapshot directory `engine` was loaded from (`None`: built in memory).
pub fn snapshot_name(engine: &Engine) -> Option<String> {
    engine
        .snapshot_dir()
        .and_then(|d| d.file_name())
        .map(|n| n.to_string_lossy().into_owned())
}

/// What [`reload`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reload {
    /// `CURRENT` names the snapshot served (or none).
    Unchanged,
    /// `CURRENT` names a snapshot whose load failed before; not tried again.
    Skipped(PathBuf),
    /// The snapshot of this name is served now.
    Replaced(String),
}

/// Serves the data directory's current snapshot if it is not the one served (blocking:
/// run it on the blocking pool). `failed` is the snapshot whose load failed last: it is
/// not loaded again unless `retry` (SIGHUP); a failure sets it.
pub fn reload(
    state: &AppState,
    data_dir: &Path,
    failed: &mut Option<PathBuf>,
    retry: bool,
) -> Result<Reload, ServerError> {
    let Some(current) = SnapshotStore::new(data_dir).current()? else {
        return Ok(Reload::Unchanged);
    };
    if state.engine().snapshot_dir() == Some(current.as_path()) {
        return Ok(Reload::Unchanged);
    }
    if !retry && failed.as_deref() == Some(current.as_path()) {
        return Ok(Reload::Skipped(current));
    }
    let engine = match Engine::open(data_dir) {
        Ok(e) => e,
        Err(e) => {
            *failed = Some(current);
            return Err(e.into());
        }
    };
    // Another import may have replaced CURRENT meanwhile: whatever was loaded is newer
    // than what is served, unless it is the same snapshot.
    if engine.snapshot_dir() == state.engine().snapshot_dir() {
        return Ok(Reload::Unchanged);
    }
    let name = snapshot_name(&engine).unwrap_or_default();
    let grants = engine.catalogue.grants.len();
    let old = state.replace_engine(Arc::new(engine));
    *failed = None;
    tracing::info!(
        snapshot = %name,
        grants,
        previous = snapshot_name(&old).unwrap_or_default(),
        "catalogue snapshot picked up"
    );
    Ok(Reload::Replaced(name))
}

/// Waits for the next check: the poll interval, or SIGHUP (true).
async fn next_check(
    poll: Option<Duration>,
    #[cfg(unix)] hup: &mut Option<tokio::signal::unix::Signal>,
) -> bool {
    let tick = async {
        match poll {
            Some(d) => tokio::time::sleep(d).await,
            None => std::future::pending::<()>().await,
        }
    };
    #[cfg(unix)]
    let signal = async {
        match hup {
            Some(s) => {
                s.recv().await;
            }
            None => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let signal = std::future::pending::<()>();
    tokio::select! {
        _ = tick => false,
        _ = signal => true,
    }
}

/// Installs the catalogue the database records as current into the data directory when
/// it is not the data directory's current one (the reload that follows serves it).
async fn follow_database(state: &AppState, data_dir: &Path, failed: &mut Option<String>) {
    use crate::store::catalogue::DataDirSync;
    match state
        .store
        .sync_catalogue(data_dir.to_path_buf(), failed.clone())
        .await
    {
        Ok(DataDirSync::Failed { fingerprint, error }) => {
            tracing::error!(
                %fingerprint,
                %error,
                "cannot install the catalogue recorded as current in the database; still serving the previous one"
            );
            *failed = Some(fingerprint);
        }
        Ok(DataDirSync::Installed(_)) => *failed = None,
        Ok(_) => {}
        Err(e) => tracing::warn!(
            error = %e,
            "cannot read the catalogue recorded in the database; checking again later"
        ),
    }
}

/// Checks for new snapshots in the background while the server runs (nothing without
/// [`crate::AppState::with_catalogue_watch`]).
pub fn spawn_watch(state: Arc<AppState>) {
    let Some(watch) = state.catalogue_watch.clone() else {
        return;
    };
    let poll = watch.poll.filter(|d| !d.is_zero());
    tokio::spawn(async move {
        #[cfg(unix)]
        let mut hup = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup())
            .map_err(|e| tracing::warn!(error = %e, "cannot listen for SIGHUP"))
            .ok();
        let mut failed: Option<PathBuf> = None;
        let mut failed_install: Option<String> = None;
        loop {
            #[cfg(unix)]
            let retry = next_check(poll, &mut hup).await;
            #[cfg(not(unix))]
            let retry = next_check(poll).await;
            if retry {
                tracing::info!("SIGHUP: checking the data directory for a new catalogue snapshot");
                failed_install = None;
            }
            if watch.follow_database {
                follow_database(&state, &watch.data_dir, &mut failed_install).await;
            }
            let (st, dir, mut f) = (state.clone(), watch.data_dir.clone(), failed.clone());
            let done = tokio::task::spawn_blocking(move || {
                let r = reload(&st, &dir, &mut f, retry);
                (r, f)
            })
            .await;
            match done {
                Ok((r, f)) => {
                    failed = f;
                    if let Err(e) = r {
                        tracing::error!(
                            error = %e,
                            "cannot load the new catalogue snapshot; still serving the previous one"
                        );
                    }
                }
                Err(e) => tracing::error!(error = %e, "catalogue reload panicked"),
            }
            state.partners.retain_engine(&state.engine());
        }
    });
}
