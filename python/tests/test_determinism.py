"""Deterministic mode from Python: Device.deterministic, the ops' deterministic= and DeviceInfo.determinism.

With the mode on, a product's row is the same bits whatever the batch size,
a repeated call gives the same bits, and the vendor path raises Unsupported
(it cannot keep the promise). Fresh random data every run.
"""

from __future__ import annotations

from typing import Iterator

import numpy as np
import pytest

import accel
import accel.ops as ops

RNG = np.random.default_rng()


@pytest.fixture
def deterministic(device: accel.Device) -> Iterator[accel.Device]:
    """The device with deterministic mode on, restored afterwards."""
    was = device.deterministic
    device.deterministic = True
    try:
        yield device
    finally:
        device.deterministic = was


def test_promise_is_stated(device: accel.Device) -> None:
    promise = device.info.determinism
    assert promise["reproducible"] and promise["batch_invariant"], promise
    assert promise["basis"]
    assert device.info.as_dict()["determinism"] == promise


def test_dense_rows_do_not_depend_on_the_batch(deterministic: accel.Device) -> None:
    x = RNG.standard_normal((256, 300)).astype(np.float32)
    w = accel.from_numpy(RNG.standard_normal((30, 300)).astype(np.float32), device=deterministic)
    b = accel.from_numpy(RNG.standard_normal(30).astype(np.float32), device=deterministic)
    full = ops.dense(accel.from_numpy(x, device=deterministic), w, b, activation="gelu").numpy()
    again = ops.dense(accel.from_numpy(x, device=deterministic), w, b, activation="gelu").numpy()
    assert full.tobytes() == again.tobytes()
    for rows in (1, 7):
        part = ops.dense(accel.from_numpy(x[:rows].copy(), device=deterministic), w, b, activation="gelu").numpy()
        assert part.tobytes() == full[:rows].tobytes(), f"rows of a batch of {rows} differ from a batch of 256"


def test_vendor_path_is_refused(deterministic: accel.Device) -> None:
    a = accel.from_numpy(RNG.standard_normal((16, 16)).astype(np.float32), device=deterministic)
    with pytest.raises(accel.Unsupported, match="vendor path"):
        ops.matmul(a, a, path="vendor")
    ops.matmul(a, a, path="native")  # the native path runs


def test_mode_is_per_device(device: accel.Device) -> None:
    was = device.deterministic
    try:
        device.deterministic = True
        assert device.deterministic
        device.deterministic = False
        assert not device.deterministic
    finally:
        device.deterministic = was


def test_per_call_option_wins_over_the_device(device: accel.Device) -> None:
    was = device.deterministic
    a = accel.from_numpy(RNG.standard_normal((16, 16)).astype(np.float32), device=device)
    try:
        device.deterministic = False
        with pytest.raises(accel.Unsupported, match="deterministic mode"):
            ops.matmul(a, a, path="vendor", deterministic=True)
        device.deterministic = True
        with pytest.raises(accel.Unsupported, match="deterministic mode"):
            ops.dense(a, a, path="vendor")
        once = ops.sigmoid(a, deterministic=True).numpy()
        assert once.tobytes() == ops.sigmoid(a).numpy().tobytes()
        if device.supports("matmul", "f32", "vendor"):
            ops.matmul(a, a, path="vendor", deterministic=False)  # the call's choice wins
    finally:
        device.deterministic = was
