#!/usr/bin/env python3
"""accel's MLP training time against PyTorch's on the same problem (CPU or GPU).

Runs `accel-bench mlp --format json --save-problem FILE` for the given
backends, hidden sizes, batch and epochs, then trains the same model in
PyTorch (nn.Linear(in, H), ReLU, nn.Linear(H, 1); BCEWithLogitsLoss; Adam with
its defaults and accel's learning rate, each rounded to float32 as accel holds
them) from the same initial weights, on the
same standardized training set, in the same batch order (all read from the
problem file accel-bench wrote), on the CPU with each --threads count
(torch.set_num_threads), or on the GPU --torch-device names. PyTorch is timed as accel-bench times accel: per
round a fresh model, the warm-up epochs, then the timed epochs, each epoch
timed alone (host clock, the loss read back every batch); the round's first
epoch (kernel builds, allocator warm-up) apart, and the median of the steady
epochs (the timed ones but that first); the median of each over the rounds.
The rounds alternate: one accel-bench round (every device), then one PyTorch
round of each hidden size and thread count, so that the machine's changes of
speed during a run reach both sides.

Prints one line per accel row: accel's first epoch and steady ms/epoch,
PyTorch's steady ms/epoch for each thread count, PyTorch time / accel time
(above 1: accel is faster), and both final losses, which agree to about 6
digits in f32. The --json file holds PyTorch's first epochs too.

Without PyTorch installed (python3 -m pip install torch) only accel's figures
are printed, with a note on stderr; the exit status is then accel-bench's.

Exit status: 0 accel-bench passed and every PyTorch loss agrees with accel's
within --loss-tolerance; 1 accel-bench reported a failed or disagreeing row,
or a PyTorch loss disagrees; 2 usage error, or accel-bench could not run.
"""

import argparse
import json
import math
import os
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time
import warnings

warnings.filterwarnings("ignore", message="Failed to initialize NumPy")  # torch without numpy: not needed here
try:
    import torch
except ImportError:  # the comparison is optional: accel's figures alone
    torch = None

PROGRAM = "mlp_vs_pytorch.py"


def usage_error(message):
    print(f"{PROGRAM}: {message}; see {PROGRAM} --help", file=sys.stderr)
    sys.exit(2)


def positive_list(text, name, example):
    items = [t for t in text.split(",") if t]
    try:
        values = [int(t) for t in items]
    except ValueError:
        values = []
    if not values or any(v < 1 for v in values):
        usage_error(f"{name} '{text}' is not a comma list of positive whole numbers (e.g. {example})")
    return values


def find_bench(given):
    """accel-bench: --bench, else the build tree this script is in, else PATH."""
    if given:
        return given
    here = os.path.dirname(os.path.abspath(__file__))
    built = os.path.join(here, "..", "..", "build", "release", "bin", "accel-bench")
    if os.access(built, os.X_OK):
        return os.path.normpath(built)
    on_path = shutil.which("accel-bench")
    if on_path:
        return on_path
    usage_error("accel-bench not found (looked at " + os.path.normpath(built) + " and on PATH); build it or pass "
                "--bench PATH")
    return None


def run_accel(args, workdir):
    """Runs one round of accel-bench mlp; returns (its exit status, its JSON report, the problem file's contents)."""
    report = os.path.join(workdir, "accel.json")
    problem = os.path.join(workdir, "problem.json")
    cmd = [args.bench, "mlp", "--backends", args.backends, "--hidden", args.hidden, "--batch", str(args.batch),
           "--epochs", str(args.epochs), "--warmup", str(args.warmup), "--rounds", "1",
           "--dtype", args.dtype, "--seed", str(args.seed), "--format", "json", "-o", report,
           "--save-problem", problem]
    if args.data:
        cmd += ["--data", args.data]
    print("running: " + " ".join(cmd), file=sys.stderr, flush=True)
    try:
        done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    except OSError as e:
        usage_error(f"cannot run {args.bench}: {e.strerror}")
    if done.returncode not in (0, 1) or not os.path.exists(report):
        sys.stderr.write(done.stderr)
        print(f"{PROGRAM}: accel-bench mlp exited {done.returncode}", file=sys.stderr)
        sys.exit(2)
    for line in done.stderr.splitlines():  # its FAIL lines; not the "wrote ..." ones
        if not line.startswith("wrote "):
            print(line, file=sys.stderr)
    with open(report) as f:
        accel = json.load(f)
    with open(problem) as f:
        prob = json.load(f)
    if prob.get("format") != "accel-bench mlp problem" or prob.get("version") != 1:
        usage_error(f"{args.bench} wrote a problem file this script does not know (format "
                    f"{prob.get('format')!r}, version {prob.get('version')!r})")
    return done.returncode, accel, prob


