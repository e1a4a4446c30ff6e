#!/usr/bin/env python3
"""accel-bench's rows against PyTorch on the same device, at the same sizes.

Reads the JSON of an `accel-bench run` (--json FILE) and times in PyTorch
each problem it holds, in the same dtype: add (torch.add into a preallocated
output), matmul (torch.mm, which is cuBLAS on CUDA), dense as
y = sigmoid(x·Wᵀ + b) (torch.addmm then torch.sigmoid_, the two kernels
PyTorch runs for nn.Linear + sigmoid), and the device-to-device copy of each
device's `copy_bytes` (Tensor.copy_). Shapes are accel-bench's: add N
elements; matmul MxNxK is (M×K)·(K×N), row-major; dense BATCHxINxOUT is x
(BATCH×IN), W (OUT×IN), b (OUT).

Timing, as accel-bench's kernel time: one call between two CUDA events (host
clock on the CPU), after warm-up calls, the median of --samples calls with
the inputs drawn once (uniform in [-1, 1)). PyTorch's settings are left at
their defaults (float32 matmul without TF32, as accel's cuBLAS path) and
written in the output.

Prints one line per problem: each accel device's median kernel ms, PyTorch's,
and accel's best over PyTorch's time (below 1: accel is faster). With --json
FILE also writes them as JSON (whole or not at all).

Exit status: 0 every problem timed; 1 a problem failed in PyTorch (e.g. out
of memory; the others are still timed); 2 usage error, or PyTorch missing.
"""

import argparse
import json
import os
import statistics
import sys
import tempfile
import time

PROGRAM = "ops_vs_pytorch.py"
TORCH_DTYPES = {"f32": "float32", "f64": "float64", "f16": "float16", "bf16": "bfloat16"}
DTYPE_BYTES = {"f32": 4, "f64": 8, "f16": 2, "bf16": 2}


def usage_error(message):
    print(f"{PROGRAM}: {message}; see {PROGRAM} --help", file=sys.stderr)
    sys.exit(2)


def dims(shape, count, row):
    """The integers of an accel-bench shape 'AxBxC' (count of them), or a usage error naming the row."""
    try:
        values = [int(v) for v in str(shape).split("x")]
    except ValueError:
        values = []
    if len(values) != count or min(values) < 1:
        usage_error(f"row {row.get('op')} {row.get('selector')} has shape {shape!r}, not {count} positive "
                    "integers joined by 'x'")
    return values


class Timer:
    """Median time of one call, in ms: CUDA events on a GPU, the host clock on the CPU."""

    def __init__(self, torch, device, samples, warmup):
        self.torch, self.device, self.samples, self.warmup = torch, device, samples, warmup

    def __call__(self, fn):
        torch = self.torch
        for _ in range(self.warmup):
            fn()
        times = []
        if self.device.type == "cuda":
            torch.cuda.synchronize()
            for _ in range(self.samples):
                begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                begin.record()
                fn()
                end.record()
                end.synchronize()
                times.append(begin.elapsed_time(end))
        else:
            for _ in range(self.samples):
                t0 = time.perf_counter()
                fn()
                times.append((time.perf_counter() - t0) * 1000)
        return statistics.median(times)


def problem_call(torch, device, op, dtype, shape, row):
    """(the call to time, its bytes moved, its flops) for one accel-bench problem."""
    t = getattr(torch, TORCH_DTYPES[dtype])

    def rand(*size):
        return torch.rand(*size, device=device, dtype=torch.float32).mul_(2).sub_(1).to(t)

    size = DTYPE_BYTES[dtype]
    if op == "add":
        (n,) = dims(shape, 1, row)
        a, b, c = rand(n), rand(n), torch.empty(n, device=device, dtype=t)
        return (lambda: torch.add(a, b, out=c)), 3 * n * size, 0
    if op == "matmul":
        m, n, k = dims(shape, 3, row)
        a, b, c = rand(m, k), rand(k, n), torch.empty(m, n, device=device, dtype=t)
        return (lambda: torch.mm(a, b, out=c)), (m * k + k * n + m * n) * size, 2 * m * n * k
    if op == "dense":
        batch, inputs, outputs = dims(shape, 3, row)
        x, w, bias = rand(batch, inputs), rand(outputs, inputs), rand(outputs)
        y = torch.empty(batch, outputs, device=device, dtype=t)

        def dense():
            torch.addmm(bias, x, w.t(), out=y)
            torch.sigmoid_(y)
        return dense, (batch * inputs + outputs * inputs + outputs + batch * outputs) * size, 2 * batch * inputs * outputs
    return None


def table(header, rows):
    width = [max(len(r[c]) for r in [header] + rows) for c in range(len(header))]
    line = lambda r: "  ".join(v.ljust(w) if c < 3 else v.rjust(w) for c, (v, w) in enumerate(zip(r, width))).rstrip()
    return "\n".join([line(header), "-" * (sum(width) + 2 * (len(width) - 1))] + [line(r) for r in rows])


def num(x):
    return "-" if x is None else f"{x:.4g}"


