"""The docs as tests: every ```python block of README.md and docs/*.md runs, each in a fresh
interpreter with ACCEL_BACKEND=host, and exits 0.

A block that cannot run here is marked by its first line, a comment starting `# not run`
(e.g. `# not run: needs PyTorch`); it is reported skipped with that line. Sessions and output
(```pycon, ```text, ```sh) are other fences, not run.
"""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys
from typing import List, Optional, Tuple

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
DOCS = [REPO / "README.md"] + sorted((REPO / "docs").glob("*.md"))
FENCE = re.compile(r"^```(\S*)\s*$")


def python_blocks(path: pathlib.Path) -> List[Tuple[str, str]]:
    """(FILE:LINE, code) of each ```python block of the file."""
    blocks: List[Tuple[str, str]] = []
    lang: Optional[str] = None  # the open block's language
    start, lines = 0, []  # its first line and text
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        m = FENCE.match(line)
        if m and lang is None:
            lang, start, lines = m.group(1), number, []
        elif line.startswith("```") and lang is not None:
            if lang == "python":
                blocks.append((f"{path.relative_to(REPO)}:{start}", "\n".join(lines) + "\n"))
            lang = None
        elif lang is not None:
            lines.append(line)
    return blocks


BLOCKS = [b for doc in DOCS for b in python_blocks(doc)]


def test_the_python_page_has_blocks() -> None:
    """docs/python.md, the Python page, is among the docs and its examples are code that runs."""
    assert any(where.startswith("docs/python.md:") for where, _ in BLOCKS), [w for w, _ in BLOCKS]


@pytest.mark.parametrize("where, code", BLOCKS, ids=[w for w, _ in BLOCKS])
def test_python_block_runs(where: str, code: str, tmp_path: pathlib.Path) -> None:
    first = code.lstrip().splitlines()[0] if code.strip() else ""
    if first.startswith("# not run"):
        pytest.skip(f"{where}: {first}")
    env = dict(os.environ, ACCEL_BACKEND="host")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, f"{where}: the block exits {done.returncode}:\n{done.stdout}{done.stderr}"
