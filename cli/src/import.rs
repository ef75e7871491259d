//! `grantmatch import DIR` (the pipeline is `grantmatch_engine::import`) and
//! `grantmatch eval-classifier`.

use std::path::Path;

use anyhow::Result;
use grantmatch_engine::classify;
use grantmatch_engine::embed::{Embedder, ModelConfig};
use grantmatch_engine::import::import_catalogue;
use grantmatch_engine::records::CatalogueRecords;
use indicatif::{ProgressBar, ProgressStyle};

pub fn run(
    data_dir: &Path,
    source: &Path,
    model: &ModelConfig,
    skip_embeddings: bool,
) -> Result<()> {
    // Validate before loading the model, so a bad catalogue fails fast and clearly.
    CatalogueRecords::read_dir(source)?;
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
    let bar = ProgressBar::new(0).with_style(
        ProgressStyle::with_template("embedding {bar:40} {pos}/{len} grants ({eta} left)")
            .expect("valid template"),
    );
    let report = import_catalogue(data_dir, source, embedder.as_ref(), &|done, total| {
        bar.set_length(total as u64);
        bar.set_position(done as u64);
    })?;
    bar.finish_and_clear();
    let s = &report.summary;
    if let Some(n) = report.embedded {
        eprintln!(
            "embeddings: {n} grants embedded, {} reused; {} grants with derived labels re-classified by embeddings",
            report.reused(),
            report.reclassified
        );
    }
    eprintln!(
        "imported {} grants, {} providers, {} regions, {} grant areas, {} eligible entities, {} target groups into {}",
        s.grants,
        s.grant_providers,
        s.regions,
        s.grant_areas,
        s.eligible_entities,
        s.target_groups,
        s.snapshot.display()
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