def as_float32(x):
    """x rounded to float32, as accel holds its Adam settings (accel::ops::AdamParams)."""
    return struct.unpack("f", struct.pack("f", x))[0]


def steady_times(epoch_ms, warmup):
    """The first epoch's ms and the median ms of the steady epochs (the timed
    ones, epoch_ms[warmup:], but the very first), as accel-bench reports
    them; the first epoch's time when there is no other."""
    steady = epoch_ms[max(warmup, 1):]
    return epoch_ms[0], statistics.median(steady) if steady else epoch_ms[0]


def train_pytorch(prob, init, dtype, threads, device):
    """One round of PyTorch (a fresh model) on `device` (threads: the CPU's
    thread count): its steady ms per epoch, its first epoch's ms and its
    final loss."""
    if device == "cpu":
        torch.set_num_threads(threads)
    x = torch.tensor(prob["train"]["x"], dtype=dtype, device=device)
    y = torch.tensor(prob["train"]["y"], dtype=dtype, device=device).unsqueeze(1)
    orders = [torch.tensor(o, dtype=torch.long, device=device) for o in prob["epoch_orders"]]
    n, batch = x.shape[0], prob["batch"]
    warmup, epochs = prob["warmup_epochs"], prob["epochs"]
    loss_fn = torch.nn.BCEWithLogitsLoss()

    def fresh_model():
        hidden = init["hidden"]
        model = torch.nn.Sequential(torch.nn.Linear(x.shape[1], hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, 1))
        with torch.no_grad():
            model[0].weight.copy_(torch.tensor(init["w1"]))
            model[0].bias.copy_(torch.tensor(init["b1"]))
            model[2].weight.copy_(torch.tensor(init["w2"]))
            model[2].bias.copy_(torch.tensor(init["b2"]))
        return model.to(device=device, dtype=dtype)

    def epoch(model, opt, e):
        # As mlp::Model::train_epoch: batches in the epoch's order, one Adam
        # step each; the epoch loss is the size-weighted mean of batch losses.
        total = 0.0
        order = orders[e]
        for start in range(0, n, batch):
            idx = order[start:start + batch]
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(model(x.index_select(0, idx)), y.index_select(0, idx))
            loss.backward()
            opt.step()
            total += loss.item() * len(idx)
        return total / n

    model = fresh_model()
    # torch.optim.Adam's defaults (betas 0.9/0.999, eps 1e-8) and accel's lr,
    # each rounded to float32 as accel holds them: in f64 the final losses
    # then differ by 1e-8 (accel reads batch losses as float) instead of 3e-7.
    opt = torch.optim.Adam(model.parameters(), lr=as_float32(prob["lr"]),
                           betas=(as_float32(0.9), as_float32(0.999)), eps=as_float32(1e-8))
    final, epoch_ms = math.nan, []
    for e in range(warmup + epochs):
        t0 = time.perf_counter()
        final = epoch(model, opt, e)
        if device != "cpu":
            torch.cuda.synchronize()  # the last Adam step's kernels are part of the epoch
        epoch_ms.append((time.perf_counter() - t0) * 1000)
    steady, first = steady_times(epoch_ms, warmup)
    return steady, first, final


def table(header, rows):
    """Columns padded to the widest cell; the first two left-aligned."""
    width = [max(len(r[c]) for r in [header] + rows) for c in range(len(header))]

    def line(r):
        return "  ".join(v.ljust(w) if c < 2 else v.rjust(w) for c, (v, w) in enumerate(zip(r, width))).rstrip()

    out = [line(header), "-" * (sum(width) + 2 * (len(width) - 1))]
    return "\n".join(out + [line(r) for r in rows])


def num(x):
    return "-" if x is None or not math.isfinite(x) else (f"{x:.0f}" if x >= 1e4 else f"{x:.4g}")


