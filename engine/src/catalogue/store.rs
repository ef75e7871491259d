//! The imported catalogue on disk: immutable snapshots plus a `CURRENT` pointer.
//!
//! ```text
//! DATA_DIR/catalogue/CURRENT          name of the live snapshot (replaced by rename)
//! DATA_DIR/catalogue/snap-<ts>-<n>/   the six JSONL files as validated, search/ (tantivy)
//! ```
//!
//! An import writes a complete new snapshot next to the live one and then atomically
//! renames a new `CURRENT` into place; a failure at any earlier point leaves the live
//! catalogue untouched (the half-written snapshot is removed, or ignored if the process
//! died). Readers open whatever `CURRENT` names.

use std::fs;
use std::path::{Path, PathBuf};

use crate::catalogue::Catalogue;
use crate::error::{Error, Result};
use crate::records::CatalogueRecords;
use crate::search::SearchIndex;

const CURRENT: &str = "CURRENT";
const SEARCH_DIR: &str = "search";

/// The catalogue area of a data directory.
#[derive(Debug, Clone)]
pub struct SnapshotStore {
    root: PathBuf,
}

/// Result of a successful import.
#[derive(Debug, Clone)]
pub struct ImportSummary {
    pub snapshot: PathBuf,
    pub grants: usize,
    pub grant_providers: usize,
    pub regions: usize,
    pub grant_areas: usize,
    pub eligible_entities: usize,
    pub target_groups: usize,
}

fn fsync_dir(dir: &Path) -> Result<()> {
    fs::File::open(dir)
        .and_then(|f| f.sync_all())
        .map_err(|e| Error::io(dir, e))
}

impl SnapshotStore {
    pub fn new(data_dir: &Path) -> Self {
        SnapshotStore {
            root: data_dir.join("catalogue"),
        }
    }

    /// Directory of the live snapshot, if a catalogue was imported.
    pub fn current(&self) -> Result<Option<PathBuf>> {
        let pointer = self.root.join(CURRENT);
        match fs::read_to_string(&pointer) {
            Ok(name) => {
                let name = name.trim();
                if name.is_empty() || name.contains('/') || name.contains("..") {
                    return Err(Error::Corrupt(format!(
                        "{} is malformed",
                        pointer.display()
                    )));
                }
                Ok(Some(self.root.join(name)))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(Error::io(pointer, e)),
        }
    }

    /// Validates `source` completely and, only if it is valid, makes it the live
    /// catalogue. `prepare` may add derived files (e.g. embeddings) to the new snapshot
    /// directory before it goes live; its failure also leaves the live catalogue as it was.
    pub fn import(
        &self,
        source: &Path,
        prepare: impl FnOnce(&Catalogue, &Path) -> Result<()>,
    ) -> Result<ImportSummary> {
        let records = CatalogueRecords::read_dir(source)?;
        self.install(records, prepare)
    }

    /// Installs already validated records as the live catalogue.
    pub fn install(
        &self,
        records: CatalogueRecords,
        prepare: impl FnOnce(&Catalogue, &Path) -> Result<()>,
    ) -> Result<ImportSummary> {
        fs::create_dir_all(&self.root).map_err(|e| Error::io(&self.root, e))?;
        let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%S%.6f");
        let name = format!("snap-{stamp}-{}", std::process::id());
        let tmp = self.root.join(format!(".tmp-{name}"));
        let fin = self.root.join(&name);
        let result = (|| {
            records.write_dir(&tmp)?;
            let cat = Catalogue::new(records);
            let search_dir = tmp.join(SEARCH_DIR);
            fs::create_dir_all(&search_dir).map_err(|e| Error::io(&search_dir, e))?;
            SearchIndex::build(&cat, Some(&search_dir))?;
            prepare(&cat, &tmp)?;
            fsync_dir(&tmp)?;
            fs::rename(&tmp, &fin).map_err(|e| Error::io(&fin, e))?;
            let pointer_tmp = self.root.join(format!(".{CURRENT}.tmp"));
            fs::write(&pointer_tmp, format!("{name}\n")).map_err(|e| Error::io(&pointer_tmp, e))?;
            fs::File::open(&pointer_tmp)
                .and_then(|f| f.sync_all())
                .map_err(|e| Error::io(&pointer_tmp, e))?;
            fs::rename(&pointer_tmp, self.root.join(CURRENT))
                .map_err(|e| Error::io(self.root.join(CURRENT), e))?;
            fsync_dir(&self.root)?;
            Ok(ImportSummary {
                snapshot: fin.clone(),
                grants: cat.grants.len(),
                grant_providers: cat.grant_providers.len(),
                regions: cat.regions.len(),
                grant_areas: cat.grant_areas.len(),
                eligible_entities: cat.eligible_entities.len(),
                target_groups: cat.target_groups.len(),
            })
        })();
        match result {
            Ok(summary) => {
                self.remove_stale(&name);
                Ok(summary)
            }
            Err(e) => {
                let _ = fs::remove_dir_all(&tmp);
                if fin.exists() && self.current().ok().flatten().as_deref() != Some(fin.as_path()) {
                    let _ = fs::remove_dir_all(&fin);
                }
                Err(e)
            }
        }
    }

    /// Removes every snapshot but `keep` (best effort: open readers keep their files).
    fn remove_stale(&self, keep: &str) {
        if let Ok(entries) = fs::read_dir(&self.root) {
            for e in entries.flatten() {
                let n = e.file_name().to_string_lossy().to_string();
                if n != keep && (n.starts_with("snap-") || n.starts_with(".tmp-snap-")) {
                    let _ = fs::remove_dir_all(e.path());
                }
            }
        }
    }

    /// Loads the live catalogue and its search index.
    pub fn load(&self) -> Result<(Catalogue, SearchIndex, PathBuf)> {
        let dir = self
            .current()?
            .ok_or_else(|| Error::NoCatalogue(self.root.clone()))?;
        let records = CatalogueRecords::read_dir(&dir).map_err(|e| match e {
            Error::InvalidCatalogue(p) => Error::Corrupt(p.to_string()),
            other => other,
        })?;
        let cat = Catalogue::new(records);
        let search_dir = dir.join(SEARCH_DIR);
        // A snapshot imported by an older version: its index lacks what the current
        // analysis indexes (compound parts), so it is rebuilt in memory; a new import
        // stores it.
        let search = if SearchIndex::is_current(&search_dir) {
            SearchIndex::open(&search_dir)?
        } else {
            SearchIndex::build(&cat, None)?
        };
        Ok((cat, search, dir))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_snapshot_indexed_by_an_older_analysis_loads_with_a_current_index() {
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/catalogue");
        let data = tempfile::tempdir().unwrap();
        let store = SnapshotStore::new(data.path());
        store.import(&source, |_, _| Ok(())).unwrap();
        let search_dir = store.current().unwrap().unwrap().join(SEARCH_DIR);
        let part = vec!["effizienz".to_string()];
        let fresh = store.load().unwrap().1.search_any(&part).unwrap();
        assert!(!fresh.is_empty());
        // As an index written before compounds were split: no analysis marker.
        std::fs::remove_file(search_dir.join("grantmatch-analysis")).unwrap();
        assert!(!SearchIndex::is_current(&search_dir));
        let rebuilt = store.load().unwrap().1.search_any(&part).unwrap();
        assert_eq!(fresh, rebuilt);
    }
}
