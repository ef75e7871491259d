//! `grantmatch import DIR`: validate, embed (reusing unchanged vectors), re-classify
//! derived labels by embeddings, and install atomically.

use std::path::Path;

use anyhow::Result;
use grantmatch_engine::classify;
use grantmatch_engine::embed::{Embedder, ModelConfig};
use grantmatch_engine::records::CatalogueRecords;
use grantmatch_engine::store::SnapshotStore;
use grantmatch_engine::{Catalogue, GrantVectors};
use indicatif::{ProgressBar, ProgressStyle};

pub fn run(
    data_dir: &Path,
    source: &Path,
    model: &ModelConfig,
    skip_embeddings: bool,
) -> Result<()> {
    let store = SnapshotStore::new(data_dir);
    // Validate first: a bad catalogue fails before any embedding work.
    let mut records = CatalogueRecords::read_dir(source)?;
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
    let mut vectors = None;
    if let Some(embedder) = &embedder {
        let previous = match store.current()? {
            Some(dir) => GrantVectors::load(&dir).unwrap_or(None),
            None => None,
        };
        let cat = Catalogue::new(records.clone());
        let bar = ProgressBar::new(0).with_style(
            ProgressStyle::with_template("embedding {bar:40} {pos}/{len} grants ({eta} left)")
                .expect("valid template"),
        );
        let (v, embedded) =
            GrantVectors::build(&cat, embedder, previous.as_ref(), &|done, total| {
                bar.set_length(total as u64);
                bar.set_position(done as u64);
            })?;
        bar.finish_and_clear();
        let reassigned = classify::reassign_derived(&mut records, &cat, &v);
        eprintln!(
            "embeddings: {embedded} grants embedded, {} reused; {reassigned} grants with derived labels re-classified by embeddings",
            cat.grants.len() - embedded
        );
        vectors = Some(v);
    }
    let summary = store.install(records, |_, dir| match &vectors {
        Some(v) => v.save(dir),
        None => Ok(()),
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
    Ok(())
}

/// Leave-one-out accuracy of the embedding classifier on the labelled grants.
pub fn eval_classifier(data_dir: &Path) -> Result<()> {
    let engine = grantmatch_engine::Engine::open(data_dir)?;
    let vectors = engine.vectors().ok_or_else(|| {
        anyhow::anyhow!("the catalogue has no embeddings: import it with the model")
    })?;
    println!(
        "family\tprecision\trecall\tF1\t(leave-one-out over labelled grants, k={}, threshold={})",
        classify::K,
        classify::THRESHOLD
    );
    for (family, s) in classify::leave_one_out(&engine.catalogue, vectors) {
        println!(
            "{}\t{:.3}\t{:.3}\t{:.3}\t({} grants)",
            family.name(),
            s.precision,
            s.recall,
            s.f1,
            s.grants
        );
    }
    Ok(())
}
