"""Shared fixtures of the grantmatch Python test suite.

The catalogue of ``fixtures/catalogue`` is imported once per session into a cache under
``target/pytest-data/`` (override with ``GRANTMATCH_TEST_CACHE``). The first import
embeds the 1,434 grants (about two minutes on two cores); later sessions re-import
with the previous snapshot's vectors, which re-embeds nothing unless grant texts or the
engine's passage text changed, so the snapshot always matches the current engine.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import socket
import subprocess
import urllib.error
import urllib.request
from pathlib import Path
from typing import IO, Any, Dict, Iterator, List, Optional, Tuple

import pytest

import grantmatch

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "fixtures"
CATALOGUE = FIXTURES / "catalogue"
EVAL_DIR = FIXTURES / "eval"
TINY = FIXTURES / "test-catalogues" / "tiny"
CACHE = Path(os.environ.get("GRANTMATCH_TEST_CACHE", REPO / "target" / "pytest-data"))
# The server's variant: results must equal POST /matching.
VARIANT = "fp32"


@pytest.fixture(scope="session")
def model_dir() -> str:
    d = grantmatch.default_model_dir()
    if not Path(d, "model.onnx").is_file():
        pytest.fail(
            f"the embedding model is missing in {d}: run `make model` (or scripts/model/fetch.sh) first",
            pytrace=False,
        )
    return d


@pytest.fixture(scope="session")
def data_dir(model_dir: str) -> str:
    """A data directory with the fixtures catalogue imported with fp32 embeddings."""
    target = CACHE / VARIANT
    target.mkdir(parents=True, exist_ok=True)
    with open(CACHE / f".{VARIANT}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # concurrent sessions import one at a time
        summary = grantmatch.import_catalogue(
            CATALOGUE, target, model_dir, model_variant=VARIANT
        )
    assert summary["grants"] > 1000
    return str(target)


@pytest.fixture(scope="session")
def engine(data_dir: str, model_dir: str) -> grantmatch.Engine:
    return grantmatch.Engine.open(data_dir, model_dir, model_variant=VARIANT)


@pytest.fixture(scope="session")
def eval_set() -> Any:
    return grantmatch.load_eval_set(EVAL_DIR)


@pytest.fixture(scope="session")
def eval_requests(eval_set: Any) -> Dict[str, Dict[str, Any]]:
    """Request bodies of the evaluation profiles by id."""
    profiles, _ = eval_set
    return {p["id"]: p["request"] for p in profiles}


@pytest.fixture(scope="session")
def cli_binary() -> str:
    """The release CLI (`run-tests.sh` builds it; built here when missing)."""
    target = Path(os.environ.get("CARGO_TARGET_DIR") or REPO / "target")
    binary = target / "release" / "grantmatch"
    if not binary.is_file():
        subprocess.run(
            ["cargo", "build", "--release", "-p", "grantmatch-cli"],
            cwd=REPO,
            check=True,
        )
    return str(binary)


def clean_env(**extra: str) -> Dict[str, str]:
    """The environment without any GRANTMATCH_* setting, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRANTMATCH_")}
    env.update(extra)
    return env


@pytest.fixture(scope="session")
def tiny_engine(tmp_path_factory, model_dir: str) -> grantmatch.Engine:
    """The tiny test catalogue (12 grants with deadlines) embedded with the int8 model."""
    d = tmp_path_factory.mktemp("tiny") / "data"
    grantmatch.import_catalogue(TINY, d, model_dir, model_variant="int8")
    return grantmatch.Engine.open(d, model_dir, model_variant="int8")


@pytest.fixture()
def tiny_data_dir(tmp_path: Path) -> Iterator[str]:
    """A fresh data directory with the tiny test catalogue, without embeddings."""
    d = tmp_path / "data"
    grantmatch.import_catalogue(TINY, d, embeddings=False)
    yield str(d)
    shutil.rmtree(d, ignore_errors=True)


def first(items: List[Dict[str, Any]], **match: Any) -> Dict[str, Any]:
    """The first dict whose fields equal `match`."""
    for it in items:
        if all(it.get(k) == v for k, v in match.items()):
            return it
    raise AssertionError(f"no item with {match}")


def read_json(path: Path) -> Any:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def free_port() -> int:
    """A free TCP port on the loopback interface."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def json_request(
    base: str, method: str, path: str, token: str, body: Optional[Any] = None
) -> Tuple[int, Any]:
    """One API call with a bearer token: (status, decoded JSON body or None)."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data, method=method)
    req.add_header("Authorization", f"Bearer {token}")
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as e:
        raw = e.read()
        return e.code, json.loads(raw) if raw else None


def stop_server(proc: subprocess.Popen, log: IO[Any]) -> None:
    """Stops a `grantmatch serve` process (SIGTERM, then SIGKILL after 30 s)."""
    proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    log.close()
