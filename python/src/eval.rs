//! `grantmatch.evaluate`: nDCG@k and Recall@25 of the matching on labelled profiles,
//! computed like `grantmatch eval` (gains 2^grade − 1; relevant = grade ≥ 1).

use std::collections::HashMap;

use grantmatch_engine::metrics::{Judged, RECALL_AT};

use grantmatch_engine::MatchInput;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use serde_json::{json, Value};

use crate::convert::to_py;
use crate::engine::{match_input, parse_today, PyEngine};
use crate::errors::{self, invalid};
use crate::options::{match_options, options_dict};

/// One profile of an evaluation: id, its split (`tune`/`heldout`) when given, the body.
type EvalProfile = (String, Option<String>, MatchInput);

/// `[{"id": ..., "request": ..., "split": ...}, ...]` (a list item may also be the
/// `POST /matching` body itself, its id `id` or `organization_id`) or `{id: request}`.
fn parse_profiles(profiles: &Bound<'_, PyAny>) -> PyResult<Vec<EvalProfile>> {
    let mut out = Vec::new();
    let with_context = |id: &str, e: PyErr, py: Python<'_>| -> PyErr {
        let new = PyErr::from_type(e.get_type(py), format!("profile `{id}`: {}", e.value(py)));
        new.set_cause(py, Some(e));
        new
    };
    let py = profiles.py();
    if let Ok(d) = profiles.cast::<PyDict>() {
        for (k, v) in d.iter() {
            let id: String = k.extract().map_err(|_| {
                PyTypeError::new_err("profiles: dict keys must be profile ids (str)")
            })?;
            let input = match_input(&v, None, None).map_err(|e| with_context(&id, e, py))?;
            out.push((id, None, input));
        }
        return Ok(out);
    }
    let items = profiles.try_iter().map_err(|_| {
        PyTypeError::new_err(
            "profiles: expected a list of {\"id\", \"request\"} dicts or a dict id → request",
        )
    })?;
    for (i, item) in items.enumerate() {
        let item = item?;
        let d = item.cast::<PyDict>().map_err(|_| {
            PyTypeError::new_err(format!(
                "profiles[{i}]: expected a dict with `id` and `request`"
            ))
        })?;
        // A `POST /matching` body as the item itself: its id is `id` or `organization_id`.
        let bare =
            d.get_item("request")?.is_none() && d.get_item("organization_profile")?.is_some();
        let id: String = d
            .get_item("id")?
            .or(if bare {
                d.get_item("organization_id")?
            } else {
                None
            })
            .ok_or_else(|| invalid(format!("profiles[{i}]: `id` is missing")))?
            .extract()
            .map_err(|_| invalid(format!("profiles[{i}].id: expected a str")))?;
        let request = if bare {
            item.clone()
        } else {
            d.get_item("request")?.ok_or_else(|| {
                invalid(format!(
                    "profiles[{i}] (`{id}`): `request` is missing (or give the POST /matching body itself)"
                ))
            })?
        };
        let split: Option<String> = match d.get_item("split")? {
            Some(s) => Some(
                s.extract()
                    .map_err(|_| invalid(format!("profiles[{i}].split: expected a str")))?,
            ),
            None => None,
        };
        let input = match_input(&request, None, None).map_err(|e| with_context(&id, e, py))?;
        out.push((id, split, input));
    }
    Ok(out)
}

/// `{profile_id: {grant slug or UUID: grade}}`; UUIDs become slugs.
fn parse_qrels(
    engine: &PyEngine,
    qrels: &Bound<'_, PyAny>,
) -> PyResult<HashMap<String, HashMap<String, u32>>> {
    let d = qrels.cast::<PyDict>().map_err(|_| {
        PyTypeError::new_err("qrels: expected a dict {profile_id: {grant_slug: grade}}")
    })?;
    let cat = &engine.engine.catalogue;
    let mut out = HashMap::new();
    for (k, v) in d.iter() {
        let id: String = k
            .extract()
            .map_err(|_| PyTypeError::new_err("qrels: keys must be profile ids (str)"))?;
        let judged = v.cast::<PyDict>().map_err(|_| {
            PyTypeError::new_err(format!(
                "qrels[{id:?}]: expected a dict {{grant_slug: grade}}"
            ))
        })?;
        let mut grades = HashMap::new();
        for (g, grade) in judged.iter() {
            let g: String = g
                .extract()
                .map_err(|_| PyTypeError::new_err(format!("qrels[{id:?}]: keys must be str")))?;
            let grade: u32 = grade.extract().map_err(|_| {
                invalid(format!(
                    "qrels[{id:?}][{g:?}]: the grade must be an integer ≥ 0"
                ))
            })?;
            let slug = match uuid::Uuid::parse_str(&g) {
                Ok(u) => cat
                    .grant_idx(&u)
                    .map(|i| cat.grant(i).slug.clone())
                    .unwrap_or(g),
                Err(_) => g,
            };
            grades.insert(slug, grade);
        }
        out.insert(id, grades);
    }
    Ok(out)
}

