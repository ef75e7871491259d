//! Where the CLI finds the model: `--model-dir` / `GRANTMATCH_MODEL_DIR`, default
//! `~/.cache/grantmatch/model`; `--model-variant` / `GRANTMATCH_MODEL_VARIANT`; where the
//! store lives: `--database-url` / `GRANTMATCH_DATABASE_URL`.

use std::path::PathBuf;

use anyhow::{anyhow, Context, Result};
use grantmatch_engine::embed::{default_model_dir, ModelConfig, ModelVariant};
use grantmatch_server::db::{Db, Location};

pub fn model_config(dir: Option<PathBuf>, variant: &str) -> Result<ModelConfig> {
    let variant = ModelVariant::parse(variant)
        .ok_or_else(|| anyhow!("unknown model variant `{variant}` (fp32, int8 or q4)"))?;
    Ok(ModelConfig {
        dir: dir.unwrap_or_else(|| default_model_dir(std::env::var_os)),
        variant,
        threads: None,
    })
}

/// Where the CLI's commands keep their state: the data directory (catalogue, model
/// cache) and the store (`--database-url` / `GRANTMATCH_DATABASE_URL`; default the
/// SQLite file in the data directory).
pub struct Store {
    pub data_dir: PathBuf,
    pub location: Location,
}

impl Store {
    pub fn new(data_dir: PathBuf, database_url: Option<&str>) -> Result<Self> {
        let location = Location::parse(database_url, &data_dir)?;
        Ok(Store { data_dir, location })
    }

    /// Opens the store, applying missing migrations.
    pub fn open(&self) -> Result<Db> {
        Db::connect(&self.location)
            .with_context(|| format!("cannot open the database {}", self.location.describe()))
    }
}
