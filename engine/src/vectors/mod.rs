//! Vectors: the embedding model ([`embed`]), the grants' embeddings (here) and the
//! labels derived from embedding neighbours ([`classify`]).
//!
//! Embeddings of the catalogue's grants are computed at import, stored in the snapshot,
//! loaded at server start (which never embeds).
//!
//! Each grant's passage text has a SHA-256; vectors are reused from the previous
//! snapshot when model id and text hash match, so re-importing an unchanged catalogue
//! embeds nothing and a changed grant re-embeds only itself.
//!
//! Files: `embeddings.json` (model id, dimension, per-grant text hashes) and
//! `embeddings.f32` (row-major little-endian f32, one L2-normalised row per grant in
//! catalogue order).
//!
//! ## Ranking scan
//! [`GrantVectors::top_k`] finds the rows most similar to a query among those a filter
//! keeps. Small matrices (up to [`EXACT_SCAN_MAX_ROWS`] rows, which stay in the CPU
//! caches) are scanned in exact f32. Larger ones are scanned in a compact form built in
//! memory when the vectors are loaded: each row minus the mean of all rows, quantised to
//! int8 with one scale per row (a quarter of the bytes of f32; centring first keeps the
//! precision where e5 vectors differ, since they all lie in a narrow cone). The best
//! `max(2k, k + 64)` rows by that approximate score are then rescored with the exact f32
//! rows, so the cosines returned are exact and the top `k` equals the exact scan's unless an
//! int8 rounding error exceeds the gap between two neighbouring scores far down the
//! shortlist (measured in BENCHMARKS.md). Both scans run in parallel blocks (rayon),
//! with SIMD chosen at run time (AVX2 where the CPU has it; `pulp`, no unsafe code), and
//! evaluate the filter only for rows whose score would enter the current top list.

pub mod classify;
pub mod embed;

use std::cmp::Ordering;
use std::collections::HashMap;
use std::fs;
use std::path::Path;

use pulp::{Arch, Simd, WithSimd};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::catalogue::{Catalogue, Idx};
use crate::embed::{text_hash, Embedder, TextKind};
use crate::error::{Error, Result};
use crate::model::Grant;

const META_FILE: &str = "embeddings.json";
const DATA_FILE: &str = "embeddings.f32";
/// Characters of a grant's text given to the model (the tokenizer truncates at 512
/// tokens anyway; this bounds the work of tokenising very long full texts).
const MAX_PASSAGE_CHARS: usize = 2400;
const BATCH: usize = 32;

/// Up to this many rows, [`GrantVectors::top_k`] scans the exact f32 matrix (a few MB
/// that stay in the caches); above, the int8 scan plus exact rescoring is faster.
pub const EXACT_SCAN_MAX_ROWS: usize = 4096;
/// Rows per parallel task of a scan.
const BLOCK_ROWS: usize = 4096;
/// Width of the int8 code rows (dimension rounded up; padding is zero).
const CODE_LANES: usize = 32;

/// One L2-normalised vector per grant, in catalogue order, plus the compact int8 form
/// used to rank large catalogues (derived from the f32 rows; never stored).
#[derive(Debug, Clone)]
pub struct GrantVectors {
    pub model_id: String,
    pub dim: usize,
    data: Vec<f32>,
    hashes: Vec<[u8; 32]>,
    compact: Compact,
}

impl PartialEq for GrantVectors {
    fn eq(&self, other: &Self) -> bool {
        // `compact` is a function of `data`.
        self.model_id == other.model_id
            && self.dim == other.dim
            && self.data == other.data
            && self.hashes == other.hashes
    }
}

/// How [`GrantVectors::top_k_with`] scans.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Scan {
    /// Exact f32 for small matrices, int8 with exact rescoring for large ones.
    #[default]
    Auto,
    /// Every row in f32.
    Exact,
    /// int8 codes, the shortlist rescored in f32.
    Compact,
}

/// Rows minus their mean, quantised to int8 with one scale per row.
#[derive(Debug, Clone, Default)]
struct Compact {
    mean: Vec<f32>,
    /// `stride` codes per row (the dimension rounded up to [`CODE_LANES`]).
    codes: Vec<i8>,
    scales: Vec<f32>,
    stride: usize,
}

#[derive(Serialize, Deserialize)]
struct Meta {
    model_id: String,
    dim: usize,
    count: usize,
    hashes: Vec<String>,
}

