"""Devices, streams and events, the GIL, the installed package (no
environment needed), accel.bench, and the type stub checked by mypy."""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import accel
import accel.bench
import accel.ops as ops

HERE = pathlib.Path(__file__).resolve().parent


def clean_env() -> dict:
    """The environment without accel's, OpenCL's and the loader's variables."""
    drop = ("ACCEL_", "OCL_ICD", "LD_LIBRARY_PATH", "POCL_")
    return {k: v for k, v in os.environ.items() if not k.startswith(drop)}


def test_import_needs_no_environment() -> None:
    done = subprocess.run(
        [sys.executable, "-c", "import accel; print(accel.default_device()); print(accel.plugin_folders()[-1])"],
        env=clean_env(), capture_output=True, text=True, check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 2 and lines[0]
    package = pathlib.Path(accel.__file__).resolve().parent
    assert pathlib.Path(lines[1]).resolve() == package / "lib"  # plugins found beside the bundled libaccel


def test_default_device_honours_accel_backend() -> None:
    code = "import accel; d = accel.default_device(); print(d.info.backend, d.selector)"
    env = clean_env()
    for backend in ("host", "kokkos"):  # `auto` would open the host here: kokkos shows the variable is read
        env["ACCEL_BACKEND"] = backend
        done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False)
        if backend != "host" and "BackendUnavailable" in done.stderr:
            continue
        assert done.returncode == 0, done.stderr
        opened, selector = done.stdout.split()
        assert opened == backend and selector.startswith(backend + ":"), done.stdout  # kokkos:serial:0
    env["ACCEL_BACKEND"] = "nonsense:x:y:z"
    code = "import accel\ntry:\n accel.default_device()\nexcept accel.InvalidArgument as e:\n print(e)"
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False)
    assert done.stdout.startswith("ACCEL_BACKEND: "), done.stdout + done.stderr


def test_devices_and_info(host: accel.Device) -> None:
    all_devices = accel.devices()
    assert any(d.backend == "host" for d in all_devices)
    names = {b["name"] for b in accel.backends()}
    assert "host" in names
    info = host.info
    assert info.backend == "host" and info.name == host.name and info.compute_units >= 1
    assert info.as_dict()["backend"] == "host"
    assert "backend='host'" in repr(info)
    assert accel.device("host") is host  # one Device per selector
    assert host.memory_info().total == info.global_memory_bytes or host.memory_info().total == 0


def test_streams_and_events(device: accel.Device) -> None:
    s = device.create_stream()
    start, end = device.create_event(), device.create_event()
    a = accel.from_numpy(np.ones((64, 64), dtype=np.float32), device=device)
    start.record(s)
    c = ops.matmul(a, a, stream=s)
    end.record(s)
    end.synchronize()
    ms = device.elapsed_ms(start, end)
    assert ms >= 0.0
    s.synchronize()
    assert np.all(c.numpy() == 64.0)
    with pytest.raises(accel.InvalidArgument):
        device.elapsed_ms(device.create_event(), end)  # never recorded
    assert device.default_stream().device is device


def test_gil_released_during_an_op(host: accel.Device) -> None:
    """A second Python thread makes progress while one long op runs."""
    n = 1024
    a = accel.from_numpy(np.ones((n, n), dtype=np.float32), device=host)
    ops.matmul(a, a, path="native")  # warm-up
    t0 = time.perf_counter()
    ops.matmul(a, a, path="native")
    alone = time.perf_counter() - t0
    if alone < 0.05:
        n = 2048
        a = accel.from_numpy(np.ones((n, n), dtype=np.float32), device=host)
    ticks = 0
    stop = threading.Event()

    def count() -> None:
        nonlocal ticks
        while not stop.is_set():
            ticks += 1

    started = threading.Event()
    ticks_during = []

    def op() -> None:
        started.set()
        before = ticks
        ops.matmul(a, a, path="native")
        ticks_during.append(ticks - before)

    counter = threading.Thread(target=count)
    counter.start()
    worker = threading.Thread(target=op)
    worker.start()
    worker.join()
    stop.set()
    counter.join()
    # With the GIL held for the whole op the counter would stand still
    # (Python switches threads only between bytecodes, and an op is one call).
    assert ticks_during and ticks_during[0] > 1000, f"the counter thread advanced {ticks_during} during the op"


