//! The catalogue recorded as current in the database (issue #14), for replicas that
//! share a PostgreSQL database but not a data directory.
//!
//! `grantmatch import` publishes the new snapshot's data files ([`SnapshotFiles`]: the
//! validated records and the embeddings, not the search index) and records its
//! fingerprint as current, in one transaction; the files of older snapshots are removed
//! with it. A server compares that record with the snapshot it serves and, when they
//! differ, installs the recorded snapshot into its own data directory
//! ([`sync_data_dir`]); the catalogue watch then serves it (`crate::catalogue`).
//!
//! On the embedded SQLite default the database lives in the data directory, whose
//! `CURRENT` already is the record: nothing is published there (see the README's
//! "Catalogue pickup").

use std::path::Path;

use chrono::{DateTime, Utc};
use grantmatch_engine::store::{snapshot_fingerprint, SnapshotFiles, SnapshotStore};

use crate::args;
use crate::db::Db;
use crate::error::ServerError;

/// The row that names the current catalogue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CurrentCatalogue {
    /// The snapshot's content fingerprint.
    pub fingerprint: String,
    pub recorded_at: DateTime<Utc>,
}

/// What [`sync_data_dir`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DataDirSync {
    /// The database records no catalogue.
    NoRecord,
    /// The data directory's current snapshot is the recorded one.
    UpToDate,
    /// The recorded snapshot failed to install before (`failed`); not tried again.
    Skipped(String),
    /// The record was replaced while its files were read; the next check sees the new one.
    Replaced,
    /// The recorded snapshot (this fingerprint) is now the data directory's current one.
    Installed(String),
    /// The recorded snapshot (this fingerprint) could not be installed: its files are
    /// not a valid catalogue, or the data directory cannot take them.
    Failed { fingerprint: String, error: String },
}

impl Db {
    /// The catalogue recorded as current, if any.
    pub fn current_catalogue(&self) -> Result<Option<CurrentCatalogue>, ServerError> {
        self.reader().query_opt(
            "SELECT fingerprint, recorded_at FROM catalogue_current WHERE id = 1",
            args![],
            |r| {
                Ok(CurrentCatalogue {
                    fingerprint: r.get(0)?,
                    recorded_at: r.get(1)?,
                })
            },
        )
    }

    /// The data files of a published snapshot (`None`: not, or no longer, published).
    pub fn catalogue_files(&self, fingerprint: &str) -> Result<Option<SnapshotFiles>, ServerError> {
        let files = self.reader().query_map(
            "SELECT name, data FROM catalogue_snapshot_files WHERE fingerprint = ?1 ORDER BY name",
            args![fingerprint],
            |r| Ok((r.get::<String>(0)?, r.get::<Vec<u8>>(1)?)),
        )?;
        Ok((!files.is_empty()).then(|| SnapshotFiles {
            fingerprint: fingerprint.to_string(),
            files,
        }))
    }

    /// Records `snapshot` as the current catalogue, with its files, in one transaction;
    /// other snapshots' files are removed. False when it already was the current one
    /// (nothing is written then).
    pub fn publish_catalogue(
        &self,
        snapshot: &SnapshotFiles,
        now: DateTime<Utc>,
    ) -> Result<bool, ServerError> {
        let mut conn = self.writer();
        let mut tx = conn.transaction()?;
        let current = tx.query_opt(
            "SELECT fingerprint FROM catalogue_current WHERE id = 1",
            args![],
            |r| r.get::<String>(0),
        )?;
        if current.as_deref() == Some(snapshot.fingerprint.as_str()) {
            return Ok(false);
        }
        tx.execute("DELETE FROM catalogue_snapshot_files", args![])?;
        for (name, data) in &snapshot.files {
            tx.execute(
                "INSERT INTO catalogue_snapshot_files (fingerprint, name, data) VALUES (?1, ?2, ?3)",
                args![&snapshot.fingerprint, name, data.clone()],
            )?;
        }
        tx.execute(
            "INSERT INTO catalogue_current (id, fingerprint, recorded_at) VALUES (1, ?1, ?2) \
             ON CONFLICT (id) DO UPDATE SET fingerprint = excluded.fingerprint, \
             recorded_at = excluded.recorded_at",
            args![&snapshot.fingerprint, now],
        )?;
        tx.commit()?;
        Ok(true)
    }
}

/// Brings `data_dir` to the catalogue the database records as current: when its
/// current snapshot has another fingerprint, the recorded snapshot's files are read
/// from the database and installed (validated, indexed) as the data directory's new
/// current snapshot. `failed` is a fingerprint whose install failed before: it is not
/// tried again. A database error is an `Err` (try again later); a snapshot that
/// cannot be installed is [`DataDirSync::Failed`]. Blocking (the database and the file system): off async workers.
pub fn sync_data_dir(
    db: &Db,
    data_dir: &Path,
    failed: Option<&str>,
) -> Result<DataDirSync, ServerError> {
    let Some(record) = db.current_catalogue()? else {
        return Ok(DataDirSync::NoRecord);
    };
    let store = SnapshotStore::new(data_dir);
    if let Some(dir) = store.current()? {
        if snapshot_fingerprint(&dir)? == record.fingerprint {
            return Ok(DataDirSync::UpToDate);
        }
    }
    if failed == Some(record.fingerprint.as_str()) {
        return Ok(DataDirSync::Skipped(record.fingerprint));
    }
    let Some(files) = db.catalogue_files(&record.fingerprint)? else {
        return Ok(DataDirSync::Replaced);
    };
    let summary = match store.install_files(&files) {
        Ok(s) => s,
        Err(e) => {
            return Ok(DataDirSync::Failed {
                fingerprint: record.fingerprint,
                error: e.to_string(),
            })
        }
    };
    tracing::info!(
        fingerprint = %record.fingerprint,
        grants = summary.grants,
        snapshot = %summary.snapshot.display(),
        "installed the catalogue recorded as current in the database"
    );
    Ok(DataDirSync::Installed(record.fingerprint))
}

/// Publishes the data directory's current snapshot as the database's current catalogue
/// (after an import, or by the first server on a database without a record). Returns
/// the fingerprint and whether the record changed; `None` without a catalogue.
pub fn publish_data_dir(
    db: &Db,
    data_dir: &Path,
    now: DateTime<Utc>,
) -> Result<Option<(String, bool)>, ServerError> {
    let Some(dir) = SnapshotStore::new(data_dir).current()? else {
        return Ok(None);
    };
    let files = SnapshotFiles::read(&dir)?;
    let changed = db.publish_catalogue(&files, now)?;
    Ok(Some((files.fingerprint, changed)))
}
