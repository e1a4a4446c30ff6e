"""accel-bench from Python: its rows as Python objects.

:func:`run` runs the ``accel-bench`` bundled with the package (``accel/bin``)
with ``--format json -o FILE`` and reads FILE back: one JSON round trip, the
same record ``accel-bench --format json`` writes (``accel-bench --help``
documents the options). It returns a :class:`Result`, whose ``rows`` are
:class:`Row` objects; every field of a JSON row is kept in :attr:`Row.raw`.
Times are milliseconds, rates GB/s and GFLOP/s. ``progress`` is called with
each line accel-bench writes to stderr while it runs (``--progress``: a line
per device's ceilings and per finished row), e.g. ``progress=print``.

Example, beside a PyTorch timing in the same script::

    import accel.bench
    result = accel.bench.run(backends=["host"], ops=["matmul"], matmul_sizes=[256])
    for row in result.rows:
        print(row.selector, row.op, row.shape, row.kernel_ms, row.gflops)

Thread-safety: :func:`run` starts one process per call; calls from several
threads run independently (their timings then disturb each other).
"""

from __future__ import annotations

import collections.abc
import dataclasses
import json
import os
import subprocess
import tempfile
import threading
import typing

from . import _accel

if typing.TYPE_CHECKING:  # names for annotations only: not attributes of the module
    from typing import Any, Callable, Dict, List, Optional, Sequence

__all__ = ["Row", "Result", "program", "run"]


@dataclasses.dataclass(frozen=True)
class Row:
    """One measured row of accel-bench: an op at one size on one device, dtype and path.

    kernel_ms is the median kernel time in milliseconds (None when the row
    failed: see error); gbps / gflops the achieved rates where the op has
    them; nmse the normalized mean squared error against the float64 oracle
    and nmse_threshold the op table's bound; passed whether the row passed.
    raw holds every field of the JSON row.
    """

    backend: str
    selector: str
    device: str
    op: str
    shape: str
    dtype: str
    path: str
    passed: bool
    kernel_ms: Optional[float]
    end_to_end_ms: Optional[float]
    gbps: Optional[float]
    gflops: Optional[float]
    nmse: Optional[float]
    nmse_threshold: Optional[float]
    error: str
    raw: Dict[str, Any]

    @staticmethod
    def from_json(row: Dict[str, Any]) -> "Row":
        """The Row of one element of the JSON record's "rows" list."""

        def num(key: str) -> Optional[float]:
            value = row.get(key)
            return float(value) if isinstance(value, (int, float)) else None

        kernel = row.get("kernel_ms")
        return Row(
            backend=str(row.get("backend", "")),
            selector=str(row.get("selector", "")),
            device=str(row.get("device", "")),
            op=str(row.get("op", "")),
            shape=str(row.get("shape", "")),
            dtype=str(row.get("dtype", "")),
            path=str(row.get("path", "")),
            passed=bool(row.get("pass", False)),
            kernel_ms=float(kernel["median"]) if isinstance(kernel, dict) and "median" in kernel else None,
            end_to_end_ms=num("end_to_end_ms"),
            gbps=num("gbps"),
            gflops=num("gflops"),
            nmse=num("nmse"),
            nmse_threshold=num("nmse_threshold"),
            error=str(row.get("error", "")),
            raw=row,
        )


@dataclasses.dataclass(frozen=True)
class Result:
    """A whole run: rows, the devices measured, notes, the backends that were
    unavailable, and accel-bench's exit status (0 all rows passed, 1 a row
    failed or exceeded its threshold). record is the JSON record as read."""

    rows: List[Row]
    devices: List[Dict[str, Any]]
    notes: List[Any]
    unavailable: List[Any]
    returncode: int
    record: Dict[str, Any]


