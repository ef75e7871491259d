//! `MatchWeights` and `Calibration`: typed, documented options of a matching run. Every
//! call that takes them also accepts a plain dict with a subset of the fields.

use grantmatch_engine::matching::{Calibration, MatchOptions, MatchWeights};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde_json::Value;

use crate::convert::{f32_clean, from_py, to_py};
use crate::errors::invalid;

/// Weights of the score components of a match. Relative: the weighted sum is divided by
/// the sum of the weights, so only their ratios matter. Every weight must be finite and
/// at least 0, and at least one must be positive.
///
/// A field left out takes the engine's default, which the server uses; `MatchWeights()`
/// holds all defaults (listed in the README and the stub).
///
/// Args:
///     semantic: similarity of profile and programme text (multilingual embeddings).
///     keyword: lexical fit (BM25 of the profile text, averaged with the share of the
///         profile's keywords found in the programme text).
///     region: region specificity (a programme of the organisation's own Land beats a
///         national one).
///     target_group: overlap of target groups.
///     eligibility: eligible entity and non-profit fit.
///     deadline: an open deadline.
///     budget: project budget within the programme's maximum amount.
#[pyclass(name = "MatchWeights", module = "grantmatch", eq, get_all, set_all)]
#[derive(Debug, Clone, PartialEq)]
pub struct PyMatchWeights {
    /// Weight of the semantic similarity.
    pub semantic: f64,
    /// Weight of the lexical (keyword/BM25) fit.
    pub keyword: f64,
    /// Weight of the region specificity.
    pub region: f64,
    /// Weight of the target-group overlap.
    pub target_group: f64,
    /// Weight of the eligibility fit.
    pub eligibility: f64,
    /// Weight of the deadline.
    pub deadline: f64,
    /// Weight of the budget fit.
    pub budget: f64,
}

const WEIGHT_FIELDS: [&str; 7] = [
    "semantic",
    "keyword",
    "region",
    "target_group",
    "eligibility",
    "deadline",
    "budget",
];

impl From<MatchWeights> for PyMatchWeights {
    fn from(w: MatchWeights) -> Self {
        PyMatchWeights {
            semantic: f32_clean(w.semantic),
            keyword: f32_clean(w.keyword),
            region: f32_clean(w.region),
            target_group: f32_clean(w.target_group),
            eligibility: f32_clean(w.eligibility),
            deadline: f32_clean(w.deadline),
            budget: f32_clean(w.budget),
        }
    }
}

impl PyMatchWeights {
    fn values(&self) -> [f64; 7] {
        [
            self.semantic,
            self.keyword,
            self.region,
            self.target_group,
            self.eligibility,
            self.deadline,
            self.budget,
        ]
    }

    /// The engine's weights, after checking them.
    pub fn to_engine(&self) -> PyResult<MatchWeights> {
        check_weights(MatchWeights {
            semantic: self.semantic as f32,
            keyword: self.keyword as f32,
            region: self.region as f32,
            target_group: self.target_group as f32,
            eligibility: self.eligibility as f32,
            deadline: self.deadline as f32,
            budget: self.budget as f32,
        })
    }
}

/// Every weight finite and ≥ 0, at least one positive.
fn check_weights(w: MatchWeights) -> PyResult<MatchWeights> {
    let values = [
        w.semantic,
        w.keyword,
        w.region,
        w.target_group,
        w.eligibility,
        w.deadline,
        w.budget,
    ];
    for (name, v) in WEIGHT_FIELDS.iter().zip(values) {
        if !v.is_finite() || v < 0.0 {
            return Err(invalid(format!(
                "weights.{name}: {v} is not a finite number ≥ 0"
            )));
        }
    }
    if values.iter().all(|v| *v == 0.0) {
        return Err(invalid("weights: at least one weight must be positive"));
    }
    Ok(w)
}

