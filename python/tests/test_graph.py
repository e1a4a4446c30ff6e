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


def test_a_captured_adam_step_reads_its_step_count_at_every_replay(device: accel.Device) -> None:
    import gc

    shape = (257,)
    start = RNG.uniform(-1, 1, size=shape).astype(np.float32)
    grads = [RNG.uniform(-1, 1, size=shape).astype(np.float32) for _ in range(4)]

    def fresh() -> list[accel.Tensor]:
        return [accel.from_numpy(start, device=device), accel.empty(shape, device=device),
                accel.zeros(shape, device=device), accel.zeros(shape, device=device)]

    def bits(ts: list[accel.Tensor]) -> list[bytes]:
        return [ts[i].numpy().tobytes() for i in (0, 2, 3)]  # param, m, v

    eager = fresh()  # steps 1..4 as numbers
    for t, grad in enumerate(grads, start=1):
        eager[1].copy_from(grad)
        ops.adam_step(*eager, t, lr=0.05)
    # Captured once with a StepCount (the list form), replayed with the count advanced: the same bits.
    graphed, step = fresh(), accel.StepCount(1)
    graph = accel.capture(device.default_stream(),
                          lambda: ops.adam_step([graphed[0]], [graphed[1]], [graphed[2]], [graphed[3]], step, 0.05))
    assert graph.op_names == ["adam_step"]
    step.value = 0
    for grad in grads:
        graphed[1].copy_from(grad)
        step += 1
        graph.launch()
    assert int(step) == 4 and repr(step) == "accel.StepCount(4)"
    assert bits(graphed) == bits(eager)
    # A replay at count 0 is refused, and so is an eager call.
    step.value = 0
    with pytest.raises(accel.InvalidArgument):
        graph.launch()
    with pytest.raises(accel.InvalidArgument):
        ops.adam_step(*graphed, accel.StepCount())
    # The graph keeps its StepCount alive: a replay after the program dropped it is step 1.
    once, first = fresh(), fresh()
    count = accel.StepCount(1)
    kept = accel.capture(device.default_stream(), lambda: ops.adam_step(*once, count, lr=0.05))
    del count
    gc.collect()
    once[1].copy_from(grads[0])
    kept.launch()
    first[1].copy_from(grads[0])
    ops.adam_step(*first, 1, lr=0.05)
    assert bits(once) == bits(first)
