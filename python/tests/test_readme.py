"""The README's example script runs as shown."""

from __future__ import annotations

import re
import subprocess
import sys

from conftest import REPO, clean_env

README = REPO / "python" / "README.md"


def python_blocks():
    return re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)


def test_readme_session_runs(tmp_path, data_dir, model_dir):
    blocks = python_blocks()
    assert len(blocks) == 1
    script = tmp_path / "session.py"
    script.write_text(blocks[0], encoding="utf-8")
    out = subprocess.run(
        [sys.executable, str(script)],
        cwd=REPO,
        env=clean_env(GRANTMATCH_DATA_DIR=data_dir, GRANTMATCH_MODEL_DIR=model_dir),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("Engine(")
    assert sum(1 for line in lines if line.startswith("keyword=")) == 9
    assert any(line.startswith("best: keyword=") for line in lines)
    assert sum(1 for line in lines if re.match(r"p\d\d ", line)) == 42