#[pymethods]
impl PyMatchWeights {
    #[new]
    #[pyo3(signature = (*, semantic=None, keyword=None, region=None, target_group=None, eligibility=None, deadline=None, budget=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        semantic: Option<f64>,
        keyword: Option<f64>,
        region: Option<f64>,
        target_group: Option<f64>,
        eligibility: Option<f64>,
        deadline: Option<f64>,
        budget: Option<f64>,
    ) -> Self {
        let d = PyMatchWeights::from(MatchWeights::default());
        PyMatchWeights {
            semantic: semantic.unwrap_or(d.semantic),
            keyword: keyword.unwrap_or(d.keyword),
            region: region.unwrap_or(d.region),
            target_group: target_group.unwrap_or(d.target_group),
            eligibility: eligibility.unwrap_or(d.eligibility),
            deadline: deadline.unwrap_or(d.deadline),
            budget: budget.unwrap_or(d.budget),
        }
    }

    /// The weights as a dict (field name → weight).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (name, v) in WEIGHT_FIELDS.iter().zip(self.values()) {
            d.set_item(name, v)?;
        }
        Ok(d)
    }

    /// Weights from a dict; missing fields take their default, unknown fields are an
    /// `InvalidInputError`.
    #[staticmethod]
    fn from_dict(d: &Bound<'_, PyAny>) -> PyResult<Self> {
        let w = weights_from_value(from_py(d, "weights")?)?;
        Ok(PyMatchWeights::from(w))
    }

    /// A copy with some fields replaced: `w.replace(keyword=0.3)`.
    #[pyo3(signature = (**changes))]
    fn replace(&self, changes: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let mut out = self.clone();
        if let Some(changes) = changes {
            for (k, v) in changes.iter() {
                let name: String = k.extract()?;
                let v: f64 = v.extract()?;
                match name.as_str() {
                    "semantic" => out.semantic = v,
                    "keyword" => out.keyword = v,
                    "region" => out.region = v,
                    "target_group" => out.target_group = v,
                    "eligibility" => out.eligibility = v,
                    "deadline" => out.deadline = v,
                    "budget" => out.budget = v,
                    _ => return Err(invalid(format!("weights: unknown field `{name}`"))),
                }
            }
        }
        Ok(out)
    }

    fn __repr__(&self) -> String {
        let fields: Vec<String> = WEIGHT_FIELDS
            .iter()
            .zip(self.values())
            .map(|(n, v)| format!("{n}={v:?}"))
            .collect();
        format!("MatchWeights({})", fields.join(", "))
    }
}

/// Calibration of the semantic component: raw e5 cosines sit in a narrow band, so
/// `[cosine_low, cosine_high]` is mapped linearly onto `[0, 1]` (clamped).
///
/// A field left out takes the engine's default, which the server uses.
///
/// Args:
///     cosine_low: cosine that maps to a semantic component of 0.
///     cosine_high: cosine that maps to a semantic component of 1 (must exceed
///         cosine_low).
#[pyclass(name = "Calibration", module = "grantmatch", eq, get_all, set_all)]
#[derive(Debug, Clone, PartialEq)]
pub struct PyCalibration {
    /// Cosine mapped to 0.
    pub cosine_low: f64,
    /// Cosine mapped to 1.
    pub cosine_high: f64,
}

impl From<Calibration> for PyCalibration {
    fn from(c: Calibration) -> Self {
        PyCalibration {
            cosine_low: f32_clean(c.cosine_low),
            cosine_high: f32_clean(c.cosine_high),
        }
    }
}

impl PyCalibration {
    pub fn to_engine(&self) -> PyResult<Calibration> {
        check_calibration(Calibration {
            cosine_low: self.cosine_low as f32,
            cosine_high: self.cosine_high as f32,
        })
    }
}

fn check_calibration(c: Calibration) -> PyResult<Calibration> {
    if !(c.cosine_low.is_finite() && c.cosine_high.is_finite() && c.cosine_high > c.cosine_low) {
        return Err(invalid(format!(
            "calibration: cosine_high ({}) must be greater than cosine_low ({}), both finite",
            c.cosine_high, c.cosine_low
        )));
    }
    Ok(c)
}

