//! `grantmatch import DIR`: validate, embed (reusing unchanged vectors) and install.

use std::path::Path;

use anyhow::Result;
use grantmatch_engine::embed::{Embedder, ModelConfig};
use grantmatch_engine::store::SnapshotStore;
use grantmatch_engine::GrantVectors;
use indicatif::{ProgressBar, ProgressStyle};

pub fn run(
    data_dir: &Path,
    source: &Path,
    model: &ModelConfig,
    skip_embeddings: bool,
) -> Result<()> {
    let store = SnapshotStore::new(data_dir);
    let embedder = if skip_embeddings {
        eprintln!("warning: --skip-embeddings: matching answers 503 until the catalogue is imported with the model");
        None
    } else {
        match Embedder::load(model) {
            Ok(e) => Some(e),
            Err(e) => {
                eprintln!("warning: importing without embeddings, matching will answer 503: {e}");
                None
            }
        }
    };
    let previous = match store.current()? {
        Some(dir) => GrantVectors::load(&dir).unwrap_or(None),
        None => None,
    };
    let mut embedded = 0;
    let summary = store.import(source, |cat, dir| {
        let Some(embedder) = &embedder else {
            return Ok(());
        };
        let bar = ProgressBar::new(0).with_style(
            ProgressStyle::with_template("embedding {bar:40} {pos}/{len} grants ({eta} left)")
                .expect("valid template"),
        );
        let (vectors, n) =
            GrantVectors::build(cat, embedder, previous.as_ref(), &|done, total| {
                bar.set_length(total as u64);
                bar.set_position(done as u64);
            })?;
        bar.finish_and_clear();
        embedded = n;
        vectors.save(dir)
    })?;
    eprintln!(
        "imported {} grants, {} providers, {} regions, {} grant areas, {} eligible entities, {} target groups into {}",
        summary.grants,
        summary.grant_providers,
        summary.regions,
        summary.grant_areas,
        summary.eligible_entities,
        summary.target_groups,
        summary.snapshot.display()
    );
    if embedder.is_some() {
        eprintln!(
            "embeddings: {embedded} grants embedded, {} reused",
            summary.grants - embedded
        );
    }
    Ok(())
}
