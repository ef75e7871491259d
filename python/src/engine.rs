//! `grantmatch.Engine`: a loaded catalogue plus the embedding model.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use chrono::NaiveDate;
use grantmatch_engine::embed::{Embedder, ModelConfig, ModelVariant, TextKind, DIM};
use grantmatch_engine::model::{GrantType, ProviderType};
use grantmatch_engine::profile::Locale;
use grantmatch_engine::vectors::normalized;
use grantmatch_engine::{
    Engine, GrantFilter, Match, MatchInput, MatchOptions, PageRequest, ResolvedScope,
};
use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray2};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};
use serde_json::{json, Map, Value};

use crate::convert::{f32_clean, from_py, to_py};
use crate::errors::{self, invalid, model, unknown};
use crate::options::match_options;
use grantmatch_engine::qualify::{self, QualificationPrompt, QualificationRules};
use grantmatch_engine::views::{
    EligibleEntityView, GrantAreaFlat, GrantDetailView, GrantProviderView, GrantView, MatchView,
    RegionFlat, TargetGroupView,
};

/// Organisation id used when a profile is given without a request body around it (the
/// engine requires one; it does not influence the ranking).
const DEFAULT_ORGANIZATION_ID: &str = "python";

/// Where the data directory and the model are, with the CLI's defaults and variables.
pub struct Settings {
    pub data_dir: PathBuf,
    pub model: ModelConfig,
}

pub fn default_data_dir() -> PathBuf {
    std::env::var_os("GRANTMATCH_DATA_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("./data"))
}

/// The default model directory of the process environment (see
/// [`grantmatch_engine::embed::default_model_dir`]).
pub fn default_model_dir() -> PathBuf {
    grantmatch_engine::embed::default_model_dir(std::env::var_os)
}

impl Settings {
    pub fn resolve(
        data_dir: Option<PathBuf>,
        model_dir: Option<PathBuf>,
        model_variant: Option<&str>,
        threads: Option<usize>,
    ) -> PyResult<Self> {
        let variant = match model_variant {
            Some(v) => v.to_string(),
            None => std::env::var("GRANTMATCH_MODEL_VARIANT")
                .ok()
                .filter(|v| !v.is_empty())
                .unwrap_or_else(|| "fp32".into()),
        };
        let variant = ModelVariant::parse(&variant).ok_or_else(|| {
            invalid(format!(
                "model_variant: unknown model variant `{variant}` (fp32, int8 or q4)"
            ))
        })?;
        if threads == Some(0) {
            return Err(invalid("threads: must be at least 1"));
        }
        Ok(Settings {
            data_dir: data_dir.unwrap_or_else(default_data_dir),
            model: ModelConfig {
                dir: model_dir.unwrap_or_else(default_model_dir),
                variant,
                threads,
            },
        })
    }
}

/// An imported grant catalogue and the embedding model, ready to list, embed and match.
///
/// Create one with :meth:`Engine.open`. An engine is immutable and safe to share between
/// threads; heavy calls release the GIL.
#[pyclass(name = "Engine", module = "grantmatch", frozen)]
pub struct PyEngine {
    pub(crate) engine: Arc<Engine>,
    pub(crate) embedder: Option<Arc<Embedder>>,
    pub(crate) scope: ResolvedScope,
    data_dir: PathBuf,
    model: ModelConfig,
}

impl PyEngine {
    pub(crate) fn embedder(&self) -> PyResult<&Embedder> {
        self.embedder.as_deref().ok_or_else(|| {
            model("this engine was opened with load_model=False: open it with the model to embed or match")
        })
    }

    pub(crate) fn grant_idx(&self, id_or_slug: &str) -> PyResult<u32> {
        self.engine
            .find_grant(id_or_slug.trim())
            .ok_or_else(|| unknown(format!("no grant `{id_or_slug}`")))
    }
}

/// A `str` or a sequence of `str` as a list.
fn str_list(obj: Option<&Bound<'_, PyAny>>, what: &str) -> PyResult<Vec<String>> {
    let Some(obj) = obj.filter(|o| !o.is_none()) else {
        return Ok(Vec::new());
    };
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(vec![s.to_cow()?.into_owned()]);
    }
    let mut out = Vec::new();
    for item in obj
        .try_iter()
        .map_err(|_| PyTypeError::new_err(format!("{what}: expected a str or a list of str")))?
    {
        let item = item?;
        out.push(item.extract::<String>().map_err(|_| {
            PyTypeError::new_err(format!("{what}: expected a str or a list of str"))
        })?);
    }
    Ok(out)
}

