"""Every op of accel.ops against NumPy's float64 result on fresh random data.

The pass criterion is the conformance suite's: the normalized mean squared
error sum((y - ref)^2) / sum(ref^2) within the op table's threshold for the
dtype (accel.nmse_threshold), the reference computed in float64 from the
inputs as stored (rounded to the dtype). Each (op, dtype, path) the device
has no kernel for is skipped with accel's reason.
"""

from __future__ import annotations

import math
import warnings
from typing import Callable, Dict, List, Sequence, Tuple

import numpy as np
import numpy.typing as npt
import pytest

import accel
import accel.ops as ops

F64 = npt.NDArray[np.float64]
DTYPES = ["f32", "f64", "f16", "bf16"]
RNG = np.random.default_rng()  # fresh data every run


def stored(t: accel.Tensor) -> F64:
    """The tensor's values in float64 (what the device holds)."""
    return np.asarray(t.numpy(), dtype=np.float64)


def tensor(dev: accel.Device, shape: Tuple[int, ...], dtype: str, low: float = -2.0, high: float = 2.0) -> accel.Tensor:
    return accel.from_numpy(RNG.uniform(low, high, size=shape).astype(np.float32), device=dev, dtype=dtype)


def nmse(got: F64, ref: F64) -> float:
    assert got.shape == ref.shape, f"shape {got.shape}, expected {ref.shape}"
    if not np.all(np.isfinite(got)):
        return float("inf")
    norm = float(np.sum(ref * ref))
    err = float(np.sum((got - ref) ** 2))
    return err / norm if norm > 0 else err / max(got.size, 1)


def check(op: str, dtype: str, got: accel.Tensor, ref: F64) -> None:
    limit = accel.nmse_threshold(op, dtype)
    value = nmse(stored(got), ref)
    assert value <= limit, f"{op} {dtype} on {got.device.selector}: NMSE {value:.3g} above the threshold {limit:.3g}"


def run_or_skip(f: Callable[[], object], what: str) -> None:
    try:
        f()
    except accel.Unsupported as e:
        pytest.skip(f"{what}: {e}")


def sigmoid(x: F64) -> F64:
    return np.asarray(1.0 / (1.0 + np.exp(-x)), dtype=np.float64)


ERFC = np.vectorize(math.erfc, otypes=[np.float64])
GELU_C, GELU_K = math.sqrt(2.0 / math.pi), 0.044715


def gelu(x: F64) -> F64:
    """x * Phi(x) (torch.nn.functional.gelu, approximate='none'), Phi(x) = erfc(-x / sqrt(2)) / 2."""
    return np.asarray(x * 0.5 * ERFC(-x / math.sqrt(2.0)), dtype=np.float64)


def gelu_tanh(x: F64) -> F64:
    """torch.nn.functional.gelu with approximate='tanh'."""
    return np.asarray(0.5 * x * (1.0 + np.tanh(GELU_C * (x + GELU_K * x**3))), dtype=np.float64)


def gelu_grad(x: F64) -> F64:
    """d/dx x * Phi(x) = Phi(x) + x * phi(x)."""
    return np.asarray(0.5 * ERFC(-x / math.sqrt(2.0)) + x * np.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi))


def gelu_tanh_grad(x: F64) -> F64:
    """d/dx of the tanh form: 0.5 (1 + t) + 0.5 x (1 - t^2) sqrt(2/pi) (1 + 3 k x^2), t = tanh(u)."""
    t = np.tanh(GELU_C * (x + GELU_K * x**3))
    return np.asarray(0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * GELU_C * (1.0 + 3.0 * GELU_K * x * x))


