"""grantmatch: the grant catalogue and matching engine, for notebooks and scripts.

A thin typed layer over the Rust engine that serves the grantmatch API. Open an
imported catalogue with :meth:`Engine.open`, list grants and vocabularies as plain dicts
(the API's field names), embed texts into NumPy arrays, match organisation profiles with
your own :class:`MatchWeights` (``explain=True`` shows every score component), and
measure the ranking on labelled profiles with :func:`evaluate`.

Errors are :class:`GrantmatchError` subclasses: :class:`InvalidInputError`,
:class:`UnknownIdError`, :class:`ModelError` and :class:`CatalogueError`.
"""

from __future__ import annotations

import csv
import json
import os
from typing import Any, Dict, List, Tuple, Union

from ._grantmatch import (
    DIM,
    MAX_RESULTS,
    Calibration,
    CatalogueError,
    Engine,
    GrantmatchError,
    InvalidInputError,
    MatchWeights,
    ModelError,
    UnknownIdError,
    __version__,
    default_data_dir,
    default_model_dir,
    evaluate,
    import_catalogue,
)

__all__ = [
    "DIM",
    "MAX_RESULTS",
    "Calibration",
    "CatalogueError",
    "Engine",
    "GrantmatchError",
    "InvalidInputError",
    "MatchWeights",
    "ModelError",
    "UnknownIdError",
    "__version__",
    "default_data_dir",
    "default_model_dir",
    "evaluate",
    "import_catalogue",
    "load_eval_set",
]


def load_eval_set(
    directory: Union[str, "os.PathLike[str]"],
) -> Tuple[List[Dict[str, Any]], Dict[str, Dict[str, int]]]:
    """Reads an evaluation set in the format of ``fixtures/eval``.

    Args:
        directory: a directory with ``profiles.json`` (a list of
            ``{"id": str, "request": dict}``, each ``request`` a ``POST /matching`` body)
            and ``qrels.tsv`` (tab-separated, header ``profile_id grant_slug grade``).

    Returns:
        ``(profiles, qrels)``, ready for :func:`evaluate`: the list from
        ``profiles.json`` and ``{profile_id: {grant_slug: grade}}``.

    Raises:
        FileNotFoundError: a file is missing.
        InvalidInputError: a file is malformed (the message names file and line).
    """
    profiles_path = os.path.join(os.fspath(directory), "profiles.json")
    qrels_path = os.path.join(os.fspath(directory), "qrels.tsv")
    with open(profiles_path, encoding="utf-8") as f:
        try:
            profiles = json.load(f)
        except json.JSONDecodeError as e:
            raise InvalidInputError(f"{profiles_path}: invalid JSON: {e}") from e
    if not isinstance(profiles, list) or not all(
        isinstance(p, dict) and isinstance(p.get("id"), str) and "request" in p
        for p in profiles
    ):
        raise InvalidInputError(
            f'{profiles_path}: expected a list of {{"id": str, "request": object}}'
        )
    qrels: Dict[str, Dict[str, int]] = {}
    with open(qrels_path, encoding="utf-8", newline="") as f:
        rows = csv.reader(f, delimiter="\t")
        for line, row in enumerate(rows, start=1):
            if line == 1 or not any(cell.strip() for cell in row):
                continue  # header, blank lines
            if len(row) != 3:
                raise InvalidInputError(
                    f"{qrels_path}:{line}: expected 3 tab-separated columns, got {len(row)}"
                )
            profile_id, slug, grade = (cell.strip() for cell in row)
            try:
                qrels.setdefault(profile_id, {})[slug] = int(grade)
            except ValueError as e:
                raise InvalidInputError(
                    f"{qrels_path}:{line}: grade `{grade}` is not an integer"
                ) from e
    return profiles, qrels