/// A grant's own text: title, short description and description (at most
/// [`MAX_PASSAGE_CHARS`] characters).
pub fn grant_text(g: &Grant) -> String {
    let mut t = g.title.clone();
    for part in [&g.short_description, &g.description].into_iter().flatten() {
        if !t.contains(part.as_str()) {
            t.push('\n');
            t.push_str(part);
        }
    }
    if t.chars().count() > MAX_PASSAGE_CHARS {
        t = t.chars().take(MAX_PASSAGE_CHARS).collect();
    }
    t
}

/// The text a grant is embedded from: its own text ([`grant_text`]) and, when its labels
/// are the source's own ([`crate::facts::is_labelled`]), the German names of its grant
/// areas ("Förderbereich: Kultur, Medien & Sport"). The source labels mostly the
/// programmes it gives no teaser for, so for them the title alone would speak; areas a
/// classifier derived from the text say nothing the text does not (since session 35,
/// see the README).
pub fn passage_text(cat: &Catalogue, g: Idx) -> String {
    let mut t = grant_text(cat.grant(g));
    if crate::facts::is_labelled(cat, g) {
        let names: Vec<&str> = cat
            .grant_areas(g)
            .iter()
            .map(|&a| cat.grant_areas[a as usize].name_de.as_str())
            .collect();
        if !names.is_empty() {
            t.push_str("\nFörderbereich: ");
            t.push_str(&names.join(", "));
        }
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
        Ok(Self::assemble(
            model_id.to_string(),
            dim,
            data,
            vec![[0; 32]; rows.len()],
        ))
    }

    /// Vectors from a row-major matrix (`data.len()` a multiple of `dim`), e.g. pseudo
    /// embeddings for benchmarks: rows are normalised here, without copying the matrix.
    pub fn from_matrix(model_id: &str, dim: usize, mut data: Vec<f32>) -> Result<Self> {
        if dim == 0 || !data.len().is_multiple_of(dim) {
            return Err(Error::InvalidInput(format!(
                "a matrix of {} values does not have rows of {dim} dimensions",
                data.len()
            )));
        }
        data.par_chunks_mut(dim).for_each(|row| {
            let n = row.iter().map(|x| x * x).sum::<f32>().sqrt();
            if n > 0.0 {
                row.iter_mut().for_each(|x| *x /= n);
            }
        });
        let n = data.len() / dim;
        Ok(Self::assemble(
            model_id.to_string(),
            dim,
            data,
            vec![[0; 32]; n],
        ))
    }

    fn assemble(model_id: String, dim: usize, data: Vec<f32>, hashes: Vec<[u8; 32]>) -> Self {
        let compact = Compact::build(&data, dim);
        GrantVectors {
            model_id,
            dim,
            data,
            hashes,
            compact,
        }
    }

    /// Bytes held in memory: the f32 rows plus the int8 codes (for sizing).
    pub fn memory_bytes(&self) -> usize {
        self.data.len() * 4
            + self.compact.codes.len()
            + (self.compact.scales.len() + self.compact.mean.len()) * 4
            + self.hashes.len() * 32
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
        Self::build_from(cat, embedder, previous, passage_text, progress)
    }

    /// The vectors of the grants' own texts ([`grant_text`], without the grant areas
    /// [`passage_text`] adds), reusing the rows of `stored` where the two texts are equal
    /// (only labelled grants are embedded): for an evaluation whose truth is a grant's
    /// labels.
    pub fn own_text(cat: &Catalogue, embedder: &Embedder, stored: &GrantVectors) -> Result<Self> {
        let (v, _) = Self::build_from(
            cat,
            embedder,
            Some(stored),
            |c, g| grant_text(c.grant(g)),
            &|_, _| {},
        )?;
        Ok(v)
    }

    /// Like [`Self::build`], embedding `text` of each grant instead of its
    /// [`passage_text`] (the grants' own texts without their labels, [`grant_text`], for
    /// an evaluation that must not see a grant's labels).
    pub fn build_from(
        cat: &Catalogue,
        embedder: &Embedder,
        previous: Option<&GrantVectors>,
        text: impl Fn(&Catalogue, Idx) -> String,
        progress: &dyn Fn(usize, usize),
    ) -> Result<(Self, usize)> {
        let texts: Vec<String> = (0..cat.grants.len() as Idx).map(|g| text(cat, g)).collect();
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
            Self::assemble(embedder.model_id().to_string(), dim, data, hashes),
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
        Ok(Some(Self::assemble(meta.model_id, meta.dim, data, hashes)))
    }

    /// The `k` rows most similar to `query` (L2-normalised, `dim` values) among those
    /// for which `keep(row)` is true: `(row, cosine)`, best first, ties by row. The
    /// cosines are exact f32 dot products ([`dot`]). `keep` is called only for rows that
    /// could enter the result, in any order and from several threads.
    pub fn top_k<F>(&self, query: &[f32], k: usize, keep: F) -> Vec<(Idx, f32)>
    where
        F: Fn(Idx) -> bool + Sync,
    {
        self.top_k_with(Scan::Auto, query, k, keep)
    }

    /// [`GrantVectors::top_k`] with an explicit scan (benchmarks and tests compare them).
    pub fn top_k_with<F>(&self, scan: Scan, query: &[f32], k: usize, keep: F) -> Vec<(Idx, f32)>
    where
        F: Fn(Idx) -> bool + Sync,
    {
        assert_eq!(query.len(), self.dim, "query dimension");
        if k == 0 || self.is_empty() {
            return Vec::new();
        }
        let compact = match scan {
            Scan::Auto => self.len() > EXACT_SCAN_MAX_ROWS,
            Scan::Exact => false,
            Scan::Compact => true,
        };
        if !compact {
            let top = scan_blocks(self.len(), k, |first, rows, top| {
                Arch::new().dispatch(ExactScan {
                    data: &self.data[first * self.dim..(first + rows) * self.dim],
                    dim: self.dim,
                    query,
                    first,
                    keep: &keep,
                    top,
                })
            });
            return top.into_sorted();
        }
        // Approximate scan of the int8 codes, then exact rescoring of a shortlist.
        let c = &self.compact;
        let q = quantize_query(query, c.stride);
        let shortlist = (2 * k).max(k + 64);
        let approx = scan_blocks(self.len(), shortlist, |first, rows, top| {
            Arch::new().dispatch(CompactScan {
                codes: &c.codes[first * c.stride..(first + rows) * c.stride],
                scales: &c.scales[first..first + rows],
                stride: c.stride,
                query: &q,
                first,
                keep: &keep,
                top,
            })
        });
        let mut exact = TopK::new(k);
        for (row, _) in approx.into_sorted() {
            exact.offer(Scored {
                score: dot(self.row(row as usize), query),
                row,
            });
        }
        exact.into_sorted()
    }
}

