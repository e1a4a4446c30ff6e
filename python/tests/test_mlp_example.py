"""python/examples/mlp_train.py: its losses equal the C++ mlp_train's for one seed.

mlp_train is found in the build tree conftest.py uses (bin/mlp_train); where
there is none the comparison is skipped with the reason, and the example
still has to run and learn.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

from conftest import BUILD

EXAMPLE = pathlib.Path(__file__).resolve().parents[1] / "examples" / "mlp_train.py"
EPOCHS = 30


def run_example(tmp_path: pathlib.Path, seed: int) -> dict:
    out = tmp_path / f"py-{seed}.json"
    done = subprocess.run([sys.executable, str(EXAMPLE), "--backend", "host", "--epochs", str(EPOCHS), "--seed",
                           str(seed), "--no-torch", "--json", str(out)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(out.read_text())["results"][0]


@pytest.mark.parametrize("seed", [1, 7])
def test_final_loss_equals_mlp_train(tmp_path: pathlib.Path, seed: int) -> None:
    py = run_example(tmp_path, seed)
    losses = py["loss"]
    assert len(losses) == EPOCHS and losses[-1] < losses[0]  # it learns
    program = BUILD / "bin" / "mlp_train" if BUILD is not None else None
    if program is None or not os.access(program, os.X_OK):
        pytest.skip(f"no C++ mlp_train to compare with (looked for {program}; build the release preset)")
    done = subprocess.run([str(program), "--backends", "host", "--epochs", str(EPOCHS), "--seed", str(seed),
                           "--format", "json"], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    cpp = json.loads(done.stdout)["results"][0]["loss"]
    # The same kernels in the same order on the same data: equal to float64 rounding of the float32 losses.
    for e, (a, b) in enumerate(zip(losses, cpp)):
        assert abs(a - b) <= 1e-12 * max(abs(b), 1.0), f"epoch {e + 1}: Python {a!r}, C++ {b!r}"