def program() -> str:
    """The path of the accel-bench bundled with this package (accel/bin/accel-bench)."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "accel-bench")


def _list(option: str, values: Optional[Sequence[Any]]) -> List[str]:
    if values is None:
        return []
    if isinstance(values, (str, bytes)) or not isinstance(values, collections.abc.Sequence):
        raise _accel.InvalidArgument(f"accel.bench.run: {option[2:].replace('-', '_')} must be a list, e.g. ['host']")
    return [option, ",".join(str(v) for v in values)]


def _stream_stderr(args: List[str], stdout_path: str, timeout: Optional[float],
                   progress: Optional[Callable[[str], None]]) -> tuple[int, List[str]]:
    """Runs args with stdout into stdout_path, passing each stderr line (without its newline) to
    progress as it comes; returns (exit status, stderr lines). Stops the process when timeout
    seconds have passed (subprocess.TimeoutExpired) or when progress raises (re-raised)."""
    lines: List[str] = []
    with open(stdout_path, "w", encoding="utf-8") as out:
        try:
            proc = subprocess.Popen(args, stdout=out, stderr=subprocess.PIPE, encoding="utf-8", errors="replace",
                                    bufsize=1)
        except OSError as e:
            raise _accel.Error(f"accel.bench.run: cannot start {args[0]}: {e}") from e
        timed_out = threading.Event()

        def stop() -> None:
            timed_out.set()
            proc.kill()

        timer = threading.Timer(timeout, stop) if timeout is not None else None
        try:
            if timer is not None:
                timer.start()
            assert proc.stderr is not None
            for line in proc.stderr:
                lines.append(line.rstrip("\n"))
                if progress is not None:
                    progress(lines[-1])
            returncode = proc.wait()
        finally:
            if timer is not None:
                timer.cancel()
            if proc.poll() is None:  # progress raised: the run is abandoned
                proc.kill()
                proc.wait()
            if proc.stderr is not None:
                proc.stderr.close()
    if timed_out.is_set():
        raise subprocess.TimeoutExpired(args, timeout if timeout is not None else 0.0, stderr="\n".join(lines))
    return returncode, lines


def run(
    backends: Optional[Sequence[str]] = None,
    ops: Optional[Sequence[str]] = None,
    *,
    add_sizes: Optional[Sequence[int]] = None,
    matmul_sizes: Optional[Sequence[int]] = None,
    dense_shapes: Optional[Sequence[str]] = None,
    paths: Optional[Sequence[str]] = None,
    dtypes: Optional[Sequence[str]] = None,
    warmup: Optional[int] = None,
    repeats: Optional[int] = None,
    quick: bool = False,
    extra_args: Sequence[str] = (),
    timeout: Optional[float] = None,
    progress: Optional[Callable[[str], None]] = None,
    program_path: Optional[str] = None,
) -> Result:
    """Runs accel-bench and returns a :class:`Result` (its ``rows`` a list of :class:`Row`).

    backends: selectors (e.g. ["host", "opencl:pocl"]; default: every
    available backend, or ACCEL_BACKEND's); ops: op names (default add,
    sigmoid, matmul, dense); add_sizes: elements of the elementwise ops;
    matmul_sizes: N of N x N x N products; dense_shapes: "BATCHxINxOUT"
    strings; paths: "native" / "vendor"; dtypes: "f32", "f64", "f16", "bf16";
    warmup, repeats: untimed and timed rounds; quick: tiny sizes (CI);
    extra_args: further accel-bench options, as on its command line;
    timeout: seconds before the run is stopped (subprocess.TimeoutExpired);
    progress: called in this thread with each line accel-bench writes to
    stderr, as it writes it (without the newline), e.g. ``progress=print``
    or a logging call; given, accel-bench runs with ``--progress``: a line
    as each device's ceilings and each row are measured ("[1/2] add 1000
    f32 native on host:0: kernel 0.0008 ms; 0.0 s so far"), then "wrote N
    rows to FILE"; an exception it raises stops the run and propagates;
    program_path: the accel-bench to run (default: :func:`program`, the
    bundled one).

    Blocking; the GIL is not held while accel-bench runs (only while
    progress is called). Raises InvalidArgument when accel-bench rejects
    the options (exit status 2; its message included) and Error when it
    cannot be started or writes no record.
    """
    args = [program_path or program(), "--format", "json"]
    args += _list("--backends", backends)
    args += _list("--ops", ops)
    args += _list("--add-sizes", add_sizes)
    args += _list("--matmul-sizes", matmul_sizes)
    args += _list("--dense-shapes", dense_shapes)
    args += _list("--paths", paths)
    args += _list("--dtypes", dtypes)
    if warmup is not None:
        args += ["--warmup", str(warmup)]
    if repeats is not None:
        args += ["--repeats", str(repeats)]
    if quick:
        args.append("--quick")
    if progress is not None:
        args.append("--progress")  # a line per device's ceilings and per row, as each is measured
    args += list(extra_args)
    with tempfile.TemporaryDirectory(prefix="accel-bench-") as folder:
        out = os.path.join(folder, "run.json")
        stdout_path = os.path.join(folder, "stdout.txt")
        returncode, stderr = _stream_stderr(args + ["-o", out], stdout_path, timeout, progress)
        if returncode == 2 or not os.path.exists(out):
            with open(stdout_path, encoding="utf-8", errors="replace") as f:
                stdout = f.read().strip()
            message = [line for line in stderr if line.strip()] or stdout.splitlines() or ["no message"]
            text = " / ".join(message[-5:])
            cls = _accel.InvalidArgument if returncode == 2 else _accel.Error
            raise cls(f"accel.bench.run: accel-bench exited with status {returncode} and wrote no record: {text}")
        with open(out, encoding="utf-8") as f:
            record: Dict[str, Any] = json.load(f)
    return Result(
        rows=[Row.from_json(r) for r in record.get("rows", [])],
        devices=list(record.get("devices", [])),
        notes=list(record.get("notes", [])),
        unavailable=list(record.get("unavailable", [])),
        returncode=returncode,
        record=record,
    )
