"""accel.capture and accel.Graph: ops recorded once, replayed bit for bit.

On every device: a replay gives the eager calls' bits on fresh random data and
reads the tensors' current contents; a capture runs nothing; an allocation
inside a capture raises InvalidArgument and leaves the stream usable.
"""

from __future__ import annotations

import numpy as np
import pytest

import accel
import accel.ops as ops

RNG = np.random.default_rng()


def _tensor(device: accel.Device, shape: tuple[int, ...]) -> accel.Tensor:
    return accel.from_numpy(RNG.uniform(-1, 1, size=shape).astype(np.float32), device=device)


def test_replay_gives_the_eager_bits(device: accel.Device) -> None:
    x, w, b = _tensor(device, (40, 30)), _tensor(device, (10, 30)), _tensor(device, (10,))
    y, y_eager = accel.full((40, 10), float("nan"), device=device), accel.empty((40, 10), device=device)
    s = device.default_stream()
    g = accel.capture(s, lambda: ops.dense(x, w, b, out=y, activation="relu", path="native"))
    assert len(g) == 1 and g.op_names == ["dense"] and not g.empty
    assert g.device is device
    assert np.isnan(y.numpy()).all()  # the capture ran nothing
    for _ in range(2):
        x.copy_from(RNG.uniform(-1, 1, size=(40, 30)).astype(np.float32))
        g.launch(s)
        ops.dense(x, w, b, out=y_eager, activation="relu", path="native")
        assert y.numpy().tobytes() == y_eager.numpy().tobytes()


def test_allocation_inside_a_capture_is_refused(device: accel.Device) -> None:
    a, c = _tensor(device, (64,)), accel.empty((64,), device=device)
    s = device.default_stream()
    with pytest.raises(accel.InvalidArgument, match="allocate .* while capturing a graph"):
        accel.capture(s, lambda: ops.add(a, a))  # a + a makes a new tensor
    with pytest.raises(ZeroDivisionError):  # the program's own error passes on
        accel.capture(s, lambda: 1 / 0)
    ops.add(a, a, out=c)  # eager again
    assert np.array_equal(c.numpy(), a.numpy() + a.numpy())
    assert accel.capture(s, lambda: None).empty


def test_mlp_model_with_graphs_trains_to_the_same_losses(device: accel.Device) -> None:
    import accel.mlp

    train_x, train_y, _, _ = accel.mlp.problem(seed=3)
    eager = accel.mlp.MlpModel(device, 10, 3, train_x, train_y)
    graphed = accel.mlp.MlpModel(device, 10, 3, train_x, train_y, graph=True)
    for epoch in range(2):
        assert graphed.train_epoch(epoch) == eager.train_epoch(epoch)
