#!/usr/bin/env python3
"""The seed MLP (30 -> hidden, ReLU -> 1 logit; BCEWithLogits; Adam) trained
through accel from Python, next to the same model in PyTorch when torch is
installed: same initial weights, same batches, same order.

The split, the initial weights and each epoch's batch order come from the
C++ example's own functions (accel.mlp: examples/mlp_train/data.hpp), and
the training step is the one of examples/mlp_train/mlp.cpp, op for op:

    h = relu(x @ w1.T + b1)                 ops.dense(activation="relu")
    z = h @ w2.T + b2                       ops.dense
    loss = mean bce_with_logits(z, t)       ops.bce_with_logits_loss
    dz = (sigmoid(z) - t) / B               ops.bce_with_logits_backward
    dh, dw2, db2; dw1, db1                  ops.dense_backward ("none", then "relu")
    Adam on w1, b1, w2, b2 (step count global over all batches)   ops.adam_step (list form)

so for one seed its losses equal mlp_train's on the same device (bit for
bit on the host backend: the same kernels in the same order). The epoch time
is measured as mlp_train measures it: the host clock around one epoch,
including the batch gather and uploads, with the device synchronized at its
end; PyTorch's epochs the same way. Every run (each device, and PyTorch)
trains one epoch in turn, who goes first rotating, so a transient load on
the machine slows one epoch of each rather than all epochs of one.

    python examples/mlp_train.py [--backends LIST] [--epochs N] [--seed S] ...

--backends takes what mlp_train's does: a comma-separated list of selectors
(host, opencl:pocl, cuda:0, ...) or "all" (every available backend); each
device trains the same model. A selector that names no usable device is
reported in one line (accel's error), exit status 2. (--backend, the older
name, is kept as an alias.)

Prints the loss every 50 epochs (each run side by side), the final losses,
accuracies and epoch times: the first epoch apart (it includes one-time
work: kernel compilation, allocation, caches) and the steady epochs 2..N as
their median and min..max; "!" marks a spread that shows contention as
accel-bench marks it (the slowest epoch took at least 3x the fastest and
1 ms more: the machine was busy with something else, the figure is not the
device's). --json FILE also writes them as JSON ("contended": true).
--compare-cpp also runs mlp_train's own C++ loop (accel.mlp.MlpModel) beside
this one on each device, alternating epochs in one process, and prints both
median epoch times and whether every epoch's loss is equal.
"""

from __future__ import annotations

import argparse
import json
import importlib
import statistics
import sys
import time
from typing import Any, Dict, List, Optional, Tuple

import numpy as np
import numpy.typing as npt

import accel
import accel.mlp
import accel.ops as ops

# PyTorch is optional (accel's figures alone without it), and typed as Any: its own stubs type
# nn.Sequential's items as Module, whose weight is no Tensor to mypy.
torch: Any
try:
    torch = importlib.import_module("torch")
except ImportError:
    torch = None

F32 = npt.NDArray[np.float32]


# One batch size's tensors, made once and reused (as mlp::Model does): x, t, h, z, dz, dh.
Batch = Tuple[accel.Tensor, accel.Tensor, accel.Tensor, accel.Tensor, accel.Tensor, accel.Tensor]
# One batch of an epoch's plan: its size, its rows of the gathered x and t (None where its tensors
# share them), then its Batch tensors.
Step = Tuple[int, Optional[F32], Optional[F32], accel.Tensor, accel.Tensor, accel.Tensor, accel.Tensor, accel.Tensor, accel.Tensor]