impl Compact {
    fn build(data: &[f32], dim: usize) -> Self {
        let n = data.len().checked_div(dim).unwrap_or(0);
        if n == 0 {
            return Compact::default();
        }
        let stride = dim.div_ceil(CODE_LANES) * CODE_LANES;
        let sum = data
            .par_chunks(dim * BLOCK_ROWS)
            .map(|block| {
                let mut s = vec![0f64; dim];
                for row in block.chunks_exact(dim) {
                    for (a, &x) in s.iter_mut().zip(row) {
                        *a += x as f64;
                    }
                }
                s
            })
            .reduce(
                || vec![0f64; dim],
                |mut a, b| {
                    a.iter_mut().zip(&b).for_each(|(x, y)| *x += y);
                    a
                },
            );
        let mean: Vec<f32> = sum.iter().map(|s| (s / n as f64) as f32).collect();
        let mut codes = vec![0i8; n * stride];
        let mut scales = vec![0f32; n];
        codes
            .par_chunks_mut(stride)
            .zip(scales.par_iter_mut())
            .zip(data.par_chunks(dim))
            .with_min_len(1024)
            .for_each(|((code, scale), row)| {
                let max = row
                    .iter()
                    .zip(&mean)
                    .map(|(x, m)| (x - m).abs())
                    .fold(0f32, f32::max);
                if max > 0.0 {
                    *scale = max / 127.0;
                    for ((c, x), m) in code.iter_mut().zip(row).zip(&mean) {
                        *c = ((x - m) / *scale).round().clamp(-127.0, 127.0) as i8;
                    }
                }
            });
        Compact {
            mean,
            codes,
            scales,
            stride,
        }
    }
}

/// The query as i16 codes, `stride` long (zero padded). Its scale is dropped: it is the
/// same for every row and the ranking only compares rows. 4095 keeps the products of
/// a whole row inside an i32 for any dimension up to 4096.
fn quantize_query(query: &[f32], stride: usize) -> Vec<i16> {
    const Q_MAX: f32 = 4095.0;
    let max = query.iter().fold(0f32, |m, x| m.max(x.abs()));
    let mut q = vec![0i16; stride];
    if max > 0.0 {
        for (c, x) in q.iter_mut().zip(query) {
            *c = (x / max * Q_MAX).round() as i16;
        }
    }
    q
}

