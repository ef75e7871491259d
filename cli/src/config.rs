//! Where the CLI finds the model: `--model-dir` / `GRANTMATCH_MODEL_DIR`, default
//! `~/.cache/grantmatch/model`; `--model-variant` / `GRANTMATCH_MODEL_VARIANT`.

use std::path::PathBuf;

use anyhow::{anyhow, Result};
use grantmatch_engine::embed::{default_model_dir, ModelConfig, ModelVariant};

pub fn model_config(dir: Option<PathBuf>, variant: &str) -> Result<ModelConfig> {
    let variant = ModelVariant::parse(variant)
        .ok_or_else(|| anyhow!("unknown model variant `{variant}` (fp32 or int8)"))?;
    Ok(ModelConfig {
        dir: dir.unwrap_or_else(|| default_model_dir(std::env::var_os)),
        variant,
        threads: None,
    })
}