/// Evaluates the matching on labelled profiles: runs every profile through
/// `engine.match` (with `weights`/`calibration`) and scores the ranking against the
/// graded judgements.
///
/// Args:
///     engine: an `Engine` with the model loaded.
///     profiles: a list of `{"id": str, "request": dict}` (the format of
///         `fixtures/eval/profiles.json`; `request` is a `POST /matching` body or an
///         organisation profile), or a dict `{id: request}`.
///     qrels: `{profile_id: {grant_slug_or_uuid: grade}}` with grades 0–3 (as
///         `fixtures/eval/qrels.tsv`); a profile without judgements scores 0.
///     k: depth of nDCG.
///     weights: `MatchWeights` or a dict (default: the server's weights).
///     calibration: `Calibration` or a dict (default: the server's).
///     today: the day deadlines are checked against (default today, UTC).
///
/// Returns:
///     A dict: `f"ndcg@{k}"` and `"recall@25"` (means over the profiles), `"k"`,
///     `"profiles"` (count), `"model"`, `"options"` (all options used) and
///     `"per_profile"`: a list of dicts `profile`, `split` (the profile's `split`, e.g.
///     `tune`/`heldout`, or None), `f"ndcg@{k}"`, `"recall@25"`, `judged`, `relevant`
///     and `ranked` (the slugs returned, best first).
///
/// Raises:
///     InvalidInputError: a malformed profile (the message names it) or option.
///     ModelError: no model loaded.
#[pyfunction]
#[pyo3(signature = (engine, profiles, qrels, *, k=10, weights=None, calibration=None, today=None, options=None))]
#[allow(clippy::too_many_arguments)]
pub fn evaluate<'py>(
    py: Python<'py>,
    engine: &Bound<'py, PyEngine>,
    profiles: &Bound<'py, PyAny>,
    qrels: &Bound<'py, PyAny>,
    k: usize,
    weights: Option<&Bound<'py, PyAny>>,
    calibration: Option<&Bound<'py, PyAny>>,
    today: Option<&Bound<'py, PyAny>>,
    options: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    if k == 0 {
        return Err(invalid("k: must be at least 1"));
    }
    let engine = engine.get();
    let embedder = engine.embedder()?;
    let profiles = parse_profiles(profiles)?;
    let qrels = parse_qrels(engine, qrels)?;
    let options = match_options(options, weights, calibration)?;
    let today = parse_today(today)?;
    let empty = Judged::new();
    let ndcg_key = format!("ndcg@{k}");
    let recall_key = format!("recall@{RECALL_AT}");
    let mut rows = Vec::new();
    let (mut sum_n, mut sum_r) = (0.0, 0.0);
    for (id, split, input) in &profiles {
        let judged = qrels.get(id).unwrap_or(&empty);
        let score = engine
            .run_evaluation(py, embedder, input, judged, &options, today, k)
            .map_err(|e| {
                let err = errors::to_py(e);
                PyErr::from_type(
                    err.get_type(py),
                    format!("profile `{id}`: {}", err.value(py)),
                )
            })?;
        sum_n += score.ndcg;
        sum_r += score.recall;
        let mut row = serde_json::Map::new();
        row.insert("profile".into(), json!(id));
        row.insert("split".into(), json!(split));
        row.insert(ndcg_key.clone(), json!(score.ndcg));
        row.insert(recall_key.clone(), json!(score.recall));
        row.insert("judged".into(), json!(score.judged));
        row.insert("relevant".into(), json!(score.relevant));
        row.insert("ranked".into(), json!(score.ranked));
        rows.push(Value::Object(row));
    }
    let count = profiles.len().max(1) as f64;
    let out = PyDict::new(py);
    out.set_item(&ndcg_key, sum_n / count)?;
    out.set_item(&recall_key, sum_r / count)?;
    out.set_item("k", k)?;
    out.set_item("profiles", profiles.len())?;
    out.set_item("model", embedder.model_id())?;
    out.set_item("options", options_dict(py, &options)?)?;
    let list = PyList::empty(py);
    for r in &rows {
        list.append(to_py(py, r)?)?;
    }
    out.set_item("per_profile", list)?;
    Ok(out.into_any())
}
