//! The imported catalogue on disk: immutable snapshots plus a `CURRENT` pointer.
//!
//! ```text
//! DATA_DIR/catalogue/CURRENT          name of the live snapshot (replaced by rename)
//! DATA_DIR/catalogue/snap-<ts>-<n>/   the six JSONL files as validated, the embeddings,
//!                                     FINGERPRINT, search/ (tantivy)
//! ```
//!
//! An import writes a complete new snapshot next to the live one and then atomically
//! renames a new `CURRENT` into place; a failure at any earlier point leaves the live
//! catalogue untouched (the half-written snapshot is removed, or ignored if the process
//! died). Readers open whatever `CURRENT` names.
//!
//! A snapshot's data files (everything but the search index, which is derived) are its
//! content: [`SnapshotFiles`] carries them with their SHA-256 `FINGERPRINT`, so another
//! data directory can install the same snapshot without importing it again
//! ([`SnapshotStore::install_files`]; the server publishes them through its database).

use std::fs;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::catalogue::Catalogue;
use crate::error::{Error, Result};
use crate::records::CatalogueRecords;
use crate::search::SearchIndex;

const CURRENT: &str = "CURRENT";
const SEARCH_DIR: &str = "search";
const FINGERPRINT: &str = "FINGERPRINT";

/// A snapshot's content: its data files by name (the search index is left out: it is
/// rebuilt from them) and the fingerprint over them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotFiles {
    /// SHA-256 over the files, in name order (hex).
    pub fingerprint: String,
    pub files: Vec<(String, Vec<u8>)>,
}

impl SnapshotFiles {
    /// Reads the data files of the snapshot in `dir`.
    pub fn read(dir: &Path) -> Result<Self> {
        let mut files = Vec::new();
        for entry in fs::read_dir(dir).map_err(|e| Error::io(dir, e))? {
            let entry = entry.map_err(|e| Error::io(dir, e))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let kind = entry.file_type().map_err(|e| Error::io(entry.path(), e))?;
            if kind.is_file() && name != FINGERPRINT {
                let data = fs::read(entry.path()).map_err(|e| Error::io(entry.path(), e))?;
                files.push((name, data));
            }
        }
        Ok(Self::from_files(files))
    }

    /// Files by name, with their fingerprint.
    pub fn from_files(mut files: Vec<(String, Vec<u8>)>) -> Self {
        files.sort();
        SnapshotFiles {
            fingerprint: fingerprint(&files),
            files,
        }
    }

    /// Bytes of all files.
    pub fn size(&self) -> usize {
        self.files.iter().map(|(_, d)| d.len()).sum()
    }
}

/// SHA-256 over name-ordered files: each file's name, a zero byte, its length (u64,
/// little-endian) and its bytes.
fn fingerprint(files: &[(String, Vec<u8>)]) -> String {
    let mut sorted: Vec<&(String, Vec<u8>)> = files.iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    let mut hash = Sha256::new();
    for (name, data) in sorted {
        hash.update(name.as_bytes());
        hash.update([0]);
        hash.update((data.len() as u64).to_le_bytes());
        hash.update(data);
    }
    hex::encode(hash.finalize())
}

/// The fingerprint of the snapshot in `dir`: its `FINGERPRINT` file, or computed from
/// its files (a snapshot imported before fingerprints were written).
pub fn snapshot_fingerprint(dir: &Path) -> Result<String> {
    match fs::read_to_string(dir.join(FINGERPRINT)) {
        Ok(f) if !f.trim().is_empty() => Ok(f.trim().to_string()),
        Ok(_) => Ok(SnapshotFiles::read(dir)?.fingerprint),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Ok(SnapshotFiles::read(dir)?.fingerprint)
        }
        Err(e) => Err(Error::io(dir.join(FINGERPRINT), e)),
    }
}

/// The catalogue area of a data directory.
#[derive(Debug, Clone)]
pub struct SnapshotStore {
    root: PathBuf,
}

