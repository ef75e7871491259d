//! Embeddings of the catalogue's grants: computed at import, stored in the snapshot,
//! loaded at server start (which never embeds).
//!
//! Each grant's passage text has a SHA-256; vectors are reused from the previous
//! snapshot when model id and text hash match, so re-importing an unchanged catalogue
//! embeds nothing and a changed grant re-embeds only itself.
//!
//! Files: `embeddings.json` (model id, dimension, per-grant text hashes) and
//! `embeddings.f32` (row-major little-endian f32, one L2-normalised row per grant in
//! catalogue order).

use std::collections::HashMap;
use std::fs;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::catalogue::Catalogue;
use crate::embed::{text_hash, Embedder, TextKind};
use crate::error::{Error, Result};
use crate::model::Grant;

const META_FILE: &str = "embeddings.json";
const DATA_FILE: &str = "embeddings.f32";
/// Characters of a grant's text given to the model (the tokenizer truncates at 512
/// tokens anyway; this bounds the work of tokenising very long full texts).
const MAX_PASSAGE_CHARS: usize = 2400;
const BATCH: usize = 32;

/// One L2-normalised vector per grant, in catalogue order.
#[derive(Debug, Clone, PartialEq)]
pub struct GrantVectors {
    pub model_id: String,
    pub dim: usize,
    data: Vec<f32>,
    hashes: Vec<[u8; 32]>,
}

#[derive(Serialize, Deserialize)]
struct Meta {
    model_id: String,
    dim: usize,
    count: usize,
    hashes: Vec<String>,
}

/// The text a grant is embedded from: title, short description and description.
pub fn passage_text(g: &Grant) -> String {
    let mut t = g.title.clone();
    for part in [&g.short_description, &g.description].into_iter().flatten() {
        if !t.contains(part.as_str()) {
            t.push_str("\n");
            t.push_str(part);
        }
    }
    if t.chars().count() > MAX_PASSAGE_CHARS {
        t = t.chars().take(MAX_PASSAGE_CHARS).collect();
    }
    t
}

impl GrantVectors {
    /// Vectors from rows computed elsewhere (benchmarks, tests): normalised here.
    pub fn from_rows(model_id: &str, dim: usize, rows: Vec<Vec<f32>>) -> Result<Self> {
        let mut data = Vec::with_capacity(rows.len() * dim);
        for r in &rows {
            if r.len() != dim {
                return Err(Error::InvalidInput(format!(
                    "vector of {} dimensions, expected {dim}",
                    r.len()
                )));
            }
            data.extend(normalized(r));
        }
        Ok(GrantVectors {
            model_id: model_id.to_string(),
            dim,
            hashes: vec![[0; 32]; rows.len()],
            data,
        })
    }

    pub fn len(&self) -> usize {
        self.hashes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.hashes.is_empty()
    }

    pub fn row(&self, i: usize) -> &[f32] {
        &self.data[i * self.dim..(i + 1) * self.dim]
    }

    /// The whole matrix, row-major.
    pub fn as_slice(&self) -> &[f32] {
        &self.data
    }

    /// Embeds the catalogue, reusing `previous` vectors where the text is unchanged.
    /// Returns the vectors and how many grants were embedded now.
    pub fn build(
        cat: &Catalogue,
        embedder: &Embedder,
        previous: Option<&GrantVectors>,
        progress: &dyn Fn(usize, usize),
    ) -> Result<(Self, usize)> {
        let texts: Vec<String> = cat.grants.iter().map(passage_text).collect();
        let hashes: Vec<[u8; 32]> = texts.iter().map(|t| text_hash(t)).collect();
        let reusable: HashMap<[u8; 32], usize> = previous
            .filter(|p| p.model_id == embedder.model_id())
            .map(|p| p.hashes.iter().enumerate().map(|(i, h)| (*h, i)).collect())
            .unwrap_or_default();
        let dim = crate::embed::DIM;
        let mut data = vec![0f32; texts.len() * dim];
        let mut todo = Vec::new();
        for (i, h) in hashes.iter().enumerate() {
            match (reusable.get(h), previous) {
                (Some(&j), Some(p)) => data[i * dim..(i + 1) * dim].copy_from_slice(p.row(j)),
                _ => todo.push(i),
            }
        }
        let total = todo.len();
        progress(0, total);
        for (n, chunk) in todo.chunks(BATCH).enumerate() {
            let batch: Vec<&str> = chunk.iter().map(|&i| texts[i].as_str()).collect();
            let vecs = embedder.embed(&batch, TextKind::Passage)?;
            for (&i, v) in chunk.iter().zip(vecs) {
                data[i * dim..(i + 1) * dim].copy_from_slice(&normalized(&v));
            }
            progress(((n + 1) * BATCH).min(total), total);
        }
        Ok((
            GrantVectors {
                model_id: embedder.model_id().to_string(),
                dim,
                data,
                hashes,
            },
            total,
        ))
    }

    pub fn save(&self, dir: &Path) -> Result<()> {
        let meta = Meta {
            model_id: self.model_id.clone(),
            dim: self.dim,
            count: self.len(),
            hashes: self.hashes.iter().map(hex::encode).collect(),
        };
        let meta_path = dir.join(META_FILE);
        fs::write(
            &meta_path,
            serde_json::to_vec(&meta).map_err(|e| Error::Corrupt(e.to_string()))?,
        )
        .map_err(|e| Error::io(&meta_path, e))?;
        let mut bytes = Vec::with_capacity(self.data.len() * 4);
        for x in &self.data {
            bytes.extend_from_slice(&x.to_le_bytes());
        }
        let data_path = dir.join(DATA_FILE);
        fs::write(&data_path, bytes).map_err(|e| Error::io(&data_path, e))?;
        Ok(())
    }

    /// Loads the vectors of a snapshot; `None` when the snapshot has none.
    pub fn load(dir: &Path) -> Result<Option<Self>> {
        let meta_path = dir.join(META_FILE);
        let meta: Meta = match fs::read(&meta_path) {
            Ok(b) => serde_json::from_slice(&b)
                .map_err(|e| Error::Corrupt(format!("{}: {e}", meta_path.display())))?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io(meta_path, e)),
        };
        let data_path = dir.join(DATA_FILE);
        let bytes = fs::read(&data_path).map_err(|e| Error::io(&data_path, e))?;
        if bytes.len() != meta.count * meta.dim * 4 || meta.hashes.len() != meta.count {
            return Err(Error::Corrupt(format!(
                "{} does not match {}",
                data_path.display(),
                meta_path.display()
            )));
        }
        let data = bytes
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        let hashes = meta
            .hashes
            .iter()
            .map(|h| {
                let mut out = [0u8; 32];
                hex::decode_to_slice(h, &mut out)
                    .map_err(|e| Error::Corrupt(format!("{}: {e}", meta_path.display())))?;
                Ok(out)
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Some(GrantVectors {
            model_id: meta.model_id,
            dim: meta.dim,
            data,
            hashes,
        }))
    }
}

/// `v / |v|` (zero vectors stay zero).
pub fn normalized(v: &[f32]) -> Vec<f32> {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if n > 0.0 {
        v.iter().map(|x| x / n).collect()
    } else {
        v.to_vec()
    }
}

/// Dot product (the cosine of normalised vectors).
#[inline]
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}