/// A scored row.
#[derive(Debug, Clone, Copy)]
struct Scored {
    score: f32,
    row: Idx,
}

/// Best first: higher score, then lower row.
fn best_first(a: &Scored, b: &Scored) -> Ordering {
    b.score.total_cmp(&a.score).then(a.row.cmp(&b.row))
}

/// The best `k` rows seen so far: a buffer of up to `4k` candidates, cut back to the
/// best `k` (a linear-time selection) whenever it fills. The bar — the `k`-th best
/// score at the last cut — only rises, and most rows of a scan fall below it.
struct TopK {
    k: usize,
    buf: Vec<Scored>,
    bar: f32,
}

impl TopK {
    fn new(k: usize) -> Self {
        TopK {
            k,
            buf: Vec::with_capacity(Self::capacity(k)),
            bar: f32::NEG_INFINITY,
        }
    }

    fn capacity(k: usize) -> usize {
        (4 * k).max(64)
    }

    /// Rows scoring below this cannot enter; equal scores may (by row).
    #[inline(always)]
    fn bar(&self) -> f32 {
        self.bar
    }

    fn offer(&mut self, s: Scored) {
        if s.score >= self.bar {
            self.buf.push(s);
            if self.buf.len() >= Self::capacity(self.k) {
                self.cut();
            }
        }
    }

    /// Keeps the best `k` and raises the bar to the worst of them.
    fn cut(&mut self) {
        if self.buf.len() > self.k {
            self.buf.select_nth_unstable_by(self.k - 1, best_first);
            self.buf.truncate(self.k);
        }
        if self.buf.len() == self.k {
            self.bar = self
                .buf
                .iter()
                .map(|s| s.score)
                .fold(f32::INFINITY, f32::min);
        }
    }

    fn merge(mut self, other: TopK) -> TopK {
        self.bar = self.bar.max(other.bar);
        for s in other.buf {
            self.offer(s);
        }
        self
    }

    fn into_sorted(mut self) -> Vec<(Idx, f32)> {
        self.buf.sort_unstable_by(best_first);
        self.buf.truncate(self.k);
        self.buf.into_iter().map(|s| (s.row, s.score)).collect()
    }
}

/// Runs `scan(first_row, rows, top)` over blocks of rows in parallel and merges the
/// per-task top lists.
fn scan_blocks<S>(n: usize, k: usize, scan: S) -> TopK
where
    S: Fn(usize, usize, &mut TopK) + Sync,
{
    if n <= BLOCK_ROWS {
        let mut top = TopK::new(k);
        scan(0, n, &mut top);
        return top;
    }
    (0..n.div_ceil(BLOCK_ROWS))
        .into_par_iter()
        .fold(
            || TopK::new(k),
            |mut top, b| {
                let first = b * BLOCK_ROWS;
                scan(first, BLOCK_ROWS.min(n - first), &mut top);
                top
            },
        )
        .reduce(|| TopK::new(k), TopK::merge)
}

/// Offers a row that passed the bar: checks the filter, then inserts.
#[inline(never)]
fn offer_row<F: Fn(Idx) -> bool>(top: &mut TopK, keep: &F, s: Scored) -> f32 {
    if keep(s.row) {
        top.offer(s);
    }
    top.bar()
}

struct ExactScan<'a, F> {
    data: &'a [f32],
    dim: usize,
    query: &'a [f32],
    first: usize,
    keep: &'a F,
    top: &'a mut TopK,
}

impl<F: Fn(Idx) -> bool> WithSimd for ExactScan<'_, F> {
    type Output = ();
    #[inline(always)]
    fn with_simd<S: Simd>(self, _simd: S) {
        let mut bar = self.top.bar();
        for (j, row) in self.data.chunks_exact(self.dim).enumerate() {
            let score = dot_lanes(row, self.query);
            if score >= bar {
                let row = (self.first + j) as Idx;
                bar = offer_row(self.top, self.keep, Scored { score, row });
            }
        }
    }
}

struct CompactScan<'a, F> {
    codes: &'a [i8],
    scales: &'a [f32],
    stride: usize,
    query: &'a [i16],
    first: usize,
    keep: &'a F,
    top: &'a mut TopK,
}