ELEMENTWISE: Dict[str, Tuple[int, Callable[..., F64], List[Tuple[float, float]]]] = {
    "add": (2, lambda a, b: a + b, [(-2, 2), (-2, 2)]),
    "mul": (2, lambda a, b: a * b, [(-2, 2), (-2, 2)]),
    "copy": (1, lambda x: x, [(-2, 2)]),
    "sigmoid": (1, sigmoid, [(-8, 8)]),
    "relu": (1, lambda x: np.maximum(x, 0.0), [(-2, 2)]),
    "relu_backward": (2, lambda dy, x: np.where(x > 0, dy, 0.0), [(-2, 2), (-2, 2)]),
    "sigmoid_backward": (2, lambda dy, y: dy * y * (1.0 - y), [(-2, 2), (0, 1)]),
    "bce_with_logits": (
        2,
        lambda z, t: np.maximum(z, 0.0) - z * t + np.log1p(np.exp(-np.abs(z))),
        [(-6, 6), (0, 1)],
    ),
    "bce_with_logits_backward": (2, lambda z, t: (sigmoid(z) - t) / z.size, [(-6, 6), (0, 1)]),
    "gelu": (1, gelu, [(-6, 6)]),
    "gelu_tanh": (1, gelu_tanh, [(-6, 6)]),
    "gelu_backward": (2, lambda dy, x: dy * gelu_grad(x), [(-1, 1), (-6, 6)]),
    "gelu_tanh_backward": (2, lambda dy, x: dy * gelu_tanh_grad(x), [(-1, 1), (-6, 6)]),
}

ACTIVATIONS: Dict[str, Callable[[F64], F64]] = {
    "none": lambda v: v,
    "relu": lambda v: np.maximum(v, 0.0),
    "sigmoid": sigmoid,
    "gelu": gelu,
    "gelu_tanh": gelu_tanh,
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1000,), (37, 29)], ids=["rank1", "rank2"])
@pytest.mark.parametrize("op", sorted(ELEMENTWISE))
def test_elementwise(device: accel.Device, op: str, shape: Tuple[int, ...], dtype: str) -> None:
    arity, ref_fn, ranges = ELEMENTWISE[op]
    if not device.supports(op, dtype, "native"):
        pytest.skip(f"{op} in {dtype} does not run on {device.selector}")
    inputs = [tensor(device, shape, dtype, lo, hi) for lo, hi in ranges[:arity]]
    out = getattr(ops, op)(*inputs, path="native")
    assert out.shape == shape and out.dtype == dtype
    check(op, dtype, out, ref_fn(*[stored(t) for t in inputs]))
    # An output given is written and returned.
    given = accel.empty(shape, dtype, device)
    assert getattr(ops, op)(*inputs, out=given) is given
    check(op, dtype, given, ref_fn(*[stored(t) for t in inputs]))


@pytest.mark.parametrize("dtype", DTYPES)
def test_bce_with_logits_backward_scaled(device: accel.Device, dtype: str) -> None:
    if not device.supports("bce_with_logits_backward", dtype, "native"):
        pytest.skip(f"bce_with_logits_backward in {dtype} does not run on {device.selector}")
    z, t = tensor(device, (64, 1), dtype, -6, 6), tensor(device, (64, 1), dtype, 0, 1)
    dz = ops.bce_with_logits_backward(z, t, scale=0.125)
    check("bce_with_logits_backward", dtype, dz, (sigmoid(stored(z)) - stored(t)) * 0.125)


@pytest.mark.parametrize("dtype", DTYPES)
def test_bce_with_logits_loss(device: accel.Device, dtype: str) -> None:
    if not device.supports("bce_with_logits", dtype, "native"):
        pytest.skip(f"bce_with_logits in {dtype} does not run on {device.selector}")
    z, t = tensor(device, (300,), dtype, -6, 6), tensor(device, (300,), dtype, 0, 1)
    zs, ts = stored(z), stored(t)
    ref = float(np.mean(np.maximum(zs, 0) - zs * ts + np.log1p(np.exp(-np.abs(zs)))))
    loss = ops.bce_with_logits_loss(z, t)
    assert isinstance(loss, float)
    assert abs(loss - ref) <= 1e-2 * abs(ref) if dtype in ("f16", "bf16") else abs(loss - ref) <= 1e-5 * abs(ref)


# Logits whose loss log1p(exp(-z)) is subnormal in the dtype (f32: 3.8e-44 at z = 100).
SUBNORMAL_LOSS_Z = {"f32": 100.0, "f64": 740.0, "bf16": 90.0}


