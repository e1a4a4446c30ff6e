#!/usr/bin/env python3
"""What the trace (ACCEL_TRACE) and the shadow check (ACCEL_CHECK) cost.

Runs mlp_train (ms per epoch) and accel-bench (add and matmul rows, ms per
call) in interleaved rounds: with neither on, with the trace on, with the
check on, and, given --baseline-bin, the same programs of another build with
neither (the cost of the one branch per call when both are off). Prints the
median of each over the rounds and its ratio to the build's own "off" run.

  tools/bench/instrument_overhead.py --bin build/release/bin \\
      [--baseline-bin /path/to/other/build/bin] [--backend host] [--rounds 5]
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile


def mlp_ms(bin_dir, backend, epochs, env):
    out = subprocess.run([os.path.join(bin_dir, "mlp_train"), "--backends", backend, "--epochs", str(epochs),
                          "--format", "json"], env=env, check=True, capture_output=True, text=True).stdout
    result = json.loads(out)["results"][0]
    # The steady epochs' median (the first pays kernel builds); the mean over all in an older mlp_train.
    return result["epoch_ms"]["median"] if "epoch_ms" in result else result["ms_per_epoch"]


def bench_ms(bin_dir, backend, env):
    out = subprocess.run([os.path.join(bin_dir, "accel-bench"), "--backends", backend, "--ops", "add,matmul",
                          "--add-sizes", "1000", "--matmul-sizes", "64", "--paths", "native", "--format", "json"],
                         env=env, check=True, capture_output=True, text=True).stdout
    rows = json.loads(out)["rows"]
    return {r["op"]: r["end_to_end_ms"] for r in rows if r.get("end_to_end_ms") is not None}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True, help="folder of this build's mlp_train and accel-bench")
    ap.add_argument("--baseline-bin", help="folder of another build's programs, run with neither on")
    ap.add_argument("--backend", default="host")
    ap.add_argument("--epochs", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()

    tmp = tempfile.mkdtemp(prefix="accel-overhead-")
    base_env = {k: v for k, v in os.environ.items() if k not in ("ACCEL_TRACE", "ACCEL_CHECK")}
    configs = [("off", a.bin, {})]
    if a.baseline_bin:
        configs.insert(0, ("baseline", a.baseline_bin, {}))
    configs += [("trace", a.bin, {"ACCEL_TRACE": os.path.join(tmp, "t.json")}),
                ("check", a.bin, {"ACCEL_CHECK": "oracle", "ACCEL_CHECK_DIR": tmp})]
    mlp = {name: [] for name, _, _ in configs}
    bench = {name: {} for name, _, _ in configs}
    for _ in range(a.rounds):
        for name, bin_dir, extra in configs:  # interleaved: each round runs every configuration once
            env = dict(base_env, **extra)
            mlp[name].append(mlp_ms(bin_dir, a.backend, a.epochs, env))
            for op, ms in bench_ms(bin_dir, a.backend, env).items():
                bench[name].setdefault(op, []).append(ms)

    off = statistics.median(mlp["off"])
    print(f"backend {a.backend}, {a.rounds} rounds, medians")
    print(f"{'':10} {'mlp_train ms/epoch':>20} {'ratio':>7}   accel-bench ms/call (ratio)")
    for name, _, _ in configs:
        m = statistics.median(mlp[name])
        rows = "  ".join(f"{op} {statistics.median(v):.4g} ({statistics.median(v) / statistics.median(bench['off'][op]):.3f})"
                         for op, v in sorted(bench[name].items()))
        print(f"{name:10} {m:20.4f} {m / off:7.3f}   {rows}")


if __name__ == "__main__":
    main()
