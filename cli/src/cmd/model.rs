//! `grantmatch model fetch` and `grantmatch model check`.

use std::path::PathBuf;

use anyhow::{bail, Result};
use grantmatch_engine::embed::ModelConfig;

/// Builds the model assets with `scripts/model/fetch.sh` (from the repository root).
pub fn fetch(model: &ModelConfig) -> Result<()> {
    let script = PathBuf::from("scripts/model/fetch.sh");
    if !script.is_file() {
        bail!("run `grantmatch model fetch` from the repository root (scripts/model/fetch.sh not found)");
    }
    let status = std::process::Command::new("bash")
        .arg(&script)
        .env("GRANTMATCH_MODEL_DIR", &model.dir)
        .status()?;
    if !status.success() {
        bail!("scripts/model/fetch.sh failed");
    }
    Ok(())
}

/// Loads the model and embeds one sentence.
pub fn check(model: &ModelConfig) -> Result<()> {
    let started = std::time::Instant::now();
    let embedder = grantmatch_engine::embed::Embedder::load(model)?;
    let loaded = started.elapsed();
    let v = embedder.embed(
        &["Förderung für gemeinnützige Vereine in Sachsen"],
        grantmatch_engine::embed::TextKind::Query,
    )?;
    println!(
        "model ok: {} in {} ({} dimensions, loaded in {:.2} s)",
        embedder.model_id(),
        model.dir.display(),
        v[0].len(),
        loaded.as_secs_f64()
    );
    Ok(())
}