@pytest.mark.parametrize("dtype", sorted(SUBNORMAL_LOSS_Z))
def test_bce_with_logits_subnormal_loss(device: accel.Device, dtype: str) -> None:
    """bce_with_logits(z, 1) against PyTorch's definition max(z, 0) - z t + log1p(exp(-|z|)) where the loss is
    subnormal: the value itself, or 0 on a device that says it flushes the dtype's subnormals."""
    if not device.supports("bce_with_logits", dtype, "native"):
        pytest.skip(f"bce_with_logits in {dtype} does not run on {device.selector}")
    z0 = SUBNORMAL_LOSS_Z[dtype]
    z = accel.from_numpy(np.array([z0, -z0], dtype=np.float32 if dtype != "f64" else np.float64), device=device,
                         dtype=dtype)
    t = accel.from_numpy(np.array([1.0, 0.0], dtype=np.float32), device=device, dtype=dtype)
    zs, ts = stored(z), stored(t)
    ref = np.maximum(zs, 0) - zs * ts + np.log1p(np.exp(-np.abs(zs)))
    want = stored(accel.from_numpy(ref.astype(np.float64 if dtype == "f64" else np.float32), device=device, dtype=dtype))
    got = stored(ops.bce_with_logits(z, t))
    tiny = math.ldexp(1.0, {"f32": -149, "f64": -1074, "bf16": -133}[dtype])  # the smallest subnormal
    close = np.abs(got - want) <= np.maximum(1e-6 * np.abs(want), 4 * tiny)
    subnormals = device.info.subnormals
    if dtype in subnormals["flushed"]:
        assert np.all(close | (got == 0)), f"{got} is neither the loss {want} nor flushed to 0"
        warnings.warn(f"{device.selector} flushes {dtype} subnormals ({subnormals['basis']}): the loss {want[0]:.3g} "
                      f"compared with flush-to-zero semantics, got {got[0]:.3g}")
    else:
        assert np.all(close & (got != 0)), f"{got}, expected the subnormal loss {want} ({device.selector} keeps them)"