class AccelMLP:
    """The MLP's parameters, gradients and Adam moments on one accel device."""

    def __init__(self, dev: accel.Device, init: Dict[str, F32], lr: float) -> None:
        self.dev = dev
        self.lr = lr
        self.inputs = int(init["w1"].shape[1])
        self.hidden = int(init["w1"].shape[0])
        names = ("w1", "b1", "w2", "b2")
        self.params = [accel.from_numpy(init[k], device=dev) for k in names]
        self.grads = [accel.empty(p.shape, "f32", dev) for p in self.params]
        self.m = [accel.zeros(p.shape, "f32", dev) for p in self.params]
        self.v = [accel.zeros(p.shape, "f32", dev) for p in self.params]
        self.batches: Dict[int, Batch] = {}
        self.plans: Optional[Tuple[Tuple[Tuple[int, ...], int], F32, F32, List[Step]]] = None
        self.step = 0

    def batch(self, b: int) -> Batch:
        """The tensors of batch size b: x [b, in], t [b, 1], h [b, hidden], z [b, 1], dz [b, 1], dh [b, hidden]."""
        bt = self.batches.get(b)
        if bt is None:
            d, i, h = self.dev, self.inputs, self.hidden
            bt = self.batches[b] = (accel.empty((b, i), "f32", d), accel.empty((b, 1), "f32", d),
                                    accel.empty((b, h), "f32", d), accel.empty((b, 1), "f32", d),
                                    accel.empty((b, 1), "f32", d), accel.empty((b, h), "f32", d))
        return bt

    def plan(self, x: F32, y: F32, batch: int) -> Tuple[F32, F32, List[Step]]:
        """Buffers for an epoch's samples in batch order, and per batch: its size, its rows of
        those buffers and its tensors, in one flat tuple. Where the device shares host memory
        (the host backend), the batch's x and t are tensors over those rows (accel.from_dlpack
        without a copy) and the rows are None: nothing to upload. Made once per data set and
        batch size."""
        key = (x.shape, batch)
        if self.plans is None or self.plans[0] != key:
            xs, ys = np.empty_like(x), np.empty_like(y).reshape(-1, 1)
            n = int(x.shape[0])
            steps: List[Step] = []
            for s in range(0, n, batch):
                b = min(batch, n - s)
                x_rows, t_rows = xs[s:s + b], ys[s:s + b]
                xb, tb, h, z, dz, dh = self.batch(b)
                try:
                    shared = (accel.from_dlpack(x_rows, device=self.dev, copy=False),
                              accel.from_dlpack(t_rows, device=self.dev, copy=False))
                except BufferError:  # a device with memory of its own: upload each batch
                    steps.append((b, x_rows, t_rows, xb, tb, h, z, dz, dh))
                else:
                    steps.append((b, None, None) + shared + (h, z, dz, dh))
            self.plans = (key, xs, ys.reshape(-1), steps)
        return self.plans[1], self.plans[2], self.plans[3]

    def train_epoch(self, x: F32, y: F32, seed: int, epoch: int, batch: int) -> float:
        """One pass in epoch_order(seed, epoch); returns the mean per-sample loss seen."""
        n = int(x.shape[0])
        order = accel.mlp.epoch_order(n, seed, epoch)
        # The epoch's samples gathered in batch order (take copies rows into buffers kept
        # between epochs): each batch is then a contiguous block of rows, which the batch's
        # tensors share on the host backend. mode="clip" changes nothing for a permutation,
        # and skips the bounds-checked buffered path (half the time); the method skips
        # np.take's Python wrapper (1 µs of 4).
        xs, ys, steps = self.plan(x, y, batch)
        x.take(order, axis=0, out=xs, mode="clip")
        y.take(order, axis=0, out=ys, mode="clip")
        dense, dense_backward = ops.dense, ops.dense_backward
        loss, loss_backward, adam_step = ops.bce_with_logits_loss, ops.bce_with_logits_backward, ops.adam_step
        params, grads, m, v, lr = self.params, self.grads, self.m, self.v, self.lr
        w1, b1, w2, b2 = params
        gw1, gb1, gw2, gb2 = grads
        step = self.step
        loss_sum = 0.0
        for b, x_rows, t_rows, xb, tb, h, z, dz, dh in steps:
            if x_rows is not None:
                xb.copy_from(x_rows)
                tb.copy_from(t_rows)
            # Positional arguments: keyword matching costs ~0.1 µs each in this hot loop.
            dense(xb, w1, b1, h, "relu")
            dense(h, w2, b2, z)
            loss_sum += loss(z, tb) * b
            loss_backward(z, tb, dz)
            dense_backward(h, w2, z, dz, "none", dh, gw2, gb2)  # activation, dx, dw, db
            dense_backward(xb, w1, h, dh, "relu", None, gw1, gb1, False)  # ..., with_dx=False
            step += 1
            adam_step(params, grads, m, v, step, lr)  # w1, b1, w2, b2
        self.step = step
        return loss_sum / n

    def logits(self, x: F32) -> F32:
        xt = accel.from_numpy(x, device=self.dev)
        h = ops.dense(xt, self.params[0], self.params[1], activation="relu")
        return np.asarray(ops.dense(h, self.params[2], self.params[3]).numpy(), dtype=np.float32).reshape(-1)