def test_bench_rows() -> None:
    lines: list = []
    result = accel.bench.run(backends=["host"], ops=["add", "matmul"], add_sizes=[1000], matmul_sizes=[32],
                             paths=["native"], warmup=0, repeats=1, extra_args=["--min-time-ms", "0"],
                             progress=lines.append)
    assert result.returncode == 0
    # progress: accel-bench's stderr lines as they came, a line per row among them.
    assert all(isinstance(line, str) and "\n" not in line for line in lines)
    assert any(" add " in line for line in lines) and any(" matmul " in line for line in lines), lines
    ops_seen = {r.op for r in result.rows}
    assert ops_seen == {"add", "matmul"}
    for r in result.rows:
        assert r.selector.split(":")[0] == "host" and r.passed and r.kernel_ms is not None and r.kernel_ms >= 0
        assert r.raw["op"] == r.op
    with pytest.raises(accel.InvalidArgument, match="accel-bench"):
        accel.bench.run(backends=["host"], ops=["no_such_op"])


FAKE_BENCH = """\
import json, os, sys, time
out = sys.argv[sys.argv.index("-o") + 1]
marker = os.environ["FAKE_BENCH_MARKER"]
print("[1/2] add on host:0", file=sys.stderr, flush=True)
deadline = time.time() + 20
while not os.path.exists(marker):  # the caller's progress callback makes it on the first line
    if time.time() > deadline:
        print("the first line never reached progress", file=sys.stderr)
        sys.exit(1)
    time.sleep(0.01)
print("[2/2] matmul on host:0", file=sys.stderr, flush=True)
with open(out, "w") as f:
    json.dump({"rows": [{"op": "add", "pass": True}, {"op": "matmul", "pass": True}]}, f)
print("wrote 2 rows to " + out, file=sys.stderr)
"""


def test_bench_progress_is_called_as_lines_come(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """progress gets each stderr line while accel-bench still runs (a stand-in program waits for the
    callback to have seen its first line before it goes on), and an exception in it stops the run."""
    fake = tmp_path / "fake-accel-bench"
    fake.write_text(f"#!{sys.executable}\n" + FAKE_BENCH)
    fake.chmod(0o755)
    marker = tmp_path / "first-line-seen"
    monkeypatch.setenv("FAKE_BENCH_MARKER", str(marker))
    lines: list = []

    def progress(line: str) -> None:
        lines.append(line)
        marker.touch()

    result = accel.bench.run(backends=["host"], progress=progress, program_path=str(fake), timeout=60)
    assert [r.op for r in result.rows] == ["add", "matmul"] and result.returncode == 0
    assert lines[:2] == ["[1/2] add on host:0", "[2/2] matmul on host:0"] and lines[2].startswith("wrote 2 rows")
    marker.unlink()

    def stop(line: str) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        accel.bench.run(progress=stop, program_path=str(fake), timeout=60)


def test_type_stub_checks() -> None:
    """mypy --strict over the package (its stub), the typed sample and the example."""
    mypy = shutil.which("mypy") or str(pathlib.Path(sys.executable).with_name("mypy"))
    if not os.path.exists(mypy):
        pytest.skip("mypy is not installed (pip install mypy)")
    package = pathlib.Path(accel.__file__).resolve().parent
    assert (package / "_accel.pyi").exists() and (package / "py.typed").exists()
    files = [str(HERE / "typed_usage.py"), str(HERE.parent / "examples" / "mlp_train.py")]
    done = subprocess.run([mypy, "--strict", "--no-incremental", "--ignore-missing-imports", "-p", "accel"],
                          capture_output=True, text=True, check=False, cwd=str(HERE))
    assert done.returncode == 0, done.stdout + done.stderr
    done = subprocess.run([mypy, "--strict", "--no-incremental", "--ignore-missing-imports"] + files,
                          capture_output=True, text=True, check=False, cwd=str(HERE))
    assert done.returncode == 0, done.stdout + done.stderr
    # And mypy does catch a type error against the stub.
    bad = HERE / "typed_usage.py"
    text = bad.read_text() + "\nbad: int = accel.zeros((2,)).shape\n"
    probe = pathlib.Path(os.environ.get("TMPDIR", "/tmp")) / "accel_typed_bad.py"
    probe.write_text(text)
    done = subprocess.run([mypy, "--strict", "--no-incremental", "--ignore-missing-imports", str(probe)],
                          capture_output=True, text=True, check=False, cwd=str(HERE))
    probe.unlink()
    assert done.returncode != 0 and "Incompatible types" in done.stdout, done.stdout
