"""Type stubs of the native module ``grantmatch._grantmatch`` (re-exported by ``grantmatch``)."""

import datetime
import os
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union, final

import numpy as np
import numpy.typing as npt

__all__ = [
    "Calibration",
    "CatalogueError",
    "DIM",
    "Engine",
    "GrantmatchError",
    "InvalidInputError",
    "MAX_RESULTS",
    "MatchWeights",
    "ModelError",
    "UnknownIdError",
    "__version__",
    "default_data_dir",
    "default_model_dir",
    "evaluate",
    "import_catalogue",
]
__version__: str
DIM: int
"""Dimension of the embeddings (384, multilingual-e5-small)."""
MAX_RESULTS: int
"""Most matches one matching returns (25)."""

_StrPath = Union[str, "os.PathLike[str]"]
_DateLike = Union[datetime.date, str]
_WeightsLike = Union["MatchWeights", Mapping[str, float]]
_CalibrationLike = Union["Calibration", Mapping[str, float]]
_Json = Dict[str, Any]

class GrantmatchError(Exception):
    """Base class of every error raised by grantmatch; the message is the engine's."""

class InvalidInputError(GrantmatchError):
    """Invalid input: a profile field, weight, option, filter value, or catalogue record
    that does not validate. The message names the field or value."""

class UnknownIdError(GrantmatchError):
    """No record has this UUID, slug or name (grant, provider, region, grant area, ...)."""

class ModelError(GrantmatchError):
    """The embedding model is missing, cannot be loaded, does not fit the catalogue's
    embeddings, or the catalogue was imported without embeddings."""

class CatalogueError(GrantmatchError):
    """The data directory has no imported catalogue, or it cannot be read (I/O error,
    corrupt snapshot, search index failure)."""

@final
class MatchWeights:
    """Weights of the score components of a match (relative: only ratios matter).

    Defaults (the engine's, used by the server): semantic=0.45, keyword=0.35,
    region=0.15, target_group=0.04, eligibility=0.15, deadline=0.02, budget=0.02.
    Every weight must be finite and >= 0, and at least one positive.
    """

    semantic: float
    """Similarity of profile and programme text (multilingual embeddings)."""
    keyword: float
    """Lexical fit: BM25 of the profile text, averaged with the share of keywords found."""
    region: float
    """Region specificity: a programme of the organisation's own Land beats a national one."""
    target_group: float
    """Overlap of target groups."""
    eligibility: float
    """Eligible entity and non-profit fit."""
    deadline: float
    """An open deadline."""
    budget: float
    """Project budget within the programme's maximum amount."""

    def __new__(
        cls,
        *,
        semantic: Optional[float] = None,
        keyword: Optional[float] = None,
        region: Optional[float] = None,
        target_group: Optional[float] = None,
        eligibility: Optional[float] = None,
        deadline: Optional[float] = None,
        budget: Optional[float] = None,
    ) -> "MatchWeights":
        """Weights; a field left out (None) takes its default."""
    def to_dict(self) -> Dict[str, float]:
        """The weights as a dict (field name -> weight)."""
    @staticmethod
    def from_dict(d: Mapping[str, float]) -> "MatchWeights":
        """Weights from a dict; missing fields take their default, unknown fields raise
        InvalidInputError."""
    def replace(self, **changes: float) -> "MatchWeights":
        """A copy with some fields replaced: ``w.replace(keyword=0.3)``."""
    def __eq__(self, value: object, /) -> bool: ...

@final
class Calibration:
    """Calibration of the semantic component: cosines in [cosine_low, cosine_high] map
    linearly onto [0, 1] (clamped).

    Defaults (the engine's, used by the server): cosine_low=0.78, cosine_high=0.88.
    """

    cosine_low: float
    """Cosine mapped to 0."""
    cosine_high: float
    """Cosine mapped to 1 (must exceed cosine_low)."""

    def __new__(
        cls, *, cosine_low: Optional[float] = None, cosine_high: Optional[float] = None
    ) -> "Calibration":
        """A calibration; a field left out (None) takes its default."""
    def to_dict(self) -> Dict[str, float]:
        """The calibration as a dict."""
    def __eq__(self, value: object, /) -> bool: ...

