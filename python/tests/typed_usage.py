"""A typed use of the API, checked by mypy --strict against the package's stub (test_runtime.py)."""

from __future__ import annotations

from typing import Any, List, Optional, Tuple

import numpy as np
import numpy.typing as npt

import accel
import accel.bench
import accel.ops as ops


def run() -> Tuple[float, List[accel.bench.Row]]:
    dev: accel.Device = accel.default_device()
    info: accel.DeviceInfo = dev.info
    name: str = info.name
    x: accel.Tensor = accel.from_numpy(np.ones((4, 3), dtype=np.float32), device=dev)
    w: accel.Tensor = accel.zeros((2, 3), "f32", dev)
    b: Optional[accel.Tensor] = None
    y: accel.Tensor = ops.dense(x, w, b, activation="relu", path="native")
    dx, dw, db = ops.dense_backward(x, w, y, y, activation="relu")
    shape: Tuple[int, ...] = dw.shape
    s: accel.Stream = dev.create_stream()
    e0, e1 = dev.create_event(), dev.create_event()
    e0.record(s)
    ops.add(y, y, out=y, stream=s)
    e1.record(s)
    ms: float = dev.elapsed_ms(e0, e1)
    loss: float = ops.bce_with_logits_loss(y, y)
    back: accel.Tensor = accel.from_dlpack(np.from_dlpack(y))
    summed: accel.Tensor = x + x * accel.ones((4, 3), np.float32, dev) + accel.full((4, 3), 2.0, "f32", dev)
    product: accel.Tensor = summed @ accel.zeros((3, 2), dtype=np.dtype("float32"), device=dev)
    values: npt.NDArray[Any] = np.asarray(product)
    scaled: accel.Tensor = -(2.0 * x + 1) * 0.5
    scaled += x
    scaled *= 3
    gram: accel.Tensor = x.T @ x + ops.matmul(x.transpose().contiguous(), x)
    one: float = float(accel.from_numpy([1.0], device=dev))
    rows = accel.bench.run(backends=["host"], ops=["add"], quick=True, progress=print).rows
    del name, dx, db, shape, loss, back, values, scaled, gram, one
    return ms, rows