#[pymethods]
impl PyCalibration {
    #[new]
    #[pyo3(signature = (*, cosine_low=None, cosine_high=None))]
    fn new(cosine_low: Option<f64>, cosine_high: Option<f64>) -> Self {
        let d = PyCalibration::from(Calibration::default());
        PyCalibration {
            cosine_low: cosine_low.unwrap_or(d.cosine_low),
            cosine_high: cosine_high.unwrap_or(d.cosine_high),
        }
    }

    /// The calibration as a dict.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("cosine_low", self.cosine_low)?;
        d.set_item("cosine_high", self.cosine_high)?;
        Ok(d)
    }

    fn __repr__(&self) -> String {
        format!(
            "Calibration(cosine_low={:?}, cosine_high={:?})",
            self.cosine_low, self.cosine_high
        )
    }
}

fn weights_from_value(v: Value) -> PyResult<MatchWeights> {
    if !v.is_object() {
        return Err(invalid("weights: expected a dict or a MatchWeights"));
    }
    let w: MatchWeights =
        serde_json::from_value(v).map_err(|e| invalid(format!("weights: {e}")))?;
    check_weights(w)
}

/// The options of a run: `options=` (a dict in the format of the CLI's `--options` and
/// the server's `--match-options` files: `weights`, `calibration`, `keyword_factor_en`,
/// `glossary_weight`, `need_weight`, `need_centering`, `topic_open_semantic`, `topic_open_wanted_semantic`, `measure_semantic`, `national_region`; fields left out keep their defaults), then the
/// `weights=` and `calibration=` arguments (None, a dict with some fields, or the typed
/// object), which replace those parts.
pub fn match_options(
    options: Option<&Bound<'_, PyAny>>,
    weights: Option<&Bound<'_, PyAny>>,
    calibration: Option<&Bound<'_, PyAny>>,
) -> PyResult<MatchOptions> {
    let mut options: MatchOptions = match options.filter(|o| !o.is_none()) {
        Some(o) => {
            let v = from_py(o, "options")?;
            if !v.is_object() {
                return Err(invalid("options: expected a dict"));
            }
            let o: MatchOptions =
                serde_json::from_value(v).map_err(|e| invalid(format!("options: {e}")))?;
            check_weights(o.weights)?;
            check_calibration(o.calibration)?;
            o
        }
        None => MatchOptions::default(),
    };
    if let Some(w) = weights.filter(|w| !w.is_none()) {
        options.weights = match w.extract::<PyRef<'_, PyMatchWeights>>() {
            Ok(w) => w.to_engine()?,
            Err(_) => weights_from_value(from_py(w, "weights")?)?,
        };
    }
    if let Some(c) = calibration.filter(|c| !c.is_none()) {
        options.calibration = match c.extract::<PyRef<'_, PyCalibration>>() {
            Ok(c) => c.to_engine()?,
            Err(_) => {
                let v = from_py(c, "calibration")?;
                if !v.is_object() {
                    return Err(invalid("calibration: expected a dict or a Calibration"));
                }
                let c: Calibration =
                    serde_json::from_value(v).map_err(|e| invalid(format!("calibration: {e}")))?;
                check_calibration(c)?
            }
        };
    }
    Ok(options)
}

/// Dict of a run's options (for results that record them).
pub fn options_dict<'py>(py: Python<'py>, o: &MatchOptions) -> PyResult<Bound<'py, PyAny>> {
    let mut v = serde_json::to_value(o).map_err(|e| invalid(e.to_string()))?;
    clean_floats(&mut v);
    to_py(py, &v)
}

fn clean_floats(v: &mut Value) {
    match v {
        Value::Number(n) if n.is_f64() => {
            if let Some(x) = n
                .as_f64()
                .and_then(|x| serde_json::Number::from_f64(f32_clean(x as f32)))
            {
                *n = x;
            }
        }
        Value::Object(m) => m.values_mut().for_each(clean_floats),
        Value::Array(a) => a.iter_mut().for_each(clean_floats),
        _ => {}
    }
}