@final
class Engine:
    """An imported grant catalogue and the embedding model, ready to list, embed and match.

    Create one with :meth:`Engine.open`. Immutable and safe to share between threads;
    heavy calls release the GIL.
    """

    @staticmethod
    def open(
        data_dir: Optional[_StrPath] = None,
        model_dir: Optional[_StrPath] = None,
        *,
        model_variant: Optional[str] = None,
        threads: Optional[int] = None,
        load_model: bool = True,
    ) -> "Engine":
        """Opens the catalogue imported into ``data_dir`` and loads the model.

        Defaults: ``data_dir`` = $GRANTMATCH_DATA_DIR or ``./data``; ``model_dir`` =
        $GRANTMATCH_MODEL_DIR or ``~/.cache/grantmatch/model``; ``model_variant`` =
        $GRANTMATCH_MODEL_VARIANT or ``"q4"`` (fp32's vectors in a sixth of the memory;
        ``"fp32"`` is the reference, ``"int8"`` about twice as fast).
        ``load_model=False`` opens the catalogue alone.

        Raises CatalogueError (no catalogue) or ModelError (model missing).
        """
    @property
    def data_dir(self) -> str:
        """The data directory this engine was opened from."""
    @property
    def snapshot_dir(self) -> Optional[str]:
        """The snapshot directory of the loaded catalogue."""
    @property
    def model_dir(self) -> str:
        """The model directory."""
    @property
    def model_id(self) -> Optional[str]:
        """Id of the loaded model (e.g. ``"multilingual-e5-small/fp32"``), None without one."""
    @property
    def embeddings_model_id(self) -> Optional[str]:
        """Id of the model the catalogue was embedded with, None without embeddings."""
    def __len__(self) -> int:
        """Number of grants in the catalogue."""
    def grants(
        self,
        q: Optional[str] = None,
        *,
        region_ids: Union[str, Sequence[str], None] = None,
        grant_area_ids: Union[str, Sequence[str], None] = None,
        grant_provider_id: Optional[str] = None,
        grant_type: Optional[str] = None,
        limit: Optional[int] = None,
    ) -> List[_Json]:
        """Grants as dicts with the fields of ``GET /api/v1/grants`` items, without a
        partner's own annotations (``ai_qualified``, ``ai_qualification_reasoning``,
        ``custom_categories``).

        Filters combine with AND, values of one filter with OR. Regions and areas are
        given as UUID, slug, code or name; the provider as UUID or slug. Without ``q``
        ordered by title, with ``q`` by relevance.

        Raises UnknownIdError (unknown region/area/provider), InvalidInputError (grant type).
        """
    def grant(self, id_or_slug: str) -> _Json:
        """One grant with the fields of ``GET /api/v1/grants/{id}`` except a partner's own
        annotations; UnknownIdError if none."""
    def providers(
        self, q: Optional[str] = None, *, provider_type: Optional[str] = None
    ) -> List[_Json]:
        """Grant providers (fields of ``GET /api/v1/grant_providers``) ordered by name."""
    def provider(self, id_or_slug: str) -> _Json:
        """One grant provider; UnknownIdError if none."""
    def regions(self) -> List[_Json]:
        """All regions, flat (``GET /api/v1/regions?flat=true``)."""
    def grant_areas(self) -> List[_Json]:
        """All grant areas, flat (``GET /api/v1/grant_areas?flat=true&include_parent=true``)."""
    def eligible_entities(self) -> List[_Json]:
        """All eligible entities (``GET /api/v1/eligible_entities``)."""
    def target_groups(self) -> List[_Json]:
        """All target groups (``GET /api/v1/target_groups``)."""
    def embed(
        self, texts: Union[str, Sequence[str]], kind: str = "query"
    ) -> npt.NDArray[np.float32]:
        """Embeds texts: float32 array (len(texts), 384), L2-normalised rows.

        ``kind`` is ``"query"`` (profiles, searches) or ``"passage"`` (documents).
        """
    def grant_embeddings(self) -> Tuple[npt.NDArray[np.float32], List[str]]:
        """The catalogue's embeddings (len(engine), 384) and the grant UUIDs in row order.

        Raises ModelError when the catalogue was imported without embeddings.
        """
    def match(
        self,
        profile: Union[Mapping[str, Any], str],
        project: Union[Mapping[str, Any], str, None] = None,
        *,
        locale: Optional[str] = None,
        limit: Optional[int] = 25,
        weights: Optional[_WeightsLike] = None,
        calibration: Optional[_CalibrationLike] = None,
        explain: bool = False,
        today: Optional[_DateLike] = None,
        options: Optional[Mapping[str, Any]] = None,
    ) -> List[_Json]:
        """Ranks grants for a profile: the results of ``POST /api/v1/matching``.

        ``options``: every match option in one dict, the format of the CLI's
        ``--options`` file (``weights``, ``calibration``, ``keyword_factor_en``,
        ``glossary_weight``, ``need_weight``, ``need_centering``, ``topic_open_semantic``,
        ``topic_open_wanted_semantic``, ``measure_semantic``, ``national_region``); ``weights``/``calibration`` replace parts.

        ``profile`` is an ``organization_profile`` dict, a whole request body, or a
        description string. Each match: ``rank``, ``grant_id``, ``slug``, ``title``,
        ``relevance_score`` (0-100), ``match_category``, ``match_reason``, ``checks``,
        ``matched_need``, ``planned_measure``; with
        ``explain=True`` also ``components`` (cosine, semantic, keyword, region,
        target_group, eligibility, deadline, budget) and ``matched_keywords``.

        ``limit``: 1 to 25, as the API returns; ``None``: every programme that reached
        the rule stage (a few hundred), ranked, for offline re-ranking experiments.

        Raises InvalidInputError (the message names the field) or ModelError.
        """

    def qualify(
        self,
        prompt: str,
        grant_ids: Union[str, Sequence[str], None] = None,
        rules: Optional[Mapping[str, Any]] = None,
    ) -> List[_Json]:
        """The server's AI qualification of grants for a partner's prompt.

        One dict per grant (default every grant, else UUIDs or slugs in the given
        order): ``grant_id``, ``slug``, ``ai_qualified``, ``ai_qualification_reasoning``.
        ``rules``: corrections to the prompt's reading, as in ``qualification_rules``.
        Raises InvalidInputError (empty prompt, bad rules), UnknownIdError or ModelError.
        """
    def categorize(
        self,
        categories: Sequence[Mapping[str, Any]],
        grant_ids: Union[str, Sequence[str], None] = None,
    ) -> List[_Json]:
        """The server's custom categories of grants (multi-label).

        ``categories``: dicts with ``name``, ``name_en`` and optional ``description``,
        ``keywords`` and ``id`` (default a UUIDv5 of the name). One dict per grant:
        ``grant_id``, ``slug``, ``custom_categories`` (``id``, ``name``, ``name_en``).
        Raises InvalidInputError, UnknownIdError or ModelError.
        """
    def qualification_rules(
        self, prompt: str, rules: Optional[Mapping[str, Any]] = None
    ) -> _Json:
        """How a prompt is read: ``region_ids``, ``eligible_entity_ids``,
        ``only_grant_types``, ``excluded_grant_types``, ``non_profit``,
        ``applicant_types``, ``excluded_applicant_types``, ``excluded_programme_kinds``,
        ``excluded_programme_levels``, ``topic``, ``topic_items``, ``excluded_topics``,
        ``description`` and ``rules`` (the whole reading in the format of the CLI's
        ``--rules-file``: ``regions``, ``applicant_types``, ``excluded_applicant_types``,
        ``funding_types``, ``excluded_funding_types``, ``excluded_kinds``,
        ``excluded_levels``, ``non_profit``, ``topic``, ``include_topics``,
        ``exclude_topics``). ``rules`` given: each key replaces
        what was read; an unknown key or value raises InvalidInputError naming it."""

