//! `grantmatch import DIR` (the pipeline is `grantmatch_engine::import`) and
//! `grantmatch eval-classifier`.

use std::path::Path;

use anyhow::{Context, Result};
use grantmatch_engine::embed::{Embedder, ModelConfig};
use grantmatch_engine::import::{import_catalogue, Stage};
use grantmatch_engine::records::CatalogueRecords;
use grantmatch_engine::vectors::GrantVectors;
use grantmatch_engine::{classify, facts};
use grantmatch_server::db::Location;
use grantmatch_server::store::catalogue::publish_data_dir;
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;

pub fn run(
    store: &crate::config::Store,
    source: &Path,
    model: &ModelConfig,
    skip_embeddings: bool,
) -> Result<()> {
    let data_dir = &store.data_dir;
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
    let report = import_catalogue(data_dir, source, embedder.as_ref(), &progress())?;

    let s = &report.summary;
    if let Some(e) = &report.previous_vectors_error {
        eprintln!("warning: the previous snapshot's embeddings could not be read ({e}); every grant was embedded again");
    }
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
    publish(store)
}

/// With PostgreSQL, records the new snapshot as the database's current catalogue, with
/// its files: every server on that database serves it within its poll interval, also
/// one with its own data directory (`grantmatch_server::store::catalogue`). The
/// embedded SQLite lives in the data directory, whose `CURRENT` is the record.
fn publish(store: &crate::config::Store) -> Result<()> {
    if !matches!(store.location, Location::Postgres(_)) {
        return Ok(());
    }
    let db = store.open()?;
    let published = publish_data_dir(&db, &store.data_dir, chrono::Utc::now()).with_context(|| {
        format!(
            "the catalogue was imported into {}, but it could not be recorded as current in the database {}: servers on that database keep their catalogue",
            store.data_dir.display(),
            store.location.describe()
        )
    })?;
    if let Some((fingerprint, changed)) = published {
        eprintln!(
            "catalogue {fingerprint} {} current in the database {}",
            if changed { "recorded as" } else { "already" },
            store.location.describe()
        );
    }
    Ok(())
}

/// Progress of the import stages: bars on a terminal (stderr), otherwise one log line
/// with the counts when a stage ends.
fn progress() -> impl Fn(Stage, usize, usize) {
    let terminal = std::io::stderr().is_terminal();
    let bar = std::sync::Mutex::new(None::<(Stage, ProgressBar)>);
    move |stage, done, total| {
        let mut bar = bar.lock().unwrap_or_else(|e| e.into_inner());
        if !terminal {
            if done == total && total > 0 {
                eprintln!("import: {}: {done} of {total} grants", stage.name());
            }
            return;
        }
        if bar.as_ref().is_none_or(|(s, _)| *s != stage) {
            if let Some((_, b)) = bar.take() {
                b.finish_and_clear();
            }
            let b = ProgressBar::new(total as u64).with_style(
                ProgressStyle::with_template(
                    "{prefix:>14} {bar:40} {pos}/{len} grants ({eta} left)",
                )
                .expect("valid template"),
            );
            b.set_prefix(stage.name());
            *bar = Some((stage, b));
        }
        if let Some((_, b)) = bar.as_ref() {
            b.set_length(total as u64);
            b.set_position(done as u64);
            if done == total && total > 0 {
                b.finish_and_clear();
                eprintln!("{}: {done} grants", stage.name());
            }
        }
    }
}

/// Leave-one-out accuracy of the grant facts and derived labels on the labelled
/// grants (all, and the held-out half of the fixed split), then accuracy on the
/// programmes labelled by reading (`DIR/grant_facts.json`, `DIR/grant_facts_v2.json`).
pub fn eval_classifier(
    data_dir: &Path,
    model: &ModelConfig,
    dir: &Path,
    misses: bool,
) -> Result<()> {
    let engine = grantmatch_engine::Engine::open(data_dir)?;
    let cat = &engine.catalogue;
    let vectors = engine.vectors().ok_or_else(|| {
        anyhow::anyhow!("the catalogue has no embeddings: import it with the model")
    })?;
    // A labelled grant's stored vector embeds its grant areas; the leave-one-out looks
    // each one up by the vector of its own text (only those texts are embedded now).
    let embedder = Embedder::load(model)?;
    let queries = GrantVectors::own_text(cat, &embedder, vectors)?;
    let predictions = classify::leave_one_out_predictions(cat, vectors, &queries);
    println!(
        "# leave-one-out over labelled grants (texts + k={} nearest labelled, threshold {})",
        classify::K,
        classify::THRESHOLD
    );
    println!("family\tsplit\tprecision\trecall\tF1\tgrants");
    for (split, keep) in [
        ("all", &(|_| true) as &dyn Fn(u32) -> bool),
        ("heldout", &|g: u32| {
            classify::is_heldout(&cat.grant(g).slug)
        }),
    ] {
        for (family, s) in classify::score(cat, &predictions, keep) {
            println!(
                "{}\t{split}\t{:.3}\t{:.3}\t{:.3}\t{}",
                family.name(),
                s.precision,
                s.recall,
                s.f1,
                s.grants
            );
        }
    }
    for file in LABELLED_FACTS {
        report_labelled(cat, &dir.join(file), misses)?;
    }
    Ok(())
}

