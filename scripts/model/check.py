#!/usr/bin/env python3
"""Check the model directory against its manifest.json (standard library only,
no network).

    check.py DIR            full check: every file's size and sha256
    check.py --quick DIR    sizes and recipe version only (used by fetch.sh
                            to decide in well under a second whether to rebuild)
    check.py --upgradable DIR
                            exit 0 when the directory is complete except for
                            files added to the recipe later (ADDED_FILES), which
                            fetch.sh then builds without touching the others

Exit status 0 when the directory matches, 1 otherwise (reason on stderr).
"""
from __future__ import annotations

import hashlib
import json
import os
import sys

# Bump when the conversion recipe changes in a way that changes the files;
# fetch.sh then rebuilds a model directory written by an older recipe.
RECIPE_VERSION = 1

REQUIRED_FILES = (
    "model.onnx",
    "model_int8.onnx",
    "model_q4.onnx",
    "tokenizer.json",
    "config.json",
    "special_tokens_map.json",
    "tokenizer_config.json",
    "libonnxruntime.so",
)

# Files added to recipe 1 after directories were built with it: a directory that
# lacks only these is upgraded in place (setup_model.py --add-missing), not rebuilt.
ADDED_FILES = ("model_q4.onnx",)


def sha256_file(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def check(model_dir: str, quick: bool) -> list[str]:
    problems: list[str] = []
    mpath = os.path.join(model_dir, "manifest.json")
    try:
        with open(mpath) as fh:
            manifest = json.load(fh)
    except FileNotFoundError:
        return [f"no manifest.json in {model_dir} (missing or interrupted set-up)"]
    except (OSError, ValueError) as e:
        return [f"unreadable manifest {mpath}: {e}"]
    if manifest.get("recipe_version") != RECIPE_VERSION:
        problems.append(f"manifest recipe_version {manifest.get('recipe_version')} != {RECIPE_VERSION}")
    files = manifest.get("files", {})
    for name in REQUIRED_FILES:
        if name not in files:
            problems.append(f"manifest lists no {name}")
    for name, meta in sorted(files.items()):
        path = os.path.join(model_dir, name)
        try:
            size = os.path.getsize(path)
        except OSError:
            problems.append(f"missing file {name}")
            continue
        if size != meta.get("size"):
            problems.append(f"{name}: size {size} != manifest {meta.get('size')}")
            continue
        if not quick and sha256_file(path) != meta.get("sha256"):
            problems.append(f"{name}: sha256 differs from manifest")
    return problems


def missing_added_files(model_dir: str) -> list[str] | None:
    """The ADDED_FILES a directory lacks when that is its only problem (sizes checked,
    not hashes); None when anything else is wrong or nothing is missing."""
    problems = check(model_dir, quick=True)
    missing = [n for n in ADDED_FILES if f"manifest lists no {n}" in problems]
    rest = [p for p in problems if not any(p == f"manifest lists no {n}" for n in missing)]
    return missing if missing and not rest else None


def main(argv: list[str]) -> int:
    quick = "--quick" in argv
    args = [a for a in argv if not a.startswith("--")]
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    if "--upgradable" in argv:
        missing = missing_added_files(args[0])
        if missing:
            print(" ".join(missing))
            return 0
        return 1
    problems = check(args[0], quick)
    if problems:
        for p in problems:
            print(f"model check: {p}", file=sys.stderr)
        return 1
    if not quick:
        print(f"model ok: {args[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