/// The date matching runs on: `None` = today (UTC, as the server), a `datetime.date` or
/// an ISO string `YYYY-MM-DD`.
pub fn parse_today(today: Option<&Bound<'_, PyAny>>) -> PyResult<NaiveDate> {
    let Some(t) = today.filter(|t| !t.is_none()) else {
        return Ok(chrono::Utc::now().date_naive());
    };
    let text: String = if let Ok(s) = t.cast::<PyString>() {
        s.to_cow()?.into_owned()
    } else if t.hasattr("isoformat")? {
        t.call_method0("isoformat")?.extract()?
    } else {
        return Err(PyTypeError::new_err(
            "today: expected a datetime.date or a `YYYY-MM-DD` string",
        ));
    };
    let day = text.split('T').next().unwrap_or("");
    NaiveDate::parse_from_str(day, "%Y-%m-%d")
        .map_err(|_| invalid(format!("today: `{text}` is not a date (YYYY-MM-DD)")))
}

/// Builds the `POST /matching` body from a profile (a request body, an
/// `organization_profile` dict, or a description string) and an optional project.
pub fn match_input(
    profile: &Bound<'_, PyAny>,
    project: Option<&Bound<'_, PyAny>>,
    locale: Option<&str>,
) -> PyResult<MatchInput> {
    let mut body = if let Ok(s) = profile.cast::<PyString>() {
        json!({
            "organization_id": DEFAULT_ORGANIZATION_ID,
            "organization_profile": { "description": s.to_cow()? },
        })
    } else if profile.is_instance_of::<PyDict>() {
        let v = from_py(profile, "profile")?;
        let is_body = v.as_object().is_some_and(|m| {
            m.contains_key("organization_profile") || m.contains_key("organization_id")
        });
        if is_body {
            v
        } else {
            json!({ "organization_id": DEFAULT_ORGANIZATION_ID, "organization_profile": v })
        }
    } else {
        return Err(PyTypeError::new_err(format!(
            "profile: expected a dict (organization profile or request body) or a str, not {}",
            profile.get_type().name()?
        )));
    };
    if let Some(p) = project.filter(|p| !p.is_none()) {
        let p = if let Ok(s) = p.cast::<PyString>() {
            json!({ "description": s.to_cow()? })
        } else if p.is_instance_of::<PyDict>() {
            from_py(p, "project")?
        } else {
            return Err(PyTypeError::new_err(format!(
                "project: expected a dict or a str, not {}",
                p.get_type().name()?
            )));
        };
        let m: &mut Map<String, Value> = body.as_object_mut().expect("a JSON object");
        if m.get("project").is_some_and(|x| !x.is_null()) {
            return Err(invalid(
                "project: given both in the request body and as an argument",
            ));
        }
        m.insert("project".into(), p);
    }
    let mut input = MatchInput::from_value(body).map_err(errors::to_py)?;
    if let Some(l) = locale {
        if Locale::parse(l).is_none() {
            return Err(invalid(format!("locale: `{l}` is not `de` or `en`")));
        }
        input
            .organization_profile
            .get_or_insert_with(Default::default)
            .locale = Some(l.to_string());
    }
    Ok(input)
}

/// One match as the API shows it, plus the slug; with `explain`, its score components
/// and the profile keywords found in the programme text.
pub fn match_value(engine: &Engine, m: &Match, explain: bool) -> Value {
    let mut v = json!(MatchView::new(&engine.catalogue, m));
    v["slug"] = json!(engine.catalogue.grant(m.grant).slug);
    if explain {
        let c = &m.components;
        v["components"] = json!({
            "cosine": f32_clean(c.cosine),
            "semantic": f32_clean(c.semantic),
            "keyword": f32_clean(c.keyword),
            "region": f32_clean(c.region),
            "target_group": f32_clean(c.target_group),
            "eligibility": f32_clean(c.eligibility),
            "deadline": f32_clean(c.deadline),
            "budget": f32_clean(c.budget),
        });
        // The weighted mean the score is calibrated from, after the kind-misfit factor.
        v["total"] = json!(f32_clean(m.total));
        v["matched_keywords"] = json!(m.matched_keywords);
    }
    v
}

