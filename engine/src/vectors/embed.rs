//! Local multilingual sentence embeddings (multilingual-e5-small, 384 dimensions) with
//! fastembed over ONNX Runtime, loaded only from files on disk — never from a hub.
//!
//! The model directory is produced by `scripts/model/fetch.sh` and holds `model.onnx`
//! (and `model_int8.onnx`, `model_q4.onnx`), the tokenizer files and `libonnxruntime.so`. e5 expects the
//! prefix `query: ` for searches and `passage: ` for documents; vectors are
//! L2-normalised, so a dot product is the cosine.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

pub use crate::cache::text_hash;
use crate::cache::TextCache;
use crate::error::{Error, Result};
use fastembed::{
    InitOptionsUserDefined, Pooling, TextEmbedding, TokenizerFiles, UserDefinedEmbeddingModel,
};

/// Dimension of multilingual-e5-small.
pub const DIM: usize = 384;
const MAX_TOKENS: usize = 512;
const QUERY_CACHE_CAPACITY: usize = 4096;
/// Texts per model call.
const BATCH: usize = 16;

/// Indices of `texts` grouped into model batches: by length, at most [`BATCH`] each, and
/// a batch's longest text at most twice its shortest (plus a few characters), so
/// padding wastes little.
fn length_batches(texts: &[String]) -> Vec<Vec<usize>> {
    let len = |i: usize| texts[i].chars().count();
    let mut order: Vec<usize> = (0..texts.len()).collect();
    order.sort_by_key(|&i| len(i));
    let mut out: Vec<Vec<usize>> = Vec::new();
    for i in order {
        match out.last_mut() {
            Some(b) if b.len() < BATCH && len(i) <= 2 * len(b[0]) + 16 => b.push(i),
            _ => out.push(vec![i]),
        }
    }
    out
}

/// Which ONNX graph to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ModelVariant {
    /// Full-precision weights (dequantised from the 4-bit source): the reference.
    Fp32,
    /// Dynamic int8 quantisation: about twice as fast, cosine ≈ 0.98–0.99 to fp32.
    Int8,
    /// The source's 4-bit weight blocks kept as they are (ONNX Runtime's `MatMulNBits`
    /// and `GatherBlockQuantized`, computed in f32): the fp32 model's vectors (cosine
    /// 1.0000000) in a sixth of the memory. The default since session 16: the same
    /// figures as fp32 on every evaluation, the server at 480 instead of 880 MB.
    #[default]
    Q4,
}

impl ModelVariant {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "fp32" => Some(Self::Fp32),
            "int8" => Some(Self::Int8),
            "q4" => Some(Self::Q4),
            _ => None,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Fp32 => "fp32",
            Self::Int8 => "int8",
            Self::Q4 => "q4",
        }
    }
    fn file(self) -> &'static str {
        match self {
            Self::Fp32 => "model.onnx",
            Self::Int8 => "model_int8.onnx",
            Self::Q4 => "model_q4.onnx",
        }
    }
}

/// Where the model lives and how to run it.
#[derive(Debug, Clone)]
pub struct ModelConfig {
    pub dir: PathBuf,
    pub variant: ModelVariant,
    /// ONNX Runtime intra-op threads (`None` = all cores).
    pub threads: Option<usize>,
}