def accuracy(z: F32, y: F32) -> float:
    return float(np.mean((z > 0).astype(np.float32) == y))


# accel-bench's contention mark (tools/bench/runner.hpp, kStallRatio and kStallMs): the slowest
# steady epoch took at least this many times the fastest and this many ms more.
STALL_RATIO, STALL_MS = 3.0, 1.0


def epoch_times(seconds: List[float]) -> Dict[str, Any]:
    """The epoch times in ms: the first apart (one-time work: kernel compilation, allocations), the
    steady epochs 2..N as median, min and max (None for a single epoch), the mean of all, and
    whether the steady epochs' spread shows contention (accel-bench's rule)."""
    ms = [1e3 * t for t in seconds]
    steady = ms[1:]
    contended = bool(steady) and max(steady) >= STALL_RATIO * min(steady) and max(steady) - min(steady) >= STALL_MS
    return {"first_epoch_ms": ms[0] if ms else None,
            "steady_median_ms": statistics.median(steady) if steady else None,
            "steady_min_ms": min(steady) if steady else None,
            "steady_max_ms": max(steady) if steady else None,
            "contended": contended,
            "ms_per_epoch": sum(ms) / max(len(ms), 1)}


class AccelRun:
    """accel's training on one device, an epoch at a time (train_all times them)."""

    def __init__(self, dev: accel.Device, init: Dict[str, F32], split: Tuple[F32, F32, F32, F32],
                 args: argparse.Namespace) -> None:
        self.dev, self.split, self.args = dev, split, args
        self.model = AccelMLP(dev, init, args.lr)

    def epoch(self, e: int) -> float:
        x, y = self.split[0], self.split[1]
        loss = self.model.train_epoch(x, y, self.args.seed, e, self.args.batch)
        self.dev.synchronize()  # the Adam steps after the last loss read are part of the epoch
        return loss

    def result(self) -> Dict[str, Any]:
        x, y, xt, yt = self.split
        return {"framework": "accel", "device": f"{self.dev.selector} ({self.dev.name})",
                "train_accuracy": accuracy(self.model.logits(x), y),
                "test_accuracy": accuracy(self.model.logits(xt), yt)}


def train_all(runs: List[Any], epochs: int) -> List[Dict[str, Any]]:
    """Trains every run an epoch in turn (the first of each round rotating), each epoch timed by the
    host clock around it (run.epoch synchronizes its device): the runs share the machine's load."""
    losses: List[List[float]] = [[] for _ in runs]
    times: List[List[float]] = [[] for _ in runs]
    for e in range(epochs):
        for k in range(len(runs)):
            i = (k + e) % len(runs)
            t0 = time.perf_counter()
            losses[i].append(runs[i].epoch(e))
            times[i].append(time.perf_counter() - t0)
    return [{**r.result(), "loss": losses[i], **epoch_times(times[i])} for i, r in enumerate(runs)]


def compare_cpp(dev: accel.Device, init: Dict[str, F32], split: Tuple[F32, F32, F32, F32],
                args: argparse.Namespace) -> Dict[str, Any]:
    """This file's loop against mlp_train's own (C++, accel.mlp.MlpModel) on one device, epoch
    by epoch in one process (which runs first alternates), so that both see the same machine
    load: per-epoch times (host clock, device synchronized) and whether the losses agree."""
    x, y = split[0], split[1]
    model = AccelMLP(dev, init, args.lr)
    cpp = accel.mlp.MlpModel(dev, args.hidden, args.seed, x, y, args.batch, args.lr)
    py_ms: List[float] = []
    cpp_ms: List[float] = []
    equal = True
    for e in range(args.epochs):
        for which in ((0, 1) if e % 2 == 0 else (1, 0)):
            t0 = time.perf_counter()
            if which == 0:
                loss_py = model.train_epoch(x, y, args.seed, e, args.batch)
            else:
                loss_cpp = cpp.train_epoch(e)
            dev.synchronize()
            (py_ms if which == 0 else cpp_ms).append(1e3 * (time.perf_counter() - t0))
        equal = equal and loss_py == loss_cpp
    return {"device": dev.selector, "python_median_ms_per_epoch": statistics.median(py_ms),
            "cpp_median_ms_per_epoch": statistics.median(cpp_ms),
            "ratio": statistics.median(py_ms) / statistics.median(cpp_ms), "losses_equal": equal}