def evaluate(
    engine: Engine,
    profiles: Union[Sequence[Mapping[str, Any]], Mapping[str, Mapping[str, Any]]],
    qrels: Mapping[str, Mapping[str, int]],
    *,
    k: int = 10,
    weights: Optional[_WeightsLike] = None,
    calibration: Optional[_CalibrationLike] = None,
    today: Optional[_DateLike] = None,
    options: Optional[Mapping[str, Any]] = None,
) -> Dict[str, Any]:
    """nDCG@k and Recall@25 of the matching on labelled profiles (``options`` as in
    ``Engine.match``).

    Returns ``{f"ndcg@{k}", "recall@25", "k", "profiles", "model", "options",
    "per_profile"}``; each per-profile row has ``profile``, ``split`` (``tune`` /
    ``heldout`` from the profile, or None), ``f"ndcg@{k}"``, ``recall@25``, ``judged``,
    ``relevant`` and ``ranked`` (slugs). A profile is ``{"id", "request", "split"?}`` or
    the ``POST /matching`` body itself (its ``organization_id`` is the id).
    """

def import_catalogue(
    source_dir: _StrPath,
    data_dir: Optional[_StrPath] = None,
    model_dir: Optional[_StrPath] = None,
    *,
    model_variant: Optional[str] = None,
    embeddings: bool = True,
    threads: Optional[int] = None,
) -> Dict[str, Any]:
    """Validates, embeds, re-classifies derived labels and installs a catalogue
    directory, as ``grantmatch import``.

    Returns ``snapshot``, ``fingerprint`` (SHA-256 over the snapshot's records and
    embeddings, as ``GET /health`` reports it), the record counts, ``embedded``/``reused``
    vector counts and
    ``reclassified`` (grants whose derived labels were re-assigned by embeddings) and
    ``previous_vectors_error`` (why the previous snapshot's vectors could not be reused,
    every grant then embedded again; ``None`` normally). It writes the data directory
    only: servers on a shared PostgreSQL database follow the catalogue ``grantmatch
    import`` records there.
    """

def default_data_dir() -> str:
    """$GRANTMATCH_DATA_DIR, else ``./data``."""

def default_model_dir() -> str:
    """$GRANTMATCH_MODEL_DIR, else ``~/.cache/grantmatch/model``."""