def paths_of(device: accel.Device, op: str, dtype: str) -> List[str]:
    return [p for p in ("native", "vendor") if device.supports(op, dtype, p)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("trans", [(False, False), (True, False), (False, True), (True, True)], ids=["nn", "tn", "nt", "tt"])
@pytest.mark.parametrize("path", ["native", "vendor"])
def test_matmul(device: accel.Device, path: str, trans: Tuple[bool, bool], dtype: str) -> None:
    if not device.supports("matmul", dtype, path):
        pytest.skip(f"matmul in {dtype} on the {path} path does not run on {device.selector}")
    m, n, k = 33, 47, 65
    a = tensor(device, (k, m) if trans[0] else (m, k), dtype)
    b = tensor(device, (n, k) if trans[1] else (k, n), dtype)
    c = ops.matmul(a, b, trans_a=trans[0], trans_b=trans[1], path=path)
    assert c.shape == (m, n)
    sa, sb = stored(a), stored(b)
    check("matmul", dtype, c, (sa.T if trans[0] else sa) @ (sb.T if trans[1] else sb))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("activation", sorted(ACTIVATIONS))
@pytest.mark.parametrize("path", ["native", "vendor"])
def test_dense(device: accel.Device, path: str, activation: str, dtype: str) -> None:
    if not device.supports("dense", dtype, path):
        pytest.skip(f"dense in {dtype} on the {path} path does not run on {device.selector}")
    x, w, b = tensor(device, (17, 30), dtype), tensor(device, (10, 30), dtype), tensor(device, (10,), dtype)
    y = ops.dense(x, w, b, activation=activation, path=path)
    pre = stored(x) @ stored(w).T + stored(b)
    check("dense", dtype, y, ACTIVATIONS[activation](pre))
    y1 = ops.dense(x, w, None, path=path)  # no bias
    check("dense", dtype, y1, stored(x) @ stored(w).T)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("activation", sorted(ACTIVATIONS))
def test_dense_backward(device: accel.Device, activation: str, dtype: str) -> None:
    if not device.supports("dense", dtype, "native"):
        pytest.skip(f"dense in {dtype} does not run on {device.selector}")
    x, w, b = tensor(device, (17, 30), dtype), tensor(device, (10, 30), dtype), tensor(device, (10,), dtype)
    y = ops.dense(x, w, b, activation=activation)
    z = ops.dense(x, w, b)  # the pre-activation, which gelu's derivative is a function of
    dy = tensor(device, (17, 10), dtype)
    try:
        dx, dw, db = ops.dense_backward(x, w, y, dy, activation=activation, pre_activation=z)
    except accel.Unsupported as e:
        pytest.skip(f"dense_backward in {dtype} on {device.selector}: {e}")
    assert dx is not None and db is not None
    ys, dys, zs = stored(y), stored(dy), stored(z)
    g = {
        "none": dys,
        "relu": np.where(ys > 0, dys, 0.0),
        "sigmoid": dys * ys * (1 - ys),
        "gelu": dys * gelu_grad(zs),
        "gelu_tanh": dys * gelu_tanh_grad(zs),
    }[activation]
    check("dense", dtype, dx, g @ stored(w))
    check("dense", dtype, dw, g.T @ stored(x))
    check("column_sum", dtype, db, g.sum(axis=0))
    none_dx, dw2, none_db = ops.dense_backward(
        x, w, y, dy, activation=activation, with_dx=False, with_db=False, pre_activation=z
    )
    assert none_dx is None and none_db is None
    check("dense", dtype, dw2, g.T @ stored(x))


@pytest.mark.parametrize("activation", ["gelu", "gelu_tanh"])
def test_dense_backward_needs_the_pre_activation_for_gelu(host: accel.Device, activation: str) -> None:
    x, w = tensor(host, (4, 3), "f32"), tensor(host, (2, 3), "f32")
    y = ops.dense(x, w, None, activation=activation)
    with pytest.raises(accel.InvalidArgument, match="needs pre_activation"):
        ops.dense_backward(x, w, y, y, activation=activation)


@pytest.mark.parametrize("dtype", DTYPES)
def test_column_sum(device: accel.Device, dtype: str) -> None:
    if not device.supports("column_sum", dtype, "native"):
        pytest.skip(f"column_sum in {dtype} does not run on {device.selector}")
    x = tensor(device, (123, 45), dtype)
    y = ops.column_sum(x)
    assert y.shape == (45,)
    check("column_sum", dtype, y, stored(x).sum(axis=0))


@pytest.mark.parametrize("src", DTYPES)
@pytest.mark.parametrize("dst", DTYPES)
def test_convert(device: accel.Device, src: str, dst: str) -> None:
    if not device.supports("convert", dst, "native"):
        pytest.skip(f"convert to {dst} does not run on {device.selector}")
    x = tensor(device, (500,), src, -100, 100)
    y = ops.convert(x, dtype=dst)
    assert y.dtype == dst
    # The reference: x's values rounded to dst (as from_numpy rounds, on the host).
    ref = stored(accel.from_numpy(stored(x), device=accel.device("host"), dtype=dst))
    check("convert", dst, y, ref)


@pytest.mark.parametrize("dtype", ["f32", "f64"])
def test_adam_step(device: accel.Device, dtype: str) -> None:
    if not device.supports("adam_step", dtype, "native"):
        pytest.skip(f"adam_step in {dtype} does not run on {device.selector}")
    shape = (20, 30)
    p, g = tensor(device, shape, dtype), tensor(device, shape, dtype)
    m, v = accel.zeros(shape, dtype, device), accel.zeros(shape, dtype, device)
    ps, gs = stored(p), stored(g)
    ms, vs = np.zeros(shape), np.zeros(shape)
    # The hyper-parameters as accel holds them (float32, as torch.optim.Adam's Python floats become).
    lr, b1, b2, eps = (float(np.float32(h)) for h in (1e-2, 0.9, 0.999, 1e-8))
    for step in (1, 2, 3):
        assert ops.adam_step(p, g, m, v, step, lr=lr, beta1=b1, beta2=b2, eps=eps) is None
        ms = b1 * ms + (1 - b1) * gs
        vs = b2 * vs + (1 - b2) * gs * gs
        ps = ps - lr / (1 - b1**step) * ms / (np.sqrt(vs) / np.sqrt(1 - b2**step) + eps)
    check("adam_step", dtype, p, ps)
    check("adam_step", dtype, m, ms)
    check("adam_step", dtype, v, vs)


@pytest.mark.parametrize("dtype", DTYPES)
def test_scale_triad_dot(device: accel.Device, dtype: str) -> None:
    """BabelStream's mul, triad and dot against NumPy in float64 of the stored values."""
    for op in ("scale", "triad", "dot"):
        if not device.supports(op, dtype, "native"):
            pytest.skip(f"{op} in {dtype} does not run on {device.selector}")
    b, c = tensor(device, (37, 41), dtype), tensor(device, (37, 41), dtype)
    s = 0.4  # BabelStream's scalar; rounded to the compute type as the kernels do
    s_used = s if dtype == "f64" else float(np.float32(s))
    check("scale", dtype, ops.scale(c, s), s_used * stored(c))
    check("triad", dtype, ops.triad(b, c, s), stored(b) + s_used * stored(c))
    # dot over terms of one sign, for which the sum has a relative error bound.
    x, y = tensor(device, (100003,), dtype, 0.0, 1.0), tensor(device, (100003,), dtype, 0.0, 1.0)
    got = ops.dot(x, y)
    assert got.shape == (1,)
    check("dot", dtype, got, np.array([np.dot(stored(x), stored(y))]))
    out = accel.zeros((1,), dtype, device)
    assert ops.dot(x, y, out) is out
    assert stored(out)[0] == stored(got)[0]  # one fixed order: the same bits again
    with pytest.raises(accel.InvalidArgument, match="one element"):
        ops.dot(x, y, accel.zeros((2,), dtype, device))


def test_every_op_is_tested() -> None:
    """Each op of the op table has a test here, and a function in accel.ops."""
    tested = set(ELEMENTWISE) | {"matmul", "dense", "column_sum", "convert", "adam_step", "scale", "triad", "dot"}
    names: Sequence[str] = accel.op_names()
    assert set(names) <= tested, f"ops without a test: {sorted(set(names) - tested)}"
    for name in names:
        assert callable(getattr(ops, name)), name


def test_every_table_op_has_its_function() -> None:
    """Every op of the op table that is an accel::ops function (accel.op_names()) has a function in
    accel.ops, listed in __all__; each elementwise one is made from its table entry as
    accel._accel.elementwise_function makes it: the entry's input names first, then out, path and
    stream, and a docstring that names the entry."""
    for name in accel.op_names():
        assert name in ops.__all__ and callable(getattr(ops, name, None)), f"op {name!r} has no accel.ops function"
    for name in accel.elementwise_op_names():
        function = getattr(ops, name)
        made = accel._accel.elementwise_function(name)
        assert function.__nb_signature__ == made.__nb_signature__, name
        assert f"the op table's entry '{name}'" in function.__doc__, function.__doc__
        parameters = function.__nb_signature__[0][0]
        assert "out: accel._accel.Tensor | None = \\0, *, path: str = \\1, stream:" in parameters, parameters
    with pytest.raises(AttributeError):
        getattr(ops, "no_such_op")
    with pytest.raises(accel.InvalidArgument, match="'matmul' is not an elementwise op"):
        accel._accel.elementwise_function("matmul")


def test_elementwise_ops_run_through_the_table(device: accel.Device) -> None:
    """accel.ops.run reaches every elementwise op of the table by name (the functions accel.ops
    makes from the table run as it does), against NumPy; a non-elementwise name and a wrong
    input count are refused with InvalidArgument."""
    names = accel.elementwise_op_names()
    assert {"add", "mul", "sigmoid", "relu"} <= set(names)
    for name in names:
        assert callable(getattr(ops, name)), name
    rng = np.random.default_rng()
    a, b = rng.uniform(-2, 2, 257).astype(np.float32), rng.uniform(-2, 2, 257).astype(np.float32)
    ta, tb = accel.from_numpy(a, device=device), accel.from_numpy(b, device=device)
    got = ops.run("mul", [ta, tb]).numpy()
    want = a.astype(np.float64) * b.astype(np.float64)
    assert float(np.sum((got - want) ** 2) / np.sum(want ** 2)) <= accel.nmse_threshold("mul", "f32")
    out = accel.empty((257,), "f32", device)
    assert ops.run("relu", [ta], out) is out
    assert np.array_equal(out.numpy(), np.maximum(a, 0))
    with pytest.raises(accel.InvalidArgument, match="not an elementwise op"):
        ops.run("matmul", [ta, tb])
    with pytest.raises(accel.InvalidArgument, match="takes 2"):
        ops.run("add", [ta])


def test_operators_run_the_ops(host: accel.Device) -> None:
    """a + b, a * b and a @ b are ops.add, ops.mul and ops.matmul; a - b, with no subtraction in the
    op table, is a TypeError naming the ops there are; shapes are checked by the ops. (The host
    only: the operators call the same binding on every device.)"""
    a = tensor(host, (4, 3), "f32")
    b = tensor(host, (4, 3), "f32")
    w = tensor(host, (3, 5), "f32")
    check("add", "f32", a + b, stored(a) + stored(b))
    check("mul", "f32", a * b, stored(a) * stored(b))
    check("matmul", "f32", a @ w, stored(a) @ stored(w))
    if "sub" not in accel.elementwise_op_names():
        with pytest.raises(TypeError, match="no elementwise op 'sub'.*add"):
            a - b
    with pytest.raises(accel.InvalidArgument, match=r"'b' has shape \[3, 4\] but 'a' has \[4, 3\]"):
        a + tensor(host, (3, 4), "f32")
    with pytest.raises(accel.InvalidArgument, match="inner dimensions"):
        a @ b
    with pytest.raises(TypeError):
        a + "1.0"  # neither a Tensor nor a number: Python's TypeError after NotImplemented


def test_errors_name_the_python_arguments(host: accel.Device) -> None:
    """A message names the operands as the Python call does: the output given as `out`, never the
    C++ name of an output the binding made ('c', 'y', 'dx', 'l', 'dz', 'p')."""
    x3, x4 = accel.zeros((3,), device=host), accel.zeros((4,), device=host)
    m = accel.zeros((2, 3), device=host)
    cases = [
        (lambda: ops.add(x3, x4), "'b' has shape [4] but 'a' has [3]"),
        (lambda: ops.mul(x3, accel.zeros((3,), "f64", host)), "'b' is f64 but 'a' is f32"),
        (lambda: ops.relu_backward(x3, x4), "'x' has shape [4] but 'dy' has [3]"),
        (lambda: ops.bce_with_logits(x3, x4), "'t' has shape [4] but 'z' has [3]"),
        (lambda: ops.bce_with_logits_backward(x3, x4), "'t' has shape [4] but 'z' has [3]"),
        (lambda: ops.run("mul", [x3, x4]), "'b' has shape [4] but 'a' has [3]"),
        (lambda: ops.add(x3, x3, out=x4), "'out' has [4]"),
        (lambda: ops.sigmoid(x3, out=x4), "'out' has [4]"),
        (lambda: ops.convert(x3, out=x4), "'out' has [4]"),
        (lambda: ops.matmul(m, accel.zeros((3, 2), device=host), out=x4), "'out' has shape [4]"),
        (lambda: ops.dense(m, m, out=x4), "'out' has shape [4]"),
        (lambda: ops.column_sum(m, out=x4), "'out' has shape [4]"),
        (lambda: ops.adam_step(x3, x3, x3, x4, 1), "'v' has shape [4] but 'param' has [3]"),
    ]
    for call, expected in cases:
        with pytest.raises(accel.InvalidArgument) as e:
            call()
        message = str(e.value)
        assert expected in message, message
        for cpp_name in ("'c'", "'y'", "'dx'", "'l'", "'dz'", "'p'", "output c ", "output y "):
            assert cpp_name not in message, message
