#!/usr/bin/env python3
"""Helpers of run-gpu-checks.sh over its result folder (standard library only).

  gpu_summary.py merge OUT BENCH_JSON...
      merges accel-bench runs (the same devices; files that do not exist are
      left out) into OUT/bench.json, and writes OUT/bench.<backend>.json for
      each backend: the report with that backend's devices and rows only, so
      that `accel-bench compare --by op` sets one API of a GPU beside another.
  gpu_summary.py headline OUT
      prints the headline lines of the summary from OUT/bench.json,
      OUT/peer.json (ops_vs_pytorch.py) and OUT/mlp-wide.json
      (mlp_vs_pytorch.py): per op and dtype, the largest problem's time on
      each accel device against PyTorch's on the same GPU, the
      device-to-device copy, and the wide MLP's ms per epoch. A file that is
      missing is named, not guessed.

Exit status: 0 done; 2 usage error or an unreadable file.
"""

import json
import os
import sys


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        print(f"gpu_summary.py: cannot read {path}: {e}", file=sys.stderr)
        sys.exit(2)


def merge(out, paths):
    runs = [run for run in (load(p) for p in paths) if run is not None]
    if not runs:
        print(f"gpu_summary.py: none of {' '.join(paths)} exists", file=sys.stderr)
        return 2
    bench = dict(runs[0])
    for key in ("rows", "notes", "unavailable"):
        bench[key] = [item for run in runs for item in run.get(key, [])]
    with open(os.path.join(out, "bench.json"), "w") as f:
        json.dump(bench, f, indent=1)
    for backend in sorted({r["backend"] for r in bench.get("rows", [])}):
        part = dict(bench)
        part["rows"] = [r for r in bench["rows"] if r["backend"] == backend]
        part["devices"] = [d for d in bench.get("devices", []) if d.get("backend") == backend]
        with open(os.path.join(out, f"bench.{backend}.json"), "w") as f:
            json.dump(part, f, indent=1)
    return 0


def fmt(x, digits=3):
    return "-" if x is None else f"{x:.{digits}g}"


def headline(out):
    lines = []
    peer = load(os.path.join(out, "peer.json"))
    if peer is None:
        lines.append("headline: no peer.json (step peer did not run): no ratio to PyTorch")
    else:
        s = peer["settings"]
        lines.append(f"headline: accel against PyTorch {s['torch']} on {s['device']}, median kernel ms of one call; "
                     "x = accel / PyTorch time (below 1: accel faster)")
        largest = {}
        for r in peer["rows"]:
            size = 1
            for v in r["shape"].split("x"):
                size *= int(v)
            key = (r["op"], r["dtype"])
            if key not in largest or size > largest[key][0]:
                largest[key] = (size, r)
        for (op, dtype), (_, r) in sorted(largest.items()):
            if "error" in r:
                lines.append(f"  {op} {dtype} {r['shape']}: PyTorch failed: {r['error']}")
                continue
            torch_ms = r["pytorch_ms"]
            each = ", ".join(f"{k} {fmt(ms)} ms (x{fmt(ms / torch_ms)})" for k, ms in sorted(r["accel_kernel_ms"].items()))
            rate = (f"{fmt(r['pytorch_gflops'], 4)} GFLOP/s" if r.get("pytorch_gflops") else
                    f"{fmt(r['pytorch_gbps'], 4)} GB/s")
            lines.append(f"  {op} {dtype} {r['shape']}: PyTorch {fmt(torch_ms)} ms ({rate}); {each}")
        for c in peer.get("copies", []):
            lines.append(f"  device-to-device copy {c['bytes']} B: {c['selector']} {fmt(c['accel_gbps'], 4)} GB/s, "
                         f"PyTorch {fmt(c['pytorch_gbps'], 4)} GB/s")
    mlp = load(os.path.join(out, "mlp-wide.json"))
    if mlp is None:
        lines.append("headline: no mlp-wide.json (step mlp.wide did not run)")
    else:
        for r in mlp.get("comparison", []):
            torch_runs = [t for t in r.get("pytorch", []) if t.get("ms_per_epoch")]
            torch_ms = torch_runs[0]["ms_per_epoch"] if torch_runs else None
            ratio = r["accel_ms_per_epoch"] / torch_ms if torch_ms and r.get("accel_ms_per_epoch") else None
            # accel_ms_per_epoch: the steady epochs' median; the first epoch (kernel builds) apart, where given.
            first = f" (first epoch {fmt(r['accel_first_epoch_ms'])})" if r.get("accel_first_epoch_ms") else ""
            lines.append(f"  MLP 30-{r['hidden']}-1 batch {r['batch']} {r['dtype']}: {r['accel_device']} "
                         f"{fmt(r.get('accel_ms_per_epoch'))} ms/epoch{first}, PyTorch {fmt(torch_ms)} "
                         f"(x{fmt(ratio)}); loss rel diff {fmt(r.get('loss_rel_diff'), 2)}")
    print("\n".join(lines))
    return 0


def main(argv):
    if len(argv) >= 4 and argv[1] == "merge":
        return merge(argv[2], argv[3:])
    if len(argv) == 3 and argv[1] == "headline":
        return headline(argv[2])
    print(__doc__.strip(), file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