def main():
    p = argparse.ArgumentParser(
        prog=PROGRAM, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="example: tools/bench/mlp_vs_pytorch.py --backends host,opencl:pocl --hidden 1024,4096 --epochs 20")
    p.add_argument("--bench", metavar="PATH", help="accel-bench to run (default: build/release/bin/accel-bench of "
                                                   "this source tree, else accel-bench on PATH)")
    p.add_argument("--backends", default="host", metavar="LIST", help="accel devices, as accel-bench's --backends (default host)")
    p.add_argument("--hidden", default="1024,4096", metavar="LIST", help="hidden sizes, a comma list (default 1024,4096)")
    p.add_argument("--batch", type=int, default=256, metavar="N", help="samples per batch (default 256)")
    p.add_argument("--epochs", type=int, default=20, metavar="N", help="timed epochs per round (default 20)")
    p.add_argument("--warmup", type=int, default=1, metavar="N", help="untimed epochs at the start of each round (default 1)")
    p.add_argument("--rounds", type=int, default=3, metavar="N", help="rounds; the median is shown (default 3)")
    p.add_argument("--dtype", default="f32", choices=["f32", "f64"], help="f32 (default) or f64")
    p.add_argument("--seed", type=int, default=1, metavar="N", help="of the split, the weights and the batch orders (default 1)")
    p.add_argument("--data", metavar="PATH", help="the CSV (default: accel-bench's)")
    p.add_argument("--threads", default="2,1", metavar="LIST", help="PyTorch thread counts on the CPU, one column each "
                                                                  "(default 2,1; one column on a GPU)")
    p.add_argument("--torch-device", default="cpu", metavar="DEVICE",
                   help="PyTorch's device: cpu (default) or cuda[:N], the GPU accel's backends run on")
    p.add_argument("--loss-tolerance", type=float, default=1e-4, metavar="R",
                   help="relative difference of the final losses beyond which a line is flagged (default 1e-4)")
    p.add_argument("--json", metavar="FILE", help="also write the comparison as JSON")
    args = p.parse_args()
    positive_list(args.hidden, "--hidden", "1024,4096")
    threads = positive_list(args.threads, "--threads", "2,1")
    if args.torch_device != "cpu":
        threads = threads[:1]  # a column per device, not per CPU thread count
        if torch is not None and not (args.torch_device.startswith("cuda") and torch.cuda.is_available()):
            usage_error(f"--torch-device {args.torch_device}: PyTorch here has no such device (cpu, or cuda[:N] "
                        "where torch.cuda.is_available())")
    for name in ("batch", "epochs", "rounds"):
        if getattr(args, name) < 1:
            usage_error(f"--{name} {getattr(args, name)} must be a positive whole number")
    if args.warmup < 0:
        usage_error(f"--warmup {args.warmup} must be 0 or more")
    if args.seed < 0:
        usage_error(f"--seed {args.seed} must be 0 or more")
    if not args.loss_tolerance > 0:
        usage_error(f"--loss-tolerance {args.loss_tolerance} must be positive")
    args.bench = find_bench(args.bench)

    # Rounds interleave accel and PyTorch (and PyTorch's thread counts), so
    # that a change in the machine's speed during the run reaches both sides.
    if torch is None:
        print(f"{PROGRAM}: PyTorch is not installed in this Python ({sys.executable}; python3 -m pip install "
              "torch): only accel's figures are shown", file=sys.stderr)
    dtype = None if torch is None else torch.float64 if args.dtype == "f64" else torch.float32
    accel_status, accel, prob = 0, None, None
    accel_runs, accel_first = {}, {}  # (device, hidden) -> each round's steady ms per epoch, first epoch's ms
    torch_runs, torch_first, torch_loss = {}, {}, {}  # by (hidden, threads)
    with tempfile.TemporaryDirectory(prefix="mlp-vs-pytorch-") as work:
        for _ in range(args.rounds):
            status, accel, prob = run_accel(args, work)
            accel_status = accel_status or status
            for row in accel["rows"]:
                # epoch_ms: the steady epochs; reports of an older accel-bench have ms_per_epoch alone.
                steady = row.get("epoch_ms", row.get("ms_per_epoch"))
                if steady:
                    key = (row["stable_selector"], row["hidden"])
                    accel_runs.setdefault(key, []).append(steady["median"])
                    if "first_epoch_ms" in row:
                        accel_first.setdefault(key, []).append(row["first_epoch_ms"])
            if torch is None:
                continue
            for init in prob["init"]:
                for t in threads:
                    ms, first, loss = train_pytorch(prob, init, dtype, t, args.torch_device)
                    torch_runs.setdefault((init["hidden"], t), []).append(ms)
                    torch_first.setdefault((init["hidden"], t), []).append(first)
                    torch_loss[init["hidden"], t] = loss
    for row in accel["rows"]:  # the last round's report, with the medians over the rounds
        key = (row["stable_selector"], row["hidden"])
        runs = accel_runs.get(key)
        if runs:
            figures = dict(median=statistics.median(runs), min=min(runs), max=max(runs))
            row.setdefault("epoch_ms", {}).update(figures)
            row["ms_per_epoch"].update(figures, rounds=runs)
        if accel_first.get(key):
            row["first_epoch_ms"] = statistics.median(accel_first[key])
    torch_ms = {key: statistics.median(runs) for key, runs in torch_runs.items()}
    torch_first_ms = {key: statistics.median(runs) for key, runs in torch_first.items()}

    header = ["config", "accel device", "accel first ms", "accel ms/epoch"]
    column = (lambda t: f"{t} thr") if args.torch_device == "cpu" else (lambda t: args.torch_device)
    header += [f"PyTorch {column(t)}" for t in threads]
    header += [f"PyTorch {column(t)} / accel" for t in threads]
    header += ["accel loss", "PyTorch loss", "rel diff", "ok"]
    rows, records, disagree = [], [], 0
    for row in accel["rows"]:
        hidden = row["hidden"]
        config = f"{row['in']}-{hidden}-1 b{row['batch']} {row['dtype']}"
        ms = row["ms_per_epoch"]["median"] if "ms_per_epoch" in row else None
        first = row.get("first_epoch_ms")
        loss = row.get("final_loss")
        ours = [torch_ms.get((hidden, t)) for t in threads]
        ratios = [o / ms if o and ms else None for o in ours]
        theirs = torch_loss.get((hidden, threads[0]))
        rel = abs(theirs - loss) / abs(loss) if theirs is not None and loss else None
        ok = "-" if rel is None else "ok" if rel <= args.loss_tolerance else "DIFF"
        disagree += ok == "DIFF"
        rows.append([config, row["stable_selector"], num(first), num(ms)] + [num(o) for o in ours] +
                    ["-" if r is None else f"{r:.2f}" for r in ratios] +
                    ["-" if loss is None else f"{loss:.7g}", "-" if theirs is None else f"{theirs:.7g}",
                     "-" if rel is None else f"{rel:.1e}", ok])
        records.append({"hidden": hidden, "batch": row["batch"], "dtype": row["dtype"],
                        "accel_device": row["stable_selector"], "accel_ms_per_epoch": ms,
                        "accel_first_epoch_ms": first, "accel_final_loss": loss,
                        "pytorch": [{"threads": t, "device": args.torch_device, "ms_per_epoch": torch_ms.get((hidden, t)),
                                     "first_epoch_ms": torch_first_ms.get((hidden, t)),
                                     "final_loss": torch_loss.get((hidden, t)),
                                     "pytorch_over_accel": r} for t, r in zip(threads, ratios)],
                        "loss_rel_diff": rel, "error": row.get("error")})

    print(f"MLP training, ms per epoch: median of {args.rounds} round(s) of {prob['epochs']} timed epochs after "
          f"{prob['warmup_epochs']} warm-up, accel's and PyTorch's rounds alternating; {prob['train']['samples']} training samples, batch {prob['batch']}, "
          f"seed {prob['seed']}; the same initial weights and batch order everywhere")
    print("first ms: the first epoch of a round (kernel builds); ms/epoch: the median of the steady epochs (the timed "
          "ones but that first)")
    if torch is not None:
        where = "the CPU (torch.set_num_threads)" if args.torch_device == "cpu" else args.torch_device
        print(f"PyTorch {torch.__version__} on {where}; PyTorch / accel above 1: accel is "
              f"faster; rel diff: PyTorch's final loss ({column(threads[0])}) against accel's (tolerance "
              f"{args.loss_tolerance:g})")
    print()
    print(table(header, rows))
    if args.json:  # whole or not at all, as accel-bench's files
        with tempfile.NamedTemporaryFile("w", dir=os.path.dirname(os.path.abspath(args.json)), delete=False) as f:
            json.dump({"accel": accel, "comparison": records,
                       "pytorch_version": torch.__version__ if torch is not None else None}, f, indent=2)
        os.replace(f.name, args.json)
    return 1 if accel_status or disagree else 0


if __name__ == "__main__":
    sys.exit(main())