class TorchRun:
    """The same model in PyTorch on the CPU: nn.Linear layers loaded with the same weights,
    BCEWithLogitsLoss, torch.optim.Adam with accel's numbers (float32), the same batches, an epoch
    at a time (train_all times them as accel's). Its losses agree with accel's to about 6 digits
    (float32 arithmetic in another order)."""

    def __init__(self, init: Dict[str, F32], split: Tuple[F32, F32, F32, F32], args: argparse.Namespace) -> None:
        assert torch is not None
        self.split, self.args = split, args
        self.x, self.y = torch.from_numpy(split[0]), torch.from_numpy(split[1])
        hidden, inputs = init["w1"].shape
        model = torch.nn.Sequential(torch.nn.Linear(inputs, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, 1))
        with torch.no_grad():
            model[0].weight.copy_(torch.from_numpy(init["w1"]))
            model[0].bias.copy_(torch.from_numpy(init["b1"]))
            model[2].weight.copy_(torch.from_numpy(init["w2"]))
            model[2].bias.copy_(torch.from_numpy(init["b2"]))

        def f32(v: float) -> float:  # Adam's numbers as accel holds them (float32)
            return float(np.float32(v))

        self.model = model
        self.opt = torch.optim.Adam(model.parameters(), lr=f32(args.lr), betas=(f32(0.9), f32(0.999)), eps=f32(1e-8))
        self.loss_fn = torch.nn.BCEWithLogitsLoss()

    def epoch(self, e: int) -> float:
        n = int(self.x.shape[0])
        order = torch.from_numpy(accel.mlp.epoch_order(n, self.args.seed, e))
        loss_sum = 0.0
        for start in range(0, n, self.args.batch):
            idx = order[start:start + self.args.batch]
            self.opt.zero_grad()
            loss = self.loss_fn(self.model(self.x[idx]).reshape(-1), self.y[idx])
            loss.backward()
            self.opt.step()
            loss_sum += float(loss.item()) * len(idx)  # .item() waits for the step: the epoch has ended
        return loss_sum / n

    def result(self) -> Dict[str, Any]:
        with torch.no_grad():
            z = self.model(self.x).reshape(-1).numpy()
            zt = self.model(torch.from_numpy(self.split[2])).reshape(-1).numpy()
        return {"framework": "torch", "device": f"cpu ({torch.get_num_threads()} threads)",
                "train_accuracy": accuracy(z, self.split[1]), "test_accuracy": accuracy(zt, self.split[3])}


def open_devices(spec: str) -> List[accel.Device]:
    """The devices --backends names: "all" (each available backend's first device), a comma-separated
    list of selectors, or "" (accel.default_device(): ACCEL_BACKEND, else auto)."""
    if spec == "all":
        return [accel.device(str(b["name"])) for b in accel.backends() if b["available"]]
    if not spec:
        return [accel.default_device()]
    selectors = [s for s in spec.split(",") if s.strip()]
    if not selectors:
        raise accel.InvalidArgument("--backends got an empty list")
    return [accel.device(s.strip()) for s in selectors]


