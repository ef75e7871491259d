"""The module's surface: names, docstrings, typing files, the stub."""

from __future__ import annotations

import ast
import inspect
import re
import subprocess
import sys
from pathlib import Path

import pytest

import grantmatch
from conftest import REPO

PACKAGE = Path(grantmatch.__file__).parent
STUB = PACKAGE / "_grantmatch.pyi"


def public_names():
    return [n for n in grantmatch.__all__ if not n.startswith("__")]


def test_exports_and_constants():
    for name in grantmatch.__all__:
        assert hasattr(grantmatch, name), name
    assert grantmatch.DIM == 384
    assert grantmatch.MAX_RESULTS == 25
    assert re.fullmatch(r"\d+\.\d+\.\d+.*", grantmatch.__version__)


def test_every_public_name_has_a_docstring():
    missing = []
    for name in public_names():
        obj = getattr(grantmatch, name)
        if isinstance(obj, (int, str)):
            continue
        if not (obj.__doc__ or "").strip():
            missing.append(name)
        if inspect.isclass(obj):
            for attr, member in vars(obj).items():
                if attr.startswith("_"):
                    continue
                if not (getattr(member, "__doc__", None) or "").strip():
                    missing.append(f"{name}.{attr}")
    assert grantmatch.__doc__ and grantmatch.__doc__.strip()
    assert not missing, f"without docstring: {missing}"


def test_typing_files_are_installed():
    assert (PACKAGE / "py.typed").is_file()
    assert STUB.is_file()


def stub_tree():
    return ast.parse(STUB.read_text(encoding="utf-8"))


def stub_members(cls: ast.ClassDef):
    names = set()
    for n in cls.body:
        if isinstance(n, ast.FunctionDef):
            names.add(n.name)
        elif isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name):
            names.add(n.target.id)
    return names


def params(fn: ast.FunctionDef):
    a = fn.args
    names = [p.arg for p in a.posonlyargs + a.args + a.kwonlyargs]
    if a.kwarg:
        names.append(a.kwarg.arg)
    return [n for n in names if n not in ("self", "cls")]


def test_stub_declares_every_public_name_and_member():
    tree = stub_tree()
    declared = set()
    classes = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            declared.add(node.name)
        if isinstance(node, ast.ClassDef):
            classes[node.name] = node
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            declared.add(node.target.id)
    native = [n for n in grantmatch.__all__ if n != "load_eval_set"]
    assert set(native) <= declared, set(native) - declared
    stub_all = next(
        ast.literal_eval(n.value) for n in tree.body
        if isinstance(n, ast.Assign) and any(getattr(t, "id", "") == "__all__" for t in n.targets)
    )
    assert sorted(stub_all) == sorted(native)
    for name in ("Engine", "MatchWeights", "Calibration"):
        runtime = {m for m in vars(getattr(grantmatch, name)) if not m.startswith("_")}
        stub = {m for m in stub_members(classes[name]) if not m.startswith("_")}
        assert runtime == stub, (name, runtime ^ stub)


def test_stub_signatures_match_the_runtime():
    """Parameter names and order in the stub are those of the compiled functions."""
    tree = stub_tree()
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    for name, fn in functions.items():
        runtime = list(inspect.signature(getattr(grantmatch, name)).parameters)
        assert params(fn) == runtime, name
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
        obj = getattr(grantmatch, cls.name)
        for fn in (n for n in cls.body if isinstance(n, ast.FunctionDef)):
            if fn.name.startswith("__") and fn.name != "__new__":
                continue
            if any(isinstance(d, ast.Name) and d.id == "property" for d in fn.decorator_list):
                assert fn.name in vars(obj), fn.name
                continue
            target = obj if fn.name == "__new__" else getattr(obj, fn.name)
            runtime = [p for p in inspect.signature(target).parameters if p != "self"]
            assert params(fn) == runtime, f"{cls.name}.{fn.name}"


def test_exception_hierarchy():
    base = grantmatch.GrantmatchError
    assert issubclass(base, Exception)
    for sub in (
        grantmatch.InvalidInputError,
        grantmatch.UnknownIdError,
        grantmatch.ModelError,
        grantmatch.CatalogueError,
    ):
        assert issubclass(sub, base)
        assert sub.__module__ == "grantmatch"
        assert sub.__doc__


def test_documented_default_weights_are_the_engines():
    """The defaults written in the stub and the README are those of the engine."""
    defaults = grantmatch.MatchWeights().to_dict()
    calibration = grantmatch.Calibration().to_dict()
    for doc in (STUB, REPO / "python" / "README.md"):
        text = doc.read_text(encoding="utf-8")
        for name, value in {**defaults, **calibration}.items():
            assert re.search(rf"\b{name}\b\W+{re.escape(repr(value))}\b", text) or re.search(
                rf"\b{name}={re.escape(repr(value))}", text
            ), f"{doc.name}: default {name}={value!r} is not documented"


def test_stubtest_accepts_the_stub(tmp_path):
    """mypy's stubtest compares the stub with the compiled module."""
    pytest.importorskip("mypy")
    out = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "grantmatch"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )
    assert out.returncode == 0, out.stdout + out.stderr