def main():
    p = argparse.ArgumentParser(prog=PROGRAM, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="example: ops_vs_pytorch.py bench.json --device cuda --json peer.json")
    p.add_argument("bench_json", metavar="BENCH_JSON", help="the JSON of an `accel-bench run`")
    p.add_argument("--device", default="cuda", help="PyTorch's device: cuda (default), cuda:N or cpu")
    p.add_argument("--samples", type=int, default=15, metavar="N", help="timed calls per problem (default 15)")
    p.add_argument("--warmup", type=int, default=3, metavar="N", help="untimed calls first (default 3)")
    p.add_argument("--json", metavar="FILE", help="also write the comparison as JSON")
    args = p.parse_args()
    if args.samples < 1 or args.warmup < 0:
        usage_error("--samples must be 1 or more and --warmup 0 or more")
    try:
        with open(args.bench_json) as f:
            bench = json.load(f)
        rows = bench["rows"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        usage_error(f"cannot read the accel-bench run {args.bench_json!r}: {e}")
    try:
        import torch
    except ImportError:
        usage_error(f"PyTorch is not installed in this Python ({sys.executable})")
    try:
        device = torch.device(args.device)
        if device.type == "cuda" and not torch.cuda.is_available():
            raise RuntimeError("torch.cuda.is_available() is False")
        torch.empty(1, device=device)
    except RuntimeError as e:
        usage_error(f"PyTorch cannot use device {args.device!r}: {e}")
    timer = Timer(torch, device, args.samples, args.warmup)
    device_name = torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU"

    problems = {}  # (op, dtype, shape) -> {selector/path: kernel ms}
    for r in rows:
        if r.get("pass") and r.get("op") in ("add", "matmul", "dense") and r.get("dtype") in TORCH_DTYPES:
            key = (r["op"], r["dtype"], str(r["shape"]))
            ms = (r.get("kernel_ms") or {}).get("median")
            if ms:
                problems.setdefault(key, {})[f"{r['selector']} {r['path']}"] = ms
    records, failed = [], 0
    for (op, dtype, shape), accel in sorted(problems.items(), key=lambda kv: (kv[0][0], kv[0][1], len(kv[0][2]), kv[0][2])):
        record = {"op": op, "dtype": dtype, "shape": shape, "accel_kernel_ms": accel}
        try:
            fn, nbytes, flops = problem_call(torch, device, op, dtype, shape, {"op": op, "shape": shape})
            ms = timer(fn)
        except (RuntimeError, MemoryError) as e:  # e.g. CUDA out of memory: this problem only
            failed = 1
            record["error"] = str(e).splitlines()[0]
            print(f"{PROGRAM}: {op} {dtype} {shape}: {record['error']}", file=sys.stderr)
            records.append(record)
            continue
        finally:
            if device.type == "cuda":
                torch.cuda.empty_cache()
        best_key = min(accel, key=accel.get)
        record.update(pytorch_ms=ms, pytorch_gbps=nbytes / ms / 1e6 if ms else None,
                      pytorch_gflops=flops / ms / 1e6 if flops and ms else None,
                      accel_best=best_key, accel_over_pytorch=accel[best_key] / ms if ms else None)
        records.append(record)
    copies = []
    for d in bench.get("devices", []):
        nbytes, gbps = d.get("copy_bytes"), d.get("copy_gbps")
        if not nbytes:
            continue
        src = torch.empty(nbytes, device=device, dtype=torch.uint8).random_(0, 256)
        dst = torch.empty_like(src)
        ms = timer(lambda: dst.copy_(src))
        copies.append({"selector": d.get("selector"), "bytes": nbytes, "accel_gbps": gbps,
                       "pytorch_gbps": 2 * nbytes / ms / 1e6})  # read + write, as accel-bench counts
        del src, dst
    settings = {"torch": torch.__version__, "device": device_name,
                "matmul_allow_tf32": torch.backends.cuda.matmul.allow_tf32,
                "allow_fp16_reduced_precision_reduction": torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction,
                "samples": args.samples, "warmup": args.warmup}
    selectors = sorted({k for r in records for k in r["accel_kernel_ms"]})
    lines = []
    for r in records:
        if "error" in r:
            continue
        rate = r["pytorch_gflops"] or r["pytorch_gbps"]
        lines.append([r["op"], r["dtype"], r["shape"], r["accel_best"], num(r["accel_kernel_ms"][r["accel_best"]]),
                      num(r["pytorch_ms"]), num(rate), num(r["accel_over_pytorch"])] +
                     [num(r["accel_kernel_ms"].get(k)) for k in selectors])
    print(f"accel-bench rows against PyTorch {torch.__version__} on {device_name} ({device}): median ms of one call "
          f"over {args.samples} calls; rate: PyTorch's GFLOP/s (matmul, dense) or GB/s (add); "
          f"best/PyTorch below 1: accel is faster")
    print()
    print(table(["op", "dtype", "shape", "accel best", "best ms", "PyTorch ms", "PyTorch rate", "best/PyTorch"] + selectors,
                lines))
    for c in copies:
        print(f"device-to-device copy of {c['bytes']} bytes: accel {c['selector']} {num(c['accel_gbps'])} GB/s, "
              f"PyTorch {num(c['pytorch_gbps'])} GB/s (read + write)")
    if args.json:  # whole or not at all
        folder = os.path.dirname(os.path.abspath(args.json))
        with tempfile.NamedTemporaryFile("w", dir=folder, delete=False) as f:
            json.dump({"settings": settings, "rows": records, "copies": copies}, f, indent=2)
        os.replace(f.name, args.json)
    return failed


if __name__ == "__main__":
    sys.exit(main())
