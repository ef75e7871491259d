//! # grantmatch (Python)
//!
//! The PyO3 module `grantmatch._grantmatch`, re-exported by the Python package
//! `grantmatch`: a thin typed layer over `grantmatch-engine` for data scientists who
//! load the catalogue, run matchings with other weights, read why a grant ranked where
//! it did, and measure quality on labelled profiles — without the server.
//!
//! Inputs are converted first, then the engine runs with the GIL released
//! (`Python::detach`); the engine's rayon pool does the parallel work. Engine errors
//! become the exceptions of [`errors`]. Built with maturin (`pyproject.toml` enables the
//! `extension-module` feature, which stays out of the default features so that
//! `cargo test --workspace` links).

use std::path::PathBuf;

use grantmatch_engine::embed::Embedder;
use pyo3::prelude::*;
use pyo3::types::PyDict;

mod convert;
mod engine;
mod errors;
mod eval;
mod options;
mod qualify;

use engine::Settings;

/// Validates a catalogue directory (the import format: `regions.jsonl`,
/// `grant_areas.jsonl`, `eligible_entities.jsonl`, `target_groups.jsonl`,
/// `grant_providers.jsonl`, `grants.jsonl`), embeds its grants and makes it the live
/// catalogue of `data_dir` — what `grantmatch import` does, step by step: validate, embed
/// (vectors of grants whose text did not change since the previous import with the same
/// model are reused, so re-importing is fast), re-classify the derived labels of grants
/// by their embeddings, install atomically. On any error the live catalogue stays as it
/// was.
///
/// Args:
///     source_dir: the catalogue directory.
///     data_dir: the data directory (default `$GRANTMATCH_DATA_DIR`, else `./data`).
///     model_dir: the model assets (default `$GRANTMATCH_MODEL_DIR`, else
///         `~/.cache/grantmatch/model`).
///     model_variant: `"q4"`, `"fp32"` or `"int8"` (default `$GRANTMATCH_MODEL_VARIANT`, else
///         `"q4"`); the server and `Engine.match` need the variant they load.
///     embeddings: `False` imports without embeddings (listing works, matching does
///         not).
///     threads: ONNX Runtime threads (default: all cores).
///
/// Returns:
///     A dict: `snapshot`, the record counts (`grants`, `grant_providers`, `regions`,
///     `grant_areas`, `eligible_entities`, `target_groups`), `embedded` / `reused`
///     (grants embedded now / vectors reused), `reclassified` (grants whose derived
///     labels were re-assigned by embeddings) and `previous_vectors_error` (why the
///     previous snapshot's vectors could not be reused, so that every grant was embedded
///     again; `None` normally).
///
/// Raises:
///     InvalidInputError: the catalogue is invalid (the message lists every problem with
///         file, line and field).
///     ModelError: the model is missing (with `embeddings=True`).
///     CatalogueError: the data directory cannot be written.
#[pyfunction]
#[pyo3(signature = (source_dir, data_dir=None, model_dir=None, *, model_variant=None, embeddings=true, threads=None))]
fn import_catalogue<'py>(
    py: Python<'py>,
    source_dir: PathBuf,
    data_dir: Option<PathBuf>,
    model_dir: Option<PathBuf>,
    model_variant: Option<&str>,
    embeddings: bool,
    threads: Option<usize>,
) -> PyResult<Bound<'py, PyDict>> {
    let settings = Settings::resolve(data_dir, model_dir, model_variant, threads)?;
    let report = py
        .detach(|| {
            let embedder = if embeddings {
                Some(Embedder::load(&settings.model)?)
            } else {
                None
            };
            grantmatch_engine::import::import_catalogue(
                &settings.data_dir,
                &source_dir,
                embedder.as_ref(),
                &|_, _, _| {},
            )
        })
        .map_err(errors::to_py)?;
    let summary = &report.summary;
    let d = PyDict::new(py);
    d.set_item("snapshot", summary.snapshot.display().to_string())?;
    d.set_item("fingerprint", &summary.fingerprint)?;
    d.set_item("grants", summary.grants)?;
    d.set_item("grant_providers", summary.grant_providers)?;
    d.set_item("regions", summary.regions)?;
    d.set_item("grant_areas", summary.grant_areas)?;
    d.set_item("eligible_entities", summary.eligible_entities)?;
    d.set_item("target_groups", summary.target_groups)?;
    d.set_item("embedded", report.embedded.unwrap_or(0))?;
    d.set_item("reused", report.reused())?;
    d.set_item("reclassified", report.reclassified)?;
    d.set_item("previous_vectors_error", report.previous_vectors_error)?;
    Ok(d)
}

/// The default data directory: `$GRANTMATCH_DATA_DIR`, else `./data`.
#[pyfunction]
fn default_data_dir() -> String {
    engine::default_data_dir().display().to_string()
}

/// The default model directory: `$GRANTMATCH_MODEL_DIR`, else
/// `~/.cache/grantmatch/model`.
#[pyfunction]
fn default_model_dir() -> String {
    engine::default_model_dir().display().to_string()
}

#[pymodule]
#[pyo3(name = "_grantmatch")]
fn grantmatch(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("DIM", grantmatch_engine::embed::DIM)?;
    m.add("MAX_RESULTS", grantmatch_engine::matching::MAX_RESULTS)?;
    m.add_class::<engine::PyEngine>()?;
    m.add_class::<options::PyMatchWeights>()?;
    m.add_class::<options::PyCalibration>()?;
    m.add_function(wrap_pyfunction!(eval::evaluate, m)?)?;
    m.add_function(wrap_pyfunction!(import_catalogue, m)?)?;
    m.add_function(wrap_pyfunction!(default_data_dir, m)?)?;
    m.add_function(wrap_pyfunction!(default_model_dir, m)?)?;
    m.add("GrantmatchError", py.get_type::<errors::GrantmatchError>())?;
    m.add(
        "InvalidInputError",
        py.get_type::<errors::InvalidInputError>(),
    )?;
    m.add("UnknownIdError", py.get_type::<errors::UnknownIdError>())?;
    m.add("ModelError", py.get_type::<errors::ModelError>())?;
    m.add("CatalogueError", py.get_type::<errors::CatalogueError>())?;
    Ok(())
}
