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

/// A stage of the import, for progress reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Reading and validating every record (done = total = grants when finished).
    Validation,
    /// Embedding new or changed grants (done of total).
    Embedding,
    /// Grant facts and labels of derived grants (done = total = reassigned grants).
    Classification,
    /// Writing the snapshot and its full-text index (done = total = grants).
    Index,
}

impl Stage {
    pub fn name(self) -> &'static str {
        match self {
            Stage::Validation => "validation",
            Stage::Embedding => "embedding",
            Stage::Classification => "classification",
            Stage::Index => "index",
        }
    }
}

/// What an import did.
#[derive(Debug, Clone)]
pub struct ImportReport {
    pub summary: ImportSummary,
    /// Grants embedded now (`None` without a model).
    pub embedded: Option<usize>,
    /// Grants whose derived labels were re-assigned by the embedding classifier.
    pub reclassified: usize,
    /// Why the previous snapshot's vectors could not be reused (every grant was then
    /// embedded afresh); `None` when they were read or there were none.
    pub previous_vectors_error: Option<String>,
}

impl ImportReport {
    /// Grants whose vectors were reused from the previous snapshot.
    pub fn reused(&self) -> usize {
        self.embedded.map_or(0, |n| self.summary.grants - n)
    }
}

/// Imports the catalogue in `source` into `data_dir`. Without an embedder the catalogue
/// is installed without embeddings (matching is then unavailable). `progress(stage,
/// done, total)` reports each stage: validation, the embedding of new or changed grants,
/// classification and the index.
pub fn import_catalogue(
    data_dir: &Path,
    source: &Path,
    embedder: Option<&Embedder>,
    progress: &dyn Fn(Stage, usize, usize),
) -> Result<ImportReport> {
    let store = SnapshotStore::new(data_dir);
    // Validate first: a bad catalogue fails before any embedding work.
    progress(Stage::Validation, 0, 0);
    let mut records = CatalogueRecords::read_dir(source)?;
    let n = records.grants.len();
    progress(Stage::Validation, n, n);
    let mut vectors = None;
    let (mut embedded, mut reclassified) = (None, 0);
    let mut previous_vectors_error = None;
    if let Some(embedder) = embedder {
        // Unreadable vectors of the previous snapshot cost time, not data: every grant
        // is embedded again, and the report says why.
        let previous = match store.current()?.map(|dir| GrantVectors::load(&dir)) {
            Some(Ok(v)) => v,
            Some(Err(e)) => {
                previous_vectors_error = Some(e.to_string());
                None
            }
            None => None,
        };
        let cat = Catalogue::new(records.clone());
        let (v, e) = GrantVectors::build(&cat, embedder, previous.as_ref(), &|done, total| {
            progress(Stage::Embedding, done, total)
        })?;
        progress(Stage::Classification, 0, 0);
        reclassified = classify::reassign_derived(&mut records, &cat, &v);
        progress(Stage::Classification, reclassified, reclassified);
        embedded = Some(e);
        vectors = Some(v);
    }
    progress(Stage::Index, 0, n);
    let summary = store.install(records, |_, dir| match &vectors {
        Some(v) => v.save(dir),
        None => Ok(()),
    })?;
    progress(Stage::Index, n, n);
    Ok(ImportReport {
        summary,
        embedded,
        reclassified,
        previous_vectors_error,
    })
}
