"""What NumPy and PyTorch users try first, against NumPy on fresh random data: scalar operands and unary
minus, in-place += and *= into the tensor's own storage, the transposed view (Tensor.T) that matmul and @
take without a copy, float() of one element, from_numpy of a Python list; and what accel has not
(indexing, broadcasting, reductions, division, reshape, other ops on a view) raising TypeError that names
what to use instead."""

from __future__ import annotations

from typing import Callable, Tuple

import numpy as np
import numpy.typing as npt
import pytest

import accel
import accel.ops as ops

RNG = np.random.default_rng()  # fresh data every run
F32 = npt.NDArray[np.float32]


def random(dev: accel.Device, shape: Tuple[int, ...]) -> Tuple[accel.Tensor, F32]:
    """A f32 tensor of uniform values in [-2, 2) and its NumPy array."""
    values = RNG.uniform(-2.0, 2.0, size=shape).astype(np.float32)
    return accel.from_numpy(values, device=dev), values


def nmse(got: npt.NDArray[np.float64], ref: npt.NDArray[np.float64]) -> float:
    """sum((got - ref)^2) / sum(ref^2), the conformance suite's criterion."""
    return float(np.sum((got - ref) ** 2) / np.sum(ref * ref))


def test_scalar_operands_and_negation(device: accel.Device) -> None:
    """a + s, s + a, a * s, s * a (a float or an int) and -a equal NumPy's float32 results bit for bit: the
    scalar is rounded to the tensor's dtype (as NumPy rounds a Python scalar) and add, mul and negation are
    exact."""
    a, na = random(device, (5, 7))
    s = float(RNG.uniform(-3.0, 3.0))
    k = int(RNG.integers(-5, 6))
    cases = {
        "a + s": (a + s, na + np.float32(s)),
        "s + a": (s + a, np.float32(s) + na),
        "a * s": (a * s, na * np.float32(s)),
        "s * a": (s * a, np.float32(s) * na),
        "k * a": (k * a, np.float32(k) * na),
        "a * k": (a * k, na * np.float32(k)),
        "-a": (-a, -na),
    }
    for what, (got, want) in cases.items():
        assert got.dtype == "f32" and got.shape == a.shape, what
        assert np.array_equal(got.numpy(), want), f"{what} on {device.selector} (s = {s}, k = {k})"
    assert np.array_equal(a.numpy(), na), "an operator changed its operand"


def test_scalar_keeps_f64(host: accel.Device) -> None:
    """A scalar with an f64 tensor is an f64 operand: no rounding through f32."""
    values = RNG.uniform(-2.0, 2.0, size=(3, 4))
    a = accel.from_numpy(values, device=host)
    s = float(RNG.uniform(-3.0, 3.0))
    assert (a + s).dtype == "f64"
    assert np.array_equal((a + s).numpy(), values + s) and np.array_equal((s * a).numpy(), s * values)


def test_in_place_writes_the_tensor_itself(device: accel.Device) -> None:
    """a += b and a *= b (tensor or number) write a's own storage, as NumPy: another name of a sees it."""
    a, na = random(device, (4, 6))
    b, nb = random(device, (4, 6))
    s = float(RNG.uniform(-3.0, 3.0))
    storage = a.data_ptr
    alias = a
    alias += b
    assert alias is a and a.data_ptr == storage
    want = na + nb
    assert np.array_equal(a.numpy(), want)
    alias *= s
    want = want * np.float32(s)
    assert np.array_equal(a.numpy(), want)
    alias *= b
    want = want * nb
    alias += s
    want = want + np.float32(s)
    assert alias is a and np.array_equal(a.numpy(), want)
    assert np.array_equal(b.numpy(), nb), "the right operand changed"