def ms(value: Optional[float]) -> str:
    return f"{value:.3f}" if value is not None else "–"


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--backends", default="", metavar="all|LIST",
                   help="all (every available backend), or a comma-separated list of selectors (host, opencl[:N], "
                        "kokkos[:N|:SPACE], cuda[:N], auto); default: $ACCEL_BACKEND, else auto")
    p.add_argument("--backend", dest="backends", help=argparse.SUPPRESS)  # the older name
    p.add_argument("--epochs", type=int, default=500, help="epochs (default 500, as mlp_train)")
    p.add_argument("--hidden", type=int, default=10, help="hidden units (default 10)")
    p.add_argument("--batch", type=int, default=40, help="batch size (default 40)")
    p.add_argument("--lr", type=float, default=1e-3, help="Adam learning rate (default 0.001)")
    p.add_argument("--seed", type=int, default=1, help="seed of split, weights and batch order (default 1)")
    p.add_argument("--data", default="", help="CSV data set (default: the one bundled with accel)")
    p.add_argument("--no-torch", action="store_true", help="skip the PyTorch run")
    p.add_argument("--json", default="", metavar="FILE", help="also write the results as JSON to FILE")
    p.add_argument("--compare-cpp", action="store_true",
                   help="also time this loop against mlp_train's C++ loop, epoch by epoch in this process")
    args = p.parse_args(argv)
    if args.epochs < 1 or args.batch < 1 or args.hidden < 1:
        p.error("--epochs, --batch and --hidden must be positive")

    try:
        devices = open_devices(args.backends)
    except accel.Error as err:  # a selector naming no usable device: accel's reason, in one line
        print(f"{p.prog}: {str(err).splitlines()[0]}", file=sys.stderr)
        return 2
    split = accel.mlp.problem(args.seed, args.data)
    init = accel.mlp.init_params(split[0].shape[1], args.hidden, args.seed)
    print(f"{split[0].shape[0]} train / {split[2].shape[0]} test samples, {split[0].shape[1]} features; network "
          f"{split[0].shape[1]}-{args.hidden}-1, {args.epochs} epochs, batch {args.batch}, lr {args.lr:g}, "
          f"seed {args.seed}")
    trainers: List[Any] = [AccelRun(dev, init, split, args) for dev in devices]
    if torch is not None and not args.no_torch:
        trainers.append(TorchRun(init, split, args))
    elif not args.no_torch:
        print("(PyTorch is not installed: pip install torch for the side-by-side run)", file=sys.stderr)
    runs = train_all(trainers, args.epochs)

    names = [r["framework"] if r["framework"] != "accel" else r["device"].split(" ")[0] for r in runs]
    print("\nepoch " + "".join(f"{n[:11] + ' loss':>16}" for n in names))
    for e in range(args.epochs):
        if (e + 1) % 50 == 0 or e + 1 == args.epochs or e == 0:
            print(f"{e + 1:5d} " + "".join(f"{r['loss'][e]:16.6f}" for r in runs))
    # Within 100 columns: the device's name cut to 24 characters.
    print(f"\n{'framework':<10} {'device':<24} {'final loss':>11} {'train %':>8} {'test %':>7} {'1st ms':>8} "
          f"{'steady ms':>24}")
    for r in runs:
        mark = "!" if r["contended"] else ""
        steady = f"{ms(r['steady_median_ms'])} ({ms(r['steady_min_ms'])}..{ms(r['steady_max_ms'])}{mark})"
        print(f"{r['framework']:<10} {r['device'][:24]:<24} {r['loss'][-1]:11.6f} {100 * r['train_accuracy']:8.2f} "
              f"{100 * r['test_accuracy']:7.2f} {ms(r['first_epoch_ms']):>8} {steady:>24}")
    print("1st ms: the first epoch; steady ms: the median of the later epochs (min..max of epochs 2..N)")
    comparisons: List[Dict[str, Any]] = []
    if any(r["contended"] for r in runs):
        print(f"! the steady epochs' spread shows contention (the slowest took >= {STALL_RATIO:g}x the fastest and "
              f">= {STALL_MS:g} ms more): the machine was busy; that median is not the device's alone")
    if args.compare_cpp:
        for dev in devices:
            c = compare_cpp(dev, init, split, args)
            comparisons.append(c)
            print(f"\nepoch by epoch on {dev.selector}: this Python loop {c['python_median_ms_per_epoch']:.4f} ms, "
                  f"mlp_train's C++ loop {c['cpp_median_ms_per_epoch']:.4f} ms (medians), ratio {c['ratio']:.3f}; "
                  f"losses equal every epoch: {c['losses_equal']}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"config": vars(args), "results": runs, "compare_cpp": comparisons}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