impl<F: Fn(Idx) -> bool> WithSimd for CompactScan<'_, F> {
    type Output = ();
    #[inline(always)]
    fn with_simd<S: Simd>(self, _simd: S) {
        let mut bar = self.top.bar();
        for (j, (code, &scale)) in self
            .codes
            .chunks_exact(self.stride)
            .zip(self.scales)
            .enumerate()
        {
            let score = scale * dot_codes(code, self.query) as f32;
            if score >= bar {
                let row = (self.first + j) as Idx;
                bar = offer_row(self.top, self.keep, Scored { score, row });
            }
        }
    }
}

/// int8 row · i16 query (both `CODE_LANES`-padded), in i32 lanes.
#[inline(always)]
fn dot_codes(code: &[i8], query: &[i16]) -> i32 {
    let mut acc = [0i32; CODE_LANES];
    for (c, q) in code
        .chunks_exact(CODE_LANES)
        .zip(query.chunks_exact(CODE_LANES))
    {
        for i in 0..CODE_LANES {
            acc[i] += c[i] as i32 * q[i] as i32;
        }
    }
    acc.iter().sum()
}

/// f32 dot product in 16 independent lanes (vectorisable; a fixed summation order, so
/// the result is the same wherever it is computed).
#[inline(always)]
fn dot_lanes(a: &[f32], b: &[f32]) -> f32 {
    const LANES: usize = 16;
    let mut acc = [0f32; LANES];
    let (ca, cb) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
    let tail: f32 = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in ca.zip(cb) {
        for i in 0..LANES {
            acc[i] += x[i] * y[i];
        }
    }
    acc.iter().sum::<f32>() + tail
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
    dot_lanes(a, b)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Vectors in a narrow cone, like e5's: a common direction plus noise.
    fn cone(n: usize, dim: usize, seed: u64) -> GrantVectors {
        let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let mut next = move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 40) as f32 / (1u64 << 23) as f32 - 1.0
        };
        let common: Vec<f32> = (0..dim).map(|_| next()).collect();
        let rows = (0..n)
            .map(|_| {
                let noise = normalized(&(0..dim).map(|_| next()).collect::<Vec<_>>());
                let c = normalized(&common);
                c.iter()
                    .zip(&noise)
                    .map(|(a, b)| 0.85 * a + 0.5 * b)
                    .collect()
            })
            .collect();
        GrantVectors::from_rows("test", dim, rows).unwrap()
    }

    fn brute(v: &GrantVectors, q: &[f32], k: usize, keep: impl Fn(Idx) -> bool) -> Vec<(Idx, f32)> {
        let mut all: Vec<(Idx, f32)> = (0..v.len() as Idx)
            .filter(|&g| keep(g))
            .map(|g| (g, dot(v.row(g as usize), q)))
            .collect();
        all.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        all.truncate(k);
        all
    }

    #[test]
    fn exact_scan_equals_brute_force_with_filters() {
        for (n, dim) in [(10, 8), (5000, 384), (9000, 100)] {
            let v = cone(n, dim, n as u64);
            let q = normalized(v.row(3));
            for k in [1, 25, 200] {
                let keep = |g: Idx| g % 3 != 1;
                assert_eq!(
                    v.top_k_with(Scan::Exact, &q, k, keep),
                    brute(&v, &q, k, keep)
                );
            }
            assert!(v.top_k_with(Scan::Exact, &q, 10, |_| false).is_empty());
        }
    }

    #[test]
    fn compact_scan_returns_exact_cosines_and_nearly_the_exact_top() {
        let v = cone(20_000, 384, 11);
        let mut overlap = 0;
        for i in 0..10 {
            let q = normalized(v.row(i * 7));
            let keep = |g: Idx| !g.is_multiple_of(5);
            let fast = v.top_k_with(Scan::Compact, &q, 25, keep);
            let exact = brute(&v, &q, 25, keep);
            assert_eq!(fast.len(), 25);
            for (g, c) in &fast {
                assert!(keep(*g));
                assert_eq!(*c, dot(v.row(*g as usize), &q), "exact cosines");
            }
            overlap += fast.iter().filter(|x| exact.contains(x)).count();
        }
        assert!(overlap >= 245, "top-25 overlap {overlap}/250");
    }

    #[test]
    fn ties_break_by_row() {
        let v = GrantVectors::from_rows("t", 2, vec![vec![1.0, 0.0]; 40_000]).unwrap();
        for scan in [Scan::Exact, Scan::Compact] {
            let top = v.top_k_with(scan, &[1.0, 0.0], 3, |g| g >= 5);
            assert_eq!(top.iter().map(|x| x.0).collect::<Vec<_>>(), vec![5, 6, 7]);
        }
    }
}