def test_transposed_view_in_matmul(device: accel.Device) -> None:
    """a.T is a view (the same storage, the swapped shape) that @ and ops.matmul take through their
    transpose flags: every combination against NumPy's float64 product of the stored values."""
    k, m, n = 9, 6, 5
    a, na = random(device, (k, m))  # a.T is [m, k]
    b, nb = random(device, (n, k))  # b.T is [k, n]
    c, nc = random(device, (k, n))
    at, bt = a.T, b.transpose()
    assert at.shape == (m, k) and at.data_ptr == a.data_ptr and at.T is a
    assert np.array_equal(np.asarray(at), na.T) and np.array_equal(at.numpy(), na.T)
    limit = accel.nmse_threshold("matmul", "f32")
    a64, b64, c64 = (x.astype(np.float64) for x in (na, nb, nc))
    products = {
        "a.T @ c": (at @ c, a64.T @ c64),
        "a.T @ b.T": (at @ bt, a64.T @ b64.T),
        "b @ a.T.T": (b @ at.T, b64 @ a64),
        "matmul(a.T, b, trans_b=True)": (ops.matmul(at, b, trans_b=True), a64.T @ b64.T),
        "matmul(a.T, c.T.T)": (ops.matmul(at, c.T.T), a64.T @ c64),
    }
    x, nx = random(device, (m, n))  # trans_a on a view transposes it back: matmul(a.T, x, trans_a=True) = a.T.T @ x
    products["matmul(a.T, x, trans_a=True)"] = (ops.matmul(at, x, trans_a=True), a64 @ nx.astype(np.float64))
    for what, (got, want) in products.items():
        assert got.shape == want.shape, what
        value = nmse(got.numpy().astype(np.float64), want)
        assert value <= limit, f"{what} on {device.selector}: NMSE {value:.3g} above {limit:.3g}"
    copy = at.contiguous()
    assert copy.shape == (m, k) and copy.data_ptr != a.data_ptr and np.array_equal(copy.numpy(), na.T)
    assert np.array_equal((copy + copy).numpy(), na.T + na.T), "contiguous() is a row-major tensor"
    row, nrow = random(device, (4,))
    assert row.T is row and a.contiguous() is a


def test_other_ops_reject_a_view(host: accel.Device) -> None:
    """Every op but matmul, and the methods that read the storage, raise TypeError for a view naming the
    row-major copy to make (view.contiguous()) and the calls that take views."""
    a, _ = random(host, (3, 3))  # square: a view read as its base would not fail on the shape
    w, _ = random(host, (3, 3))
    calls: dict[str, Callable[[], object]] = {
        "relu": lambda: ops.relu(a.T),
        "add": lambda: ops.add(a, a.T),
        "a + a.T": lambda: a + a.T,
        "a.T * 2": lambda: a.T * 2.0,
        "a += a.T": lambda: a.__iadd__(a.T),
        "dense": lambda: ops.dense(a, w.T),
        "column_sum": lambda: ops.column_sum(a.T),
        "matmul out": lambda: ops.matmul(a, w, out=a.T),
        "to": lambda: a.T.to("f64"),
        "copy_from": lambda: a.T.copy_from(np.zeros((3, 3), np.float32)),
        "__dlpack__": lambda: a.T.__dlpack__(),
    }
    for what, call in calls.items():
        with pytest.raises(TypeError, match=r"transposed view.*matmul.*contiguous\(\)"):
            call()
        assert what


def test_float_of_one_element(device: accel.Device) -> None:
    """float(t) of a (1,) or (1, 1) tensor is its element; any other count is a TypeError naming the shape
    and how to pick an element."""
    v = float(RNG.uniform(-100.0, 100.0))
    assert float(accel.from_numpy(np.array([v], np.float32), device=device)) == float(np.float32(v))
    assert float(accel.from_numpy(np.array([[v]]), device=device)) == v  # f64: exact
    assert float(accel.from_numpy(np.array([[v]], np.float32), device=device).T) == float(np.float32(v))
    t, _ = random(device, (2, 3))
    with pytest.raises(TypeError, match=r"shape \[2, 3\] \(6 elements\).*numpy\.asarray\(t\)\[0, 1\]"):
        float(t)


