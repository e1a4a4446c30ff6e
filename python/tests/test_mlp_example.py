"""python/examples/mlp_train.py: its losses equal the C++ mlp_train's for one seed.

Two comparisons: with mlp_train's own training loop bound as
accel.mlp.MlpModel (--compare-cpp, every epoch, in the example's process),
and with the mlp_train program of the build tree conftest.py uses
(bin/mlp_train; skipped with the reason where there is none).
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
                           str(seed), "--no-torch", "--compare-cpp", "--json", str(out)], capture_output=True,
                          text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    record = json.loads(out.read_text())
    assert record["compare_cpp"]["losses_equal"], record["compare_cpp"]  # mlp::Model's loop, epoch by epoch
    return record["results"][0]


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