fn to_py_list<'py>(py: Python<'py>, items: Vec<Value>) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for v in &items {
        list.append(to_py(py, v)?)?;
    }
    Ok(list)
}

fn path_str(p: &Path) -> String {
    p.display().to_string()
}

#[pymethods]
impl PyEngine {
    /// Opens the catalogue imported into `data_dir` and loads the embedding model.
    ///
    /// Args:
    ///     data_dir: the data directory (as `grantmatch --data-dir`); default
    ///         `$GRANTMATCH_DATA_DIR`, else `./data`.
    ///     model_dir: the model assets; default `$GRANTMATCH_MODEL_DIR`, else
    ///         `~/.cache/grantmatch/model`.
    ///     model_variant: `"q4"` (fp32's vectors in a sixth of the memory, the server's
    ///         default), `"fp32"` (the reference) or `"int8"` (about twice as fast);
    ///         default `$GRANTMATCH_MODEL_VARIANT`, else `"q4"`. The
    ///         catalogue must have been imported with the same variant to match.
    ///     threads: ONNX Runtime threads for embedding (default: all cores).
    ///     load_model: `False` opens the catalogue alone (listing works; `embed` and
    ///         `match` raise `ModelError`).
    ///
    /// Raises:
    ///     CatalogueError: no catalogue imported in `data_dir`, or it cannot be read.
    ///     ModelError: the model files are missing or do not load.
    #[staticmethod]
    #[pyo3(signature = (data_dir=None, model_dir=None, *, model_variant=None, threads=None, load_model=true))]
    fn open(
        py: Python<'_>,
        data_dir: Option<PathBuf>,
        model_dir: Option<PathBuf>,
        model_variant: Option<&str>,
        threads: Option<usize>,
        load_model: bool,
    ) -> PyResult<Self> {
        let settings = Settings::resolve(data_dir, model_dir, model_variant, threads)?;
        let (engine, embedder) = py
            .detach(|| {
                let engine = Engine::open(&settings.data_dir)?;
                let embedder = if load_model {
                    Some(Embedder::load(&settings.model)?)
                } else {
                    None
                };
                Ok::<_, grantmatch_engine::Error>((engine, embedder))
            })
            .map_err(errors::to_py)?;
        let scope = ResolvedScope::unrestricted(&engine.catalogue);
        Ok(PyEngine {
            engine: Arc::new(engine),
            embedder: embedder.map(Arc::new),
            scope,
            data_dir: settings.data_dir,
            model: settings.model,
        })
    }

    /// The data directory this engine was opened from.
    #[getter]
    fn data_dir(&self) -> String {
        path_str(&self.data_dir)
    }

    /// The snapshot directory of the loaded catalogue.
    #[getter]
    fn snapshot_dir(&self) -> Option<String> {
        self.engine.snapshot_dir().map(path_str)
    }

    /// The model directory.
    #[getter]
    fn model_dir(&self) -> String {
        path_str(&self.model.dir)
    }

    /// Id of the loaded model (e.g. `"multilingual-e5-small/fp32"`), `None` without one.
    #[getter]
    fn model_id(&self) -> Option<String> {
        self.embedder.as_ref().map(|e| e.model_id().to_string())
    }

    /// Id of the model the catalogue was embedded with, `None` without embeddings.
    #[getter]
    fn embeddings_model_id(&self) -> Option<String> {
        self.engine.vectors().map(|v| v.model_id.clone())
    }

    /// Number of grants in the catalogue.
    fn __len__(&self) -> usize {
        self.engine.catalogue.grants.len()
    }

    fn __repr__(&self) -> String {
        format!(
            "Engine(data_dir={:?}, grants={}, model={})",
            path_str(&self.data_dir),
            self.engine.catalogue.grants.len(),
            self.model_id().unwrap_or_else(|| "None".into())
        )
    }