/// The files of programmes labelled by reading: the first split into halves by slug, the
/// second (labelled in session 17, never tuned on) held out as a whole.
const LABELLED_FACTS: [&str; 2] = ["grant_facts.json", "grant_facts_v2.json"];

/// Accuracy of the grant facts on one file of programmes labelled by reading, overall
/// and per half; with `misses`, the tuning half's misses.
fn report_labelled(
    cat: &grantmatch_engine::catalogue::Catalogue,
    path: &Path,
    misses: bool,
) -> Result<()> {
    let labels = match std::fs::read_to_string(path) {
        Ok(text) => facts::eval::parse(&text)?,
        Err(e) => {
            eprintln!(
                "{}: {e}; skipping the programmes labelled by reading",
                path.display()
            );
            return Ok(());
        }
    };
    let r = facts::eval::evaluate(cat, cat.all_facts(), &labels)?;
    println!(
        "\n# {} programmes without source labels, labelled by reading ({})",
        r.programmes,
        path.display()
    );
    println!("measure\tprecision\trecall\tF1\tgrants");
    for (name, s) in [
        ("applicant types", r.applicants),
        ("applicant types (read from text)", r.applicants_from_text),
        ("grant areas (top level)", r.areas),
    ] {
        println!(
            "{name}\t{:.3}\t{:.3}\t{:.3}\t{}",
            s.precision, s.recall, s.f1, s.grants
        );
    }
    for (name, s) in &r.per_type {
        println!("  {name}\t{:.3}\t{:.3}\t{:.3}", s.precision, s.recall, s.f1);
    }
    let n = r.programmes.max(1) as f64;
    println!(
        "applicants read from text: {} of {}\nprogramme kind accuracy: {:.3}\nSME-only accuracy: {:.3}\nnon-profit-only accuracy: {:.3}",
        r.text_coverage,
        r.programmes,
        r.kind_correct as f64 / n,
        r.sme_correct as f64 / n,
        r.non_profit_correct as f64 / n
    );
    // The same split as the leave-one-out figures: report each half apart.
    println!("half\tprogrammes\tapplicant types F1\tkind accuracy");
    for (half, heldout) in [("tune", false), ("heldout", true)] {
        let part: Vec<_> = labels
            .iter()
            .filter(|l| l.is_heldout() == heldout)
            .cloned()
            .collect();
        if part.is_empty() {
            continue;
        }
        let h = facts::eval::evaluate(cat, cat.all_facts(), &part)?;
        println!(
            "{half}\t{}\t{:.3}\t{:.3}",
            h.programmes,
            h.applicants.f1,
            h.kind_correct as f64 / h.programmes.max(1) as f64
        );
        // Only the tuning half's misses: the held-out half is not read while tuning.
        if misses && !heldout {
            for m in &h.applicant_misses {
                let names = |v: &[facts::ApplicantType]| {
                    v.iter()
                        .map(|t| t.label_de())
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                println!(
                    "  applicant miss {}: labelled [{}], read [{}] from {:?}",
                    m.slug,
                    names(&m.label),
                    names(&m.read),
                    m.evidence.as_deref().unwrap_or("-")
                );
            }
            for m in &h.kind_misses {
                println!(
                    "  kind miss {}: labelled {}, read {} from {:?}",
                    m.slug,
                    m.label,
                    m.read.as_str(),
                    m.sentence.as_deref().unwrap_or("-")
                );
            }
        }
    }
    Ok(())
}