def test_what_accel_has_not_names_the_alternative(host: accel.Device) -> None:
    """Indexing, item assignment, reductions, division, reshape and broadcasting raise TypeError naming
    what to use instead; the alternative for a bias row, ops.dense, gives NumPy's broadcast sum."""
    a, na = random(host, (2, 3))
    b, _ = random(host, (2, 3))
    row, nrow = random(host, (3,))
    expected: dict[str, Tuple[Callable[[], object], str]] = {
        "a[0]": (lambda: a[0], r"numpy\.asarray\(t\)\[0\]"),
        "a[0] = 1": (lambda: a.__setitem__(0, 1.0), r"copy_from"),
        "a.sum()": (lambda: a.sum(), r"accel\.ops\.column_sum"),
        "a.mean()": (lambda: a.mean(axis=0), r"accel\.ops\.column_sum"),
        "a / b": (lambda: a / b, r"numpy\.asarray\(a\) / numpy\.asarray\(b\)"),
        "a / 2": (lambda: a / 2.0, r"a \* \(1 / s\)"),
        "2 / a": (lambda: 2.0 / a, r"numpy\.asarray"),
        "a.reshape": (lambda: a.reshape(3, 2), r"accel\.from_numpy\(numpy\.asarray\(t\)\.reshape"),
        "a - 1": (lambda: a - 1.0, r"a \+ \(-s\)"),
        "1 - a": (lambda: 1 - a, r"-a \+ s"),
        "a + row": (lambda: a + row, r"\[2, 3\] and \[3\].*accel\.ops\.dense\(x, w, bias\)"),
        "row * a": (lambda: row * a, r"does not broadcast.*numpy\.asarray\(a\) \* numpy\.asarray\(b\)"),
        "a += row": (lambda: a.__iadd__(row), r"accel\.ops\.dense\(x, w, bias\)"),
    }
    if "sub" not in accel.elementwise_op_names():  # accel's table has no subtraction (a plugin may add one)
        expected["a - b"] = (lambda: a - b, r"a \+ \(-b\)")
    for what, (call, alternative) in expected.items():
        with pytest.raises(TypeError, match=alternative):
            call()
        assert what
    # Shapes NumPy would not broadcast stay accel's shape error.
    with pytest.raises(accel.InvalidArgument, match="has shape"):
        a + random(host, (3, 2))[0]
    # The named alternatives: a + (-b) is NumPy's a - b bit for bit; x @ w.T + bias with w the identity is
    # a + row, NumPy's broadcast.
    _, nb = random(host, (2, 3))
    assert np.array_equal((a + -accel.from_numpy(nb, device=host)).numpy(), na - nb)
    eye = accel.from_numpy(np.eye(3, dtype=np.float32), device=host)
    assert np.array_equal(ops.dense(a, eye, row).numpy(), na + nrow)


def test_from_numpy_of_a_list_is_f32(host: accel.Device) -> None:
    """A Python list or tuple (no dtype) gives f32, accel's default (as torch.tensor); NumPy arrays keep
    their dtype; dtype= still chooses."""
    values = RNG.uniform(-10.0, 10.0, size=(3, 4))
    t = accel.from_numpy(values.tolist(), device=host)
    assert t.dtype == "f32" and t.shape == (3, 4)
    assert np.array_equal(t.numpy(), values.astype(np.float32))
    assert accel.from_numpy(tuple(values[0]), device=host).dtype == "f32"
    ints = accel.from_numpy([1, 2, 3], device=host)
    assert ints.dtype == "f32" and np.array_equal(ints.numpy(), np.array([1, 2, 3], np.float32))
    assert accel.from_numpy(values, device=host).dtype == "f64"
    exact = accel.from_numpy(values.tolist(), device=host, dtype="f64")
    assert exact.dtype == "f64" and np.array_equal(exact.numpy(), values)
