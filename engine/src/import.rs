//! The import pipeline shared by every front-end: validate → embed (reusing vectors of
//! unchanged grants from the live snapshot) → re-classify derived labels by embeddings →
//! install atomically.

use std::path::Path;

use crate::catalogue::Catalogue;
use crate::classify;
use crate::embed::Embedder;
use crate::error::Result;
use crate::records::CatalogueRecords;
use crate::store::{ImportSummary, SnapshotStore};
use crate::vectors::GrantVectors;

/// What an import did.
#[derive(Debug, Clone)]
pub struct ImportReport {
    pub summary: ImportSummary,
    /// Grants embedded now (`None` without a model).
    pub embedded: Option<usize>,
    /// Grants whose derived labels were re-assigned by the embedding classifier.
    pub reclassified: usize,
}

impl ImportReport {
    /// Grants whose vectors were reused from the previous snapshot.
    pub fn reused(&self) -> usize {
        self.embedded.map_or(0, |n| self.summary.grants - n)
    }
}

/// Imports the catalogue in `source` into `data_dir`. Without an embedder the catalogue
/// is installed without embeddings (matching is then unavailable). `progress(done,
/// total)` reports the embedding of new or changed grants.
pub fn import_catalogue(
    data_dir: &Path,
    source: &Path,
    embedder: Option<&Embedder>,
    progress: &dyn Fn(usize, usize),
) -> Result<ImportReport> {
    let store = SnapshotStore::new(data_dir);
    // Validate first: a bad catalogue fails before any embedding work.
    let mut records = CatalogueRecords::read_dir(source)?;
    let mut vectors = None;
    let (mut embedded, mut reclassified) = (None, 0);
    if let Some(embedder) = embedder {
        let previous = match store.current()? {
            Some(dir) => GrantVectors::load(&dir).unwrap_or(None),
            None => None,
        };
        let cat = Catalogue::new(records.clone());
        let (v, n) = GrantVectors::build(&cat, embedder, previous.as_ref(), progress)?;
        reclassified = classify::reassign_derived(&mut records, &cat, &v);
        embedded = Some(n);
        vectors = Some(v);
    }
    let summary = store.install(records, |_, dir| match &vectors {
        Some(v) => v.save(dir),
        None => Ok(()),
    })?;
    Ok(ImportReport {
        summary,
        embedded,
        reclassified,
    })
}