/// Result of a successful import.
#[derive(Debug, Clone)]
pub struct ImportSummary {
    pub snapshot: PathBuf,
    /// The snapshot's content fingerprint ([`SnapshotFiles::fingerprint`]).
    pub fingerprint: String,
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
        self.commit(|tmp| {
            records.write_dir(tmp)?;
            let cat = Catalogue::new(records);
            prepare(&cat, tmp)?;
            Ok(cat)
        })
    }

    /// Installs a snapshot read elsewhere ([`SnapshotFiles::read`]) as the live
    /// catalogue: the files must match their fingerprint and hold a valid catalogue;
    /// the search index is built here.
    pub fn install_files(&self, snapshot: &SnapshotFiles) -> Result<ImportSummary> {
        if fingerprint(&snapshot.files) != snapshot.fingerprint {
            return Err(Error::Corrupt(format!(
                "the files of catalogue snapshot {} do not match its fingerprint",
                snapshot.fingerprint
            )));
        }
        self.commit(|tmp| {
            fs::create_dir_all(tmp).map_err(|e| Error::io(tmp, e))?;
            for (name, data) in &snapshot.files {
                let plain = !name.is_empty()
                    && !name.starts_with('.')
                    && !name.contains(['/', '\\'])
                    && name != FINGERPRINT
                    && name != SEARCH_DIR;
                if !plain {
                    return Err(Error::Corrupt(format!(
                        "catalogue snapshot {} holds a file named `{name}`",
                        snapshot.fingerprint
                    )));
                }
                let path = tmp.join(name);
                fs::write(&path, data).map_err(|e| Error::io(&path, e))?;
            }
            let records = CatalogueRecords::read_dir(tmp)?;
            Ok(Catalogue::new(records))
        })
    }

    /// Makes a new snapshot directory live: `fill` writes its data files into the
    /// temporary directory and returns the catalogue they hold; the fingerprint and
    /// the search index follow, then the directory and `CURRENT` are renamed into place.
    fn commit(&self, fill: impl FnOnce(&Path) -> Result<Catalogue>) -> Result<ImportSummary> {
        fs::create_dir_all(&self.root).map_err(|e| Error::io(&self.root, e))?;
        let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%S%.6f");
        let name = format!("snap-{stamp}-{}", std::process::id());
        let tmp = self.root.join(format!(".tmp-{name}"));
        let fin = self.root.join(&name);
        let result = (|| {
            let cat = fill(&tmp)?;
            let fingerprint = SnapshotFiles::read(&tmp)?.fingerprint;
            let fp_path = tmp.join(FINGERPRINT);
            fs::write(&fp_path, format!("{fingerprint}\n")).map_err(|e| Error::io(&fp_path, e))?;
            let search_dir = tmp.join(SEARCH_DIR);
            fs::create_dir_all(&search_dir).map_err(|e| Error::io(&search_dir, e))?;
            SearchIndex::build(&cat, Some(&search_dir))?;
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
                fingerprint,
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

    #[test]
    fn a_snapshot_installed_from_its_files_is_the_same_catalogue() {
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/test-catalogues/tiny");
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let imported = SnapshotStore::new(a.path())
            .import(&source, |_, _| Ok(()))
            .unwrap();
        let dir = SnapshotStore::new(a.path()).current().unwrap().unwrap();
        let files = SnapshotFiles::read(&dir).unwrap();
        assert_eq!(files.fingerprint, imported.fingerprint);
        assert_eq!(snapshot_fingerprint(&dir).unwrap(), imported.fingerprint);
        assert!(files.files.iter().any(|(n, _)| n == "grants.jsonl"));
        assert!(files.files.iter().all(|(n, _)| n != FINGERPRINT));

        let other = SnapshotStore::new(b.path());
        let installed = other.install_files(&files).unwrap();
        assert_eq!(installed.fingerprint, imported.fingerprint);
        assert_eq!(installed.grants, imported.grants);
        let (cat, search, _) = other.load().unwrap();
        let (cat_a, search_a, _) = SnapshotStore::new(a.path()).load().unwrap();
        assert_eq!(cat.grants.len(), cat_a.grants.len());
        let term = vec!["testprogramm".to_string()];
        let found = search.search_any(&term).unwrap();
        assert_eq!(found.len(), cat.grants.len());
        assert_eq!(found, search_a.search_any(&term).unwrap());

        // Files that do not match their fingerprint, or name a path, are refused and
        // leave the live snapshot as it was.
        let mut changed = files.clone();
        changed.files[0].1.push(b'\n');
        assert!(matches!(
            other.install_files(&changed),
            Err(Error::Corrupt(_))
        ));
        let mut escaping = files.clone();
        escaping.files.push(("../x".into(), vec![]));
        escaping.fingerprint = fingerprint(&escaping.files);
        assert!(matches!(
            other.install_files(&escaping),
            Err(Error::Corrupt(_))
        ));
        let live = other.current().unwrap().unwrap();
        assert_eq!(snapshot_fingerprint(&live).unwrap(), imported.fingerprint);
    }
}
