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


# Both programs on the native path: `auto` measures each product shape in the
# process that first meets it, so under load two processes may choose
# differently and round differently.
NATIVE = {**os.environ, "ACCEL_OP_PATH": "native"}


def run_example(tmp_path: pathlib.Path, seed: int) -> dict:
    out = tmp_path / f"py-{seed}.json"
    done = subprocess.run([sys.executable, str(EXAMPLE), "--backends", "host", "--epochs", str(EPOCHS), "--seed",
                           str(seed), "--no-torch", "--compare-cpp", "--json", str(out)], capture_output=True,
                          text=True, check=False, env=NATIVE)
    assert done.returncode == 0, done.stdout + done.stderr
    record = json.loads(out.read_text())
    assert record["compare_cpp"][0]["losses_equal"], record["compare_cpp"]  # mlp::Model's loop, epoch by epoch
    result = record["results"][0]
    # The first epoch apart from the steady ones (epochs 2..N: median within min..max).
    assert result["first_epoch_ms"] > 0
    assert 0 < result["steady_min_ms"] <= result["steady_median_ms"] <= result["steady_max_ms"]
    assert "1st ms" in done.stdout and "min..max of epochs 2..N" in done.stdout
    return result


@pytest.mark.parametrize("seed", [1, 7])
def test_final_loss_equals_mlp_train(tmp_path: pathlib.Path, seed: int) -> None:
    py = run_example(tmp_path, seed)
    losses = py["loss"]
    assert len(losses) == EPOCHS and losses[-1] < losses[0]  # it learns
    program = BUILD / "bin" / "mlp_train" if BUILD is not None else None
    if program is None or not os.access(program, os.X_OK):
        pytest.skip(f"no C++ mlp_train to compare with (looked for {program}; build the release preset)")
    done = subprocess.run([str(program), "--backends", "host", "--epochs", str(EPOCHS), "--seed", str(seed),
                           "--format", "json"], capture_output=True, text=True, check=False, env=NATIVE)
    assert done.returncode == 0, done.stderr
    cpp = json.loads(done.stdout)["results"][0]["loss"]
    # The same kernels in the same order on the same data: equal to float64 rounding of the float32 losses.
    for e, (a, b) in enumerate(zip(losses, cpp)):
        assert abs(a - b) <= 1e-12 * max(abs(b), 1.0), f"epoch {e + 1}: Python {a!r}, C++ {b!r}"


@pytest.mark.parametrize("selector", ["host:7", "no-such-backend", "host,opencl:no-such-platform"])
def test_bad_selector_is_one_line_and_status_2(selector: str) -> None:
    """--backends as mlp_train's; a selector naming no usable device: accel's message in one line on
    stderr, exit status 2, no traceback (and no training started)."""
    done = subprocess.run([sys.executable, str(EXAMPLE), "--backends", selector, "--epochs", "1", "--no-torch"],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("mlp_train.py: ") and "selector" in lines[0], done.stderr
    assert done.stdout == ""