    /// Lists grants as dicts with the fields of `GET /api/v1/grants` items.
    ///
    /// Filters combine with AND; several values of one filter with OR. Without `q` the
    /// grants are ordered by title, with `q` by relevance (German full-text search).
    ///
    /// Args:
    ///     q: full-text query over titles and descriptions.
    ///     region_ids: regions (UUID, slug, code or name; a str or a list); a grant
    ///         matches with a region equal to or inside one of them.
    ///     grant_area_ids: grant areas (UUID, slug, code or name); a parent area
    ///         includes its sub-areas.
    ///     grant_provider_id: a provider (UUID or slug).
    ///     grant_type: `"subsidy"`, `"loan"`, `"guarantee"` or `"equity"`.
    ///     limit: at most this many grants (default: all).
    ///
    /// Raises:
    ///     UnknownIdError: a region, area or provider that is not in the catalogue.
    ///     InvalidInputError: an unknown grant type.
    #[pyo3(signature = (q=None, *, region_ids=None, grant_area_ids=None, grant_provider_id=None, grant_type=None, limit=None))]
    #[allow(clippy::too_many_arguments)]
    fn grants<'py>(
        &self,
        py: Python<'py>,
        q: Option<String>,
        region_ids: Option<&Bound<'py, PyAny>>,
        grant_area_ids: Option<&Bound<'py, PyAny>>,
        grant_provider_id: Option<&str>,
        grant_type: Option<&str>,
        limit: Option<usize>,
    ) -> PyResult<Bound<'py, PyList>> {
        let cat = &self.engine.catalogue;
        let mut filter = GrantFilter {
            q,
            ..Default::default()
        };
        for r in str_list(region_ids, "region_ids")? {
            let i = cat
                .find_region(&r)
                .ok_or_else(|| unknown(format!("region_ids: unknown region `{r}`")))?;
            filter.region_ids.push(cat.regions[i as usize].id);
        }
        for a in str_list(grant_area_ids, "grant_area_ids")? {
            let i = cat
                .find_area(&a)
                .ok_or_else(|| unknown(format!("grant_area_ids: unknown grant area `{a}`")))?;
            filter.grant_area_ids.push(cat.grant_areas[i as usize].id);
        }
        if let Some(p) = grant_provider_id {
            let i = self.engine.find_provider(p.trim()).ok_or_else(|| {
                unknown(format!("grant_provider_id: unknown grant provider `{p}`"))
            })?;
            filter.grant_provider_id = Some(cat.grant_providers[i as usize].id);
        }
        if let Some(t) = grant_type {
            filter.grant_type = Some(GrantType::parse(t).ok_or_else(|| {
                invalid(format!(
                    "grant_type: `{t}` is not one of subsidy, loan, guarantee, equity"
                ))
            })?);
        }
        let page = PageRequest {
            page: 1,
            per_page: limit.unwrap_or(usize::MAX),
        };
        let engine = &*self.engine;
        let scope = &self.scope;
        let items = py
            .detach(|| {
                engine.list_grants(scope, &filter, page).map(|page| {
                    page.items
                        .iter()
                        .map(|&g| json!(GrantView::new(&engine.catalogue, g)))
                        .collect::<Vec<_>>()
                })
            })
            .map_err(errors::to_py)?;
        to_py_list(py, items)
    }

    /// One grant with every field of `GET /api/v1/grants/{id}` except a partner's own
    /// annotations (`ai_qualified`, `ai_qualification_reasoning`, `custom_categories`).
    ///
    /// Args:
    ///     id_or_slug: the grant's UUID or slug.
    ///
    /// Raises:
    ///     UnknownIdError: no such grant.
    fn grant<'py>(&self, py: Python<'py>, id_or_slug: &str) -> PyResult<Bound<'py, PyAny>> {
        let g = self.grant_idx(id_or_slug)?;
        to_py(py, &json!(GrantDetailView::new(&self.engine.catalogue, g)))
    }

    /// Grant providers as dicts with the fields of `GET /api/v1/grant_providers`,
    /// ordered by name, each with its `grants_count`.
    ///
    /// Args:
    ///     q: part of the name (case- and umlaut-insensitive) or of the slug.
    ///     provider_type: e.g. `"federal_ministry"`, `"state_ministry"`, `"private_foundation"`.
    ///
    /// Raises:
    ///     InvalidInputError: an unknown provider type.
    #[pyo3(signature = (q=None, *, provider_type=None))]
    fn providers<'py>(
        &self,
        py: Python<'py>,
        q: Option<&str>,
        provider_type: Option<&str>,
    ) -> PyResult<Bound<'py, PyList>> {
        if let Some(t) = provider_type {
            if ProviderType::parse(t).is_none() {
                return Err(invalid(format!(
                    "provider_type: `{t}` is not a provider type (one of: {})",
                    ProviderType::names().join(", ")
                )));
            }
        }
        let page = self.engine.list_providers(
            q,
            provider_type,
            PageRequest {
                page: 1,
                per_page: usize::MAX,
            },
        );
        let items = page
            .items
            .iter()
            .map(|&p| json!(GrantProviderView::new(&self.engine, &self.scope, p)))
            .collect();
        to_py_list(py, items)
    }

    /// One grant provider (fields of `GET /api/v1/grant_providers/{id}`).
    ///
    /// Args:
    ///     id_or_slug: the provider's UUID or slug.
    ///
    /// Raises:
    ///     UnknownIdError: no such provider.
    fn provider<'py>(&self, py: Python<'py>, id_or_slug: &str) -> PyResult<Bound<'py, PyAny>> {
        let p = self
            .engine
            .find_provider(id_or_slug.trim())
            .ok_or_else(|| unknown(format!("no grant provider `{id_or_slug}`")))?;
        to_py(
            py,
            &json!(GrantProviderView::new(&self.engine, &self.scope, p)),
        )
    }

    /// All regions (continents, countries, states), flat, with the fields of
    /// `GET /api/v1/regions?flat=true`.
    fn regions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let cat = &self.engine.catalogue;
        to_py_list(
            py,
            (0..cat.regions.len() as u32)
                .map(|r| json!(RegionFlat::new(cat, r)))
                .collect(),
        )
    }

    /// All grant areas, parents and sub-areas, flat, with the fields of
    /// `GET /api/v1/grant_areas?flat=true&include_parent=true`.
    fn grant_areas<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let cat = &self.engine.catalogue;
        to_py_list(
            py,
            (0..cat.grant_areas.len() as u32)
                .map(|a| json!(GrantAreaFlat::new(cat, a)))
                .collect(),
        )
    }

    /// All eligible entities (fields of `GET /api/v1/eligible_entities`).
    fn eligible_entities<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let cat = &self.engine.catalogue;
        to_py_list(
            py,
            (0..cat.eligible_entities.len() as u32)
                .map(|e| json!(EligibleEntityView::new(cat, e)))
                .collect(),
        )
    }

    /// All target groups (fields of `GET /api/v1/target_groups`).
    fn target_groups<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let cat = &self.engine.catalogue;
        to_py_list(
            py,
            (0..cat.target_groups.len() as u32)
                .map(|t| json!(TargetGroupView::new(cat, t)))
                .collect(),
        )
    }

    /// Embeds texts with the model: a `float32` array of shape `(len(texts), 384)`,
    /// one L2-normalised row per text (a dot product is the cosine).
    ///
    /// Args:
    ///     texts: a str or a list of str.
    ///     kind: `"query"` (searches, profiles) or `"passage"` (documents); e5 embeds
    ///         them with different prefixes.
    ///
    /// Raises:
    ///     ModelError: no model loaded or embedding failed.
    ///     InvalidInputError: an unknown kind.
    #[pyo3(signature = (texts, kind="query"))]
    fn embed<'py>(
        &self,
        py: Python<'py>,
        texts: &Bound<'py, PyAny>,
        kind: &str,
    ) -> PyResult<Bound<'py, PyArray2<f32>>> {
        let kind = match kind {
            "query" => TextKind::Query,
            "passage" => TextKind::Passage,
            _ => {
                return Err(invalid(format!(
                    "kind: `{kind}` is not `query` or `passage`"
                )))
            }
        };
        let texts = str_list(Some(texts), "texts")?;
        let embedder = self.embedder()?;
        let data = py
            .detach(|| {
                let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
                let rows = embedder.embed(&refs, kind)?;
                let mut data = Vec::with_capacity(rows.len() * DIM);
                for r in &rows {
                    data.extend(normalized(r));
                }
                Ok::<_, grantmatch_engine::Error>(data)
            })
            .map_err(errors::to_py)?;
        let n = data.len() / DIM;
        let array = Array2::from_shape_vec((n, DIM), data)
            .map_err(|e| model(format!("embedding shape: {e}")))?;
        Ok(array.into_pyarray(py))
    }

    /// The catalogue's grant embeddings: `(matrix, grant_ids)` where `matrix` is a
    /// `float32` array of shape `(len(engine), 384)` (L2-normalised rows, catalogue
    /// order) and `grant_ids` the grants' UUIDs in the same order. The matrix is copied
    /// once from the engine into NumPy.
    ///
    /// Raises:
    ///     ModelError: the catalogue was imported without embeddings.
    fn grant_embeddings<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyArray2<f32>>, Bound<'py, PyList>)> {
        let vectors = self.engine.vectors().ok_or_else(|| {
            model("the catalogue has no embeddings: import it with the model available")
        })?;
        let array =
            Array2::from_shape_vec((vectors.len(), vectors.dim), vectors.as_slice().to_vec())
                .map_err(|e| model(format!("embedding shape: {e}")))?;
        let ids = PyList::new(
            py,
            self.engine
                .catalogue
                .grants
                .iter()
                .map(|g| g.id.to_string()),
        )?;
        Ok((array.into_pyarray(py), ids))
    }

    /// Ranks grants for an organisation profile: the same semantics and results as
    /// `POST /api/v1/matching` for the same input (unrestricted partner).
    ///
    /// Args:
    ///     profile: the `organization_profile` dict (`description` required; `name`,
    ///         `regions`, `grant_areas`, `eligible_entities`, `is_non_profit`, `mission`,
    ///         `target_groups`, `keywords`, `locale`, ...), a whole request body
    ///         (`{"organization_id", "organization_profile", "project"}`), or a
    ///         description string.
    ///     project: the optional `project` dict (`title`, `description`, `budget`,
    ///         `duration`) or a project description string.
    ///     locale: `"de"` or `"en"`, language of `match_reason`; overrides the profile's
    ///         `locale` (default: the profile's, else `"de"`).
    ///     limit: number of matches, 1 to 25 as the API returns them; None: every
    ///         programme that reached the rule stage (a few hundred), ranked, for
    ///         offline tuning (re-ranking experiments on `components`).
    ///     weights: `MatchWeights` or a dict with some of its fields (default: the
    ///         server's weights).
    ///     calibration: `Calibration` or a dict (default: the server's).
    ///     explain: add `components` (each score component in [0, 1]: cosine, semantic,
    ///         keyword, region, target_group, eligibility, deadline, budget), `total`
    ///         (their weighted mean, × 0.85 for a programme kind that does not suit the
    ///         profile: a research call for an organisation that does no research, a
    ///         residential programme for one not about housing) and `matched_keywords` to
    ///         every match.
    ///     today: the day deadlines are checked against (`datetime.date` or
    ///         `"YYYY-MM-DD"`; default today, UTC).
    ///     options: every option in one dict, the format of the CLI's `--options` and
    ///         the server's `--match-options` files (`weights`, `calibration`,
    ///         `keyword_factor_en`, `glossary_weight`, `need_weight`, `need_centering`, `topic_open_semantic`,
    ///         `topic_open_wanted_semantic`, `measure_semantic`, `national_region`); `weights` and
    ///         `calibration` arguments replace those parts.
    ///
    /// Returns:
    ///     A list of dicts, best first: `rank`, `grant_id`, `slug`, `title`,
    ///     `relevance_score` (0–100), `match_category`, `match_reason`, `checks`,
    ///     `matched_need`, `planned_measure`.
    ///
    /// Raises:
    ///     InvalidInputError: a missing or malformed field, an unknown filter value.
    ///     ModelError: no model, or a catalogue embedded with another model.
    #[pyo3(
        name = "match",
        signature = (profile, project=None, *, locale=None, limit=Some(25), weights=None, calibration=None, explain=false, today=None, options=None),
        text_signature = "($self, profile, project=None, *, locale=None, limit=25, weights=None, calibration=None, explain=False, today=None, options=None)"
    )]
    #[allow(clippy::too_many_arguments)]
    fn match_<'py>(
        &self,
        py: Python<'py>,
        profile: &Bound<'py, PyAny>,
        project: Option<&Bound<'py, PyAny>>,
        locale: Option<&str>,
        limit: Option<usize>,
        weights: Option<&Bound<'py, PyAny>>,
        calibration: Option<&Bound<'py, PyAny>>,
        explain: bool,
        today: Option<&Bound<'py, PyAny>>,
        options: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyList>> {
        if limit.is_some_and(|l| !(1..=grantmatch_engine::matching::MAX_RESULTS).contains(&l)) {
            return Err(invalid(format!(
                "limit: must be between 1 and {}, or None for every programme that reached the rule stage",
                grantmatch_engine::matching::MAX_RESULTS
            )));
        }
        let limit = limit.unwrap_or(usize::MAX);
        let input = match_input(profile, project, locale)?;
        let options = match_options(options, weights, calibration)?;
        let today = parse_today(today)?;
        let embedder = self.embedder()?;
        let matches = self
            .run_match(py, embedder, &input, &options, today, limit)
            .map_err(errors::to_py)?;
        to_py_list(
            py,
            matches
                .iter()
                .map(|m| match_value(&self.engine, m, explain))
                .collect(),
        )
    }

    /// Qualifies grants for a partner's qualification prompt: the decisions the server
    /// stores for a partner with this prompt (`ai_qualified`,
    /// `ai_qualification_reasoning` of `GET /api/v1/grants`).
    ///
    /// Args:
    ///     prompt: the qualification prompt (German or English free text).
    ///     grant_ids: grant UUIDs or slugs (a str or a list); default every grant.
    ///
    /// Returns:
    ///     A list of dicts in the order of `grant_ids`: `grant_id`, `slug`,
    ///     `ai_qualified` (bool), `ai_qualification_reasoning` (German, 2–3 sentences).
    ///
    /// Raises:
    ///     InvalidInputError: an empty prompt.
    ///     UnknownIdError: an unknown grant.
    ///     ModelError: no model, or a catalogue embedded with another model.
    #[pyo3(signature = (prompt, grant_ids=None, rules=None))]
    fn qualify<'py>(
        &self,
        py: Python<'py>,
        prompt: &str,
        grant_ids: Option<&Bound<'py, PyAny>>,
        rules: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyList>> {
        if prompt.trim().is_empty() {
            return Err(invalid("prompt: must not be empty"));
        }
        let p = self.read_prompt(prompt, rules)?;
        let ids = self.grant_selection(grant_ids)?;
        let embedder = self.embedder()?;
        let engine = &*self.engine;
        let out = py
            .detach(|| qualify::qualify(engine, embedder, &p, &ids))
            .map_err(errors::to_py)?;
        to_py_list(py, crate::qualify::qualification_values(engine, out))
    }

    /// Assigns custom categories to grants (multi-label): the categories the server
    /// shows for a partner with these categories (`custom_categories` of
    /// `GET /api/v1/grants`).
    ///
    /// Args:
    ///     categories: a list of dicts with `name` (German) and `name_en`, optional
    ///         `description`, `keywords` (list of str) and `id` (UUID str; default a
    ///         UUIDv5 of the name, the same in every call).
    ///     grant_ids: grant UUIDs or slugs (a str or a list); default every grant.
    ///
    /// Returns:
    ///     A list of dicts in the order of `grant_ids`: `grant_id`, `slug`,
    ///     `custom_categories` (`id`, `name`, `name_en`, in the order of `categories`).
    ///
    /// Raises:
    ///     InvalidInputError: a malformed category, two with the same name or id.
    ///     UnknownIdError: an unknown grant.
    ///     ModelError: no model, or a catalogue embedded with another model.
    #[pyo3(signature = (categories, grant_ids=None))]
    fn categorize<'py>(
        &self,
        py: Python<'py>,
        categories: &Bound<'py, PyAny>,
        grant_ids: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyList>> {
        let categories = crate::qualify::parse_categories(from_py(categories, "categories")?)?;
        let ids = self.grant_selection(grant_ids)?;
        let embedder = self.embedder()?;
        let engine = &*self.engine;
        let out = py
            .detach(|| qualify::categorize(engine, embedder, &categories, &ids))
            .map_err(errors::to_py)?;
        to_py_list(
            py,
            crate::qualify::category_values(engine, &categories, out),
        )
    }

    /// How a qualification prompt is read: its rules and its topic.
    ///
    /// Args:
    ///     prompt: the prompt text (German or English).
    ///     rules: optional corrections (a dict in the format of the CLI's
    ///         `--rules-file`: `regions`, `applicant_types`, `excluded_applicant_types`,
    ///         `funding_types`, `excluded_funding_types`, `excluded_kinds`,
    ///         `excluded_levels`, `non_profit`, `topic`, `include_topics`,
    ///         `exclude_topics`); each key set replaces what
    ///         was read. `qualify` takes the same argument.
    ///
    /// Returns:
    ///     A dict: `region_ids`, `eligible_entity_ids`, `only_grant_types`,
    ///     `excluded_grant_types`, `non_profit` (True or None), `applicant_types`,
    ///     `excluded_applicant_types`, `excluded_programme_kinds`, `topic` (the text
    ///     matched semantically, "" when none), `topic_items`, `excluded_topics`,
    ///     `description` (the rules in words) and `rules` (the whole reading in the
    ///     `rules` format, to edit and pass back).
    ///
    /// Raises:
    ///     InvalidInputError: an unknown key or value in `rules`, naming it.
    #[pyo3(signature = (prompt, rules=None))]
    fn qualification_rules<'py>(
        &self,
        py: Python<'py>,
        prompt: &str,
        rules: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let p = self.read_prompt(prompt, rules)?;
        to_py(py, &crate::qualify::rules_value(&self.engine, &p))
    }
}