/// The model directory every front-end defaults to, from the environment variables the
/// front-end passes in (`var`, e.g. `std::env::var_os`; the engine reads no environment
/// itself): `GRANTMATCH_MODEL_DIR` when set and not empty, else
/// `$HOME/.cache/grantmatch/model`.
pub fn default_model_dir(var: impl Fn(&'static str) -> Option<OsString>) -> PathBuf {
    if let Some(d) = var("GRANTMATCH_MODEL_DIR").filter(|v| !v.is_empty()) {
        return PathBuf::from(d);
    }
    var("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("."))
        .join(".cache")
        .join("grantmatch")
        .join("model")
}

impl ModelConfig {
    /// The configuration the variables give ([`default_model_dir`] and
    /// `GRANTMATCH_MODEL_VARIANT`, `fp32` when unset or unknown), all cores.
    pub fn from_vars(var: impl Fn(&'static str) -> Option<OsString>) -> Self {
        ModelConfig {
            variant: var("GRANTMATCH_MODEL_VARIANT")
                .and_then(|v| v.to_str().and_then(ModelVariant::parse))
                .unwrap_or_default(),
            dir: default_model_dir(var),
            threads: None,
        }
    }
}

/// What text is embedded as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextKind {
    Query,
    Passage,
}

impl TextKind {
    fn prefix(self) -> &'static str {
        match self {
            Self::Query => "query: ",
            Self::Passage => "passage: ",
        }
    }
}

const TOKENIZER_FILES: [&str; 4] = [
    "tokenizer.json",
    "config.json",
    "special_tokens_map.json",
    "tokenizer_config.json",
];
const ORT_LIBRARY: &str = "libonnxruntime.so";

impl ModelConfig {
    /// Checks that every file the model needs is present; the error names the missing
    /// file and how to get it.
    pub fn check(&self) -> Result<()> {
        let mut needed = vec![self.variant.file(), ORT_LIBRARY];
        needed.extend(TOKENIZER_FILES);
        for f in needed {
            let p = self.dir.join(f);
            if !p.is_file() {
                return Err(Error::ModelFileMissing(p));
            }
        }
        Ok(())
    }

    /// Identifier of the vectors this configuration produces (cache key).
    pub fn model_id(&self) -> String {
        format!("multilingual-e5-small/{}", self.variant.as_str())
    }
}

/// Loads ONNX Runtime from `lib` once per process and returns its environment.
fn ort_environment(lib: &Path) -> Result<ort::environment::Environment> {
    static ENV: OnceLock<std::result::Result<ort::environment::Environment, String>> =
        OnceLock::new();
    ENV.get_or_init(|| {
        let builder = ort::init_from(lib)
            .map_err(|e| format!("cannot load ONNX Runtime from {}: {e}", lib.display()))?;
        builder
            .with_name("grantmatch")
            .build()
            .map_err(|e| format!("cannot initialise ONNX Runtime: {e}"))
    })
    .clone()
    .map_err(Error::Model)
}

/// A loaded embedding model with a cache of query vectors.
pub struct Embedder {
    model: Mutex<TextEmbedding>,
    model_id: String,
    query_cache: TextCache<[f32]>,
}

fn read(dir: &Path, name: &str) -> Result<Vec<u8>> {
    let p = dir.join(name);
    std::fs::read(&p).map_err(|e| Error::io(p, e))
}

impl Embedder {
    pub fn load(cfg: &ModelConfig) -> Result<Self> {
        cfg.check()?;
        let environment = ort_environment(&cfg.dir.join(ORT_LIBRARY))?;
        let tokenizer = TokenizerFiles {
            tokenizer_file: read(&cfg.dir, "tokenizer.json")?,
            config_file: read(&cfg.dir, "config.json")?,
            special_tokens_map_file: read(&cfg.dir, "special_tokens_map.json")?,
            tokenizer_config_file: read(&cfg.dir, "tokenizer_config.json")?,
        };
        let model = UserDefinedEmbeddingModel::new(read(&cfg.dir, cfg.variant.file())?, tokenizer)
            .with_pooling(Pooling::Mean);
        let mut opts = InitOptionsUserDefined::new()
            .with_environment(environment)
            .with_max_length(MAX_TOKENS);
        if let Some(t) = cfg.threads {
            opts = opts.with_intra_threads(t);
        }
        let model = TextEmbedding::try_new_from_user_defined(model, opts)
            .map_err(|e| Error::Model(format!("cannot load {}: {e}", cfg.dir.display())))?;
        Ok(Embedder {
            model: Mutex::new(model),
            model_id: cfg.model_id(),
            query_cache: TextCache::new(QUERY_CACHE_CAPACITY),
        })
    }

    pub fn model_id(&self) -> &str {
        &self.model_id
    }

    /// Embeds texts (the e5 prefix of `kind` is added here), in batches of similar
    /// length: the model pads every text of a batch to the batch's longest, so a long
    /// profile batched with its short keywords would cost as many long texts. Rows come
    /// back in the order of `texts`.
    pub fn embed(&self, texts: &[&str], kind: TextKind) -> Result<Vec<Vec<f32>>> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let prefixed: Vec<String> = texts
            .iter()
            .map(|t| format!("{}{}", kind.prefix(), t))
            .collect();
        let mut out: Vec<Vec<f32>> = vec![Vec::new(); texts.len()];
        let mut model = self.model.lock().unwrap_or_else(|p| p.into_inner());
        for batch in length_batches(&prefixed) {
            let batch_texts: Vec<&str> = batch.iter().map(|&i| prefixed[i].as_str()).collect();
            let rows = model
                .embed(&batch_texts, Some(BATCH))
                .map_err(|e| Error::Model(format!("embedding failed: {e}")))?;
            if rows.len() != batch.len() {
                return Err(Error::Model(format!(
                    "the model returned {} embeddings for {} texts",
                    rows.len(),
                    batch.len()
                )));
            }
            for (&i, row) in batch.iter().zip(rows) {
                out[i] = row;
            }
        }
        drop(model);
        for v in &out {
            if v.len() != DIM {
                return Err(Error::Model(format!(
                    "the model returned {} dimensions, expected {DIM}",
                    v.len()
                )));
            }
        }
        Ok(out)
    }

    /// Embeds one query, reusing the vector of an identical earlier query.
    pub fn embed_query(&self, text: &str) -> Result<Arc<[f32]>> {
        self.query_cache.get_or_try_insert(text, || {
            Ok(self
                .embed(&[text], TextKind::Query)?
                .pop()
                .ok_or_else(|| Error::Model("no embedding returned".into()))?
                .into())
        })
    }

    /// Embeds several queries in one batch, reusing cached vectors (all texts of one
    /// profile cost one model call).
    pub fn embed_queries(&self, texts: &[&str]) -> Result<Vec<Arc<[f32]>>> {
        let mut out: Vec<Option<Arc<[f32]>>> =
            texts.iter().map(|t| self.query_cache.get(t)).collect();
        let missing: Vec<&str> = texts
            .iter()
            .zip(&out)
            .filter(|(_, v)| v.is_none())
            .map(|(t, _)| *t)
            .collect();
        if !missing.is_empty() {
            let mut fresh = self.embed(&missing, TextKind::Query)?.into_iter();
            for (t, slot) in texts.iter().zip(out.iter_mut()) {
                if slot.is_none() {
                    let v: Arc<[f32]> = fresh
                        .next()
                        .ok_or_else(|| Error::Model("no embedding returned".into()))?
                        .into();
                    self.query_cache.insert(t, v.clone());
                    *slot = Some(v);
                }
            }
        }
        Ok(out.into_iter().flatten().collect())
    }

    /// True when this exact query text is cached (tests, diagnostics).
    pub fn is_query_cached(&self, text: &str) -> bool {
        self.query_cache.contains(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_has_its_file_and_model_id() {
        for (name, file) in [
            ("fp32", "model.onnx"),
            ("int8", "model_int8.onnx"),
            ("q4", "model_q4.onnx"),
        ] {
            let v = ModelVariant::parse(name).expect(name);
            assert_eq!(v.as_str(), name);
            assert_eq!(v.file(), file);
            let cfg = ModelConfig {
                dir: PathBuf::from("/nonexistent"),
                variant: v,
                threads: None,
            };
            assert_eq!(cfg.model_id(), format!("multilingual-e5-small/{name}"));
            // A missing file is named in the error.
            match cfg.check() {
                Err(Error::ModelFileMissing(p)) => assert!(p.ends_with(file), "{p:?}"),
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(ModelVariant::parse("int4"), None);
        assert_eq!(ModelVariant::default(), ModelVariant::Q4);
        let var =
            |k: &'static str| (k == "GRANTMATCH_MODEL_VARIANT").then(|| OsString::from("fp32"));
        assert_eq!(ModelConfig::from_vars(var).variant, ModelVariant::Fp32);
    }

    #[test]
    fn batches_group_texts_of_similar_length() {
        let texts: Vec<String> = ["a long profile text ".repeat(20), "Messe".into()]
            .into_iter()
            .chain((0..20).map(|i| format!("Stichwort {i}")))
            .collect();
        let batches = length_batches(&texts);
        // Every index once.
        let mut all: Vec<usize> = batches.concat();
        all.sort_unstable();
        assert_eq!(all, (0..texts.len()).collect::<Vec<_>>());
        // The long text is alone; no batch is over-full or mixes lengths.
        assert!(batches.contains(&vec![0]), "{batches:?}");
        for b in &batches {
            assert!(b.len() <= BATCH);
            let lens: Vec<usize> = b.iter().map(|&i| texts[i].chars().count()).collect();
            let (min, max) = (lens.iter().min().unwrap(), lens.iter().max().unwrap());
            assert!(*max <= 2 * min + 16, "{lens:?}");
        }
    }
}
