//! `grantmatch fixtures generate`: a deterministic synthetic catalogue in the import
//! format for scale tests and benchmarks (see `grantmatch_engine::synthetic`).
//!
//! With `--pseudo-embeddings` the directory also gets `embeddings.json` +
//! `embeddings.f32` (the snapshot layout of `grantmatch_engine::vectors`, model id
//! `pseudo/<seed>`) and `pseudo-query.f32` (the benchmark query vector, 384
//! little-endian f32), for tools outside the engine such as the NumPy comparison in
//! `benches/ranking_vs_numpy.py`. `import` reads only the six JSONL files: it never
//! takes pseudo-embeddings for real ones (import a synthetic catalogue with
//! `--skip-embeddings`, or with the model).

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use grantmatch_engine::records::CatalogueRecords;
use grantmatch_engine::synthetic;

#[derive(Subcommand)]
pub enum FixturesCmd {
    /// Write a synthetic catalogue (grant slugs `synthetic-<seed>-<n>`, providers of type
    /// other_type) built on the vocabularies of a base catalogue. Prints the directory.
    Generate(GenerateArgs),
}

#[derive(Args)]
pub struct GenerateArgs {
    /// Number of grants.
    #[arg(long)]
    count: usize,
    /// Seed: the same seed, count and base give the same files.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Output directory (created; must be empty unless --force).
    #[arg(long)]
    out: PathBuf,
    /// Catalogue whose regions, grant areas, eligible entities and target groups are
    /// used (and whose grants lend their link structure).
    #[arg(long, default_value = "fixtures/catalogue")]
    base: PathBuf,
    /// Also write deterministic pseudo-embeddings and the benchmark query vector.
    #[arg(long)]
    pseudo_embeddings: bool,
    /// Write into a non-empty directory (replacing the catalogue files there).
    #[arg(long)]
    force: bool,
}

pub fn run(cmd: FixturesCmd) -> Result<()> {
    match cmd {
        FixturesCmd::Generate(a) => generate(&a),
    }
}

fn same_dir(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

fn generate(a: &GenerateArgs) -> Result<()> {
    if same_dir(&a.out, &a.base) || same_dir(&a.out, Path::new("fixtures/catalogue")) {
        bail!(
            "{} is a real catalogue: synthetic grants are never mixed into it; choose another --out",
            a.out.display()
        );
    }
    if a.out.is_dir()
        && !a.force
        && std::fs::read_dir(&a.out)
            .with_context(|| format!("cannot read {}", a.out.display()))?
            .next()
            .is_some()
    {
        bail!(
            "{} is not empty (use --force to overwrite the catalogue files there)",
            a.out.display()
        );
    }
    let started = std::time::Instant::now();
    let base = CatalogueRecords::read_dir(&a.base)
        .with_context(|| format!("base catalogue {}", a.base.display()))?;
    let records = synthetic::generate(&base, a.count, a.seed)?;
    records.write_dir(&a.out)?;
    if a.pseudo_embeddings {
        let vectors = synthetic::pseudo_vectors(&records.grants, &records.grant_areas, a.seed)?;
        vectors.save(&a.out)?;
        let query = synthetic::bench_query(&records.grant_areas, a.seed);
        let bytes: Vec<u8> = query.iter().flat_map(|x| x.to_le_bytes()).collect();
        let path = a.out.join("pseudo-query.f32");
        std::fs::write(&path, bytes).with_context(|| format!("cannot write {}", path.display()))?;
    }
    eprintln!(
        "wrote {} synthetic grants ({} providers, seed {}){} to {} in {:.1} s",
        records.grants.len(),
        records.grant_providers.len(),
        a.seed,
        if a.pseudo_embeddings {
            " with pseudo-embeddings"
        } else {
            ""
        },
        a.out.display(),
        started.elapsed().as_secs_f64()
    );
    println!("{}", a.out.display());
    Ok(())
}