impl PyEngine {
    /// A prompt read with the caller's corrections (a dict in the `--rules-file` format).
    fn read_prompt(
        &self,
        prompt: &str,
        rules: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<QualificationPrompt> {
        let rules = match rules.filter(|o| !o.is_none()) {
            Some(obj) => Some(
                QualificationRules::from_json(&from_py(obj, "rules")?.to_string())
                    .map_err(errors::to_py)?,
            ),
            None => None,
        };
        QualificationPrompt::read(&self.engine.catalogue, prompt, rules.as_ref())
            .map_err(errors::to_py)
    }

    /// Grants by UUID or slug (a str or a list of str); `None` = the whole catalogue.
    fn grant_selection(&self, grant_ids: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<u32>> {
        match grant_ids.filter(|o| !o.is_none()) {
            None => Ok((0..self.engine.catalogue.grants.len() as u32).collect()),
            Some(obj) => str_list(Some(obj), "grant_ids")?
                .iter()
                .map(|s| self.grant_idx(s))
                .collect(),
        }
    }

    /// One matching with the GIL released.
    /// [`grantmatch_engine::Engine::evaluate_profile`] without the GIL.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn run_evaluation(
        &self,
        py: Python<'_>,
        embedder: &Embedder,
        input: &MatchInput,
        judged: &grantmatch_engine::metrics::Judged,
        options: &MatchOptions,
        today: NaiveDate,
        k: usize,
    ) -> grantmatch_engine::Result<grantmatch_engine::metrics::ProfileScore> {
        let engine = &*self.engine;
        let scope = &self.scope;
        py.detach(|| {
            engine
                .evaluate_profile(embedder, scope, input, judged, options, today, k)
                .map(|(_, _, score)| score)
        })
    }

    pub(crate) fn run_match(
        &self,
        py: Python<'_>,
        embedder: &Embedder,
        input: &MatchInput,
        options: &MatchOptions,
        today: NaiveDate,
        limit: usize,
    ) -> grantmatch_engine::Result<Vec<Match>> {
        let engine = &*self.engine;
        let scope = &self.scope;
        py.detach(|| {
            engine
                .match_profile_up_to(embedder, scope, input, options, today, limit)
                .map(|(_, m)| m)
        })
    }
}
