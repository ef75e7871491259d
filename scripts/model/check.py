#!/usr/bin/env python3
"""Check the model directory against its manifest.json (standard library only,
no network).

    check.py DIR            full check: every file's size and sha256
    check.py --quick DIR    sizes and recipe version only (used by fetch.sh
                            to decide in well under a second whether to rebuild)

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
    "tokenizer.json",
    "config.json",
    "special_tokens_map.json",
    "tokenizer_config.json",
    "libonnxruntime.so",
)


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


def main(argv: list[str]) -> int:
    quick = "--quick" in argv
    args = [a for a in argv if not a.startswith("--")]
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        return 2
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
