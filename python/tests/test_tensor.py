"""Tensors: NumPy and DLPack round trips, zero-copy on the host backend,
reference counts, and bad input raising the right exception class."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import accel
import accel.ops as ops

try:
    import ml_dtypes
except ImportError:  # bf16 arrays then come back as float32
    ml_dtypes = None

NUMPY_DTYPES = {"f32": np.float32, "f64": np.float64, "f16": np.float16}
RNG = np.random.default_rng()


def numpy_dtype(dtype: str) -> object:
    if dtype == "bf16":
        return ml_dtypes.bfloat16 if ml_dtypes is not None else np.float32
    return NUMPY_DTYPES[dtype]


@pytest.mark.parametrize("dtype", ["f32", "f64", "f16", "bf16"])
@pytest.mark.parametrize("shape", [(7,), (5, 3), (1, 1)])
def test_numpy_round_trip(device: accel.Device, shape: tuple, dtype: str) -> None:
    a = RNG.standard_normal(shape).astype(numpy_dtype(dtype))
    t = accel.from_numpy(a, device=device)
    assert t.shape == shape and t.dtype == dtype and t.device is device
    b = t.numpy()
    assert b.dtype == a.dtype and b.shape == shape
    assert np.array_equal(b, a)
    assert b.ctypes.data != a.ctypes.data  # numpy() is a copy


def test_from_numpy_converts_and_makes_contiguous(device: accel.Device) -> None:
    a = RNG.standard_normal((6, 4))
    t = accel.from_numpy(a.T, device=device, dtype="f32")  # a transposed (strided) view, float64
    assert t.shape == (4, 6) and t.dtype == "f32"
    assert np.array_equal(t.numpy(), a.T.astype(np.float32))
    assert np.array_equal(accel.from_numpy([[1.0, 2.0]], device=device).numpy(), [[1.0, 2.0]])


def test_dlpack_round_trip(device: accel.Device) -> None:
    a = RNG.standard_normal((8, 3)).astype(np.float32)
    t = accel.from_dlpack(a, device=device)  # NumPy -> accel (shared on host, a copy elsewhere)
    assert t.device is device and t.shape == (8, 3)
    assert t.__dlpack_device__() in ((1, 0), (2, device.info.index))
    b = np.from_dlpack(t)  # accel -> NumPy
    assert np.array_equal(b, a)
    back = accel.from_dlpack(b, device=device)
    assert np.array_equal(back.numpy(), a)
    assert accel.from_dlpack(t) is t  # an accel tensor is itself


def test_dlpack_of_non_host_backends_is_a_copy(device: accel.Device) -> None:
    t = accel.from_numpy(np.arange(4, dtype=np.float32), device=device)
    if device.backend == "host":
        pytest.skip("the host backend shares its memory (test_zero_copy_on_host)")
    view = np.from_dlpack(t)
    view[0] = 42.0  # a copy: the tensor keeps its value
    assert t.numpy()[0] == 0.0
    with pytest.raises(BufferError):
        t.__dlpack__(copy=False)


def test_torch_dlpack_round_trip(device: accel.Device) -> None:
    torch = pytest.importorskip("torch", reason="PyTorch is not installed: the torch.from_dlpack round trip is skipped")
    t = accel.from_numpy(np.arange(6, dtype=np.float32).reshape(2, 3), device=device)
    tt = torch.from_dlpack(t)
    assert tt.tolist() == [[0, 1, 2], [3, 4, 5]]
    back = accel.from_dlpack(tt.cpu() * 2, device=device)
    assert np.array_equal(back.numpy(), np.arange(6, dtype=np.float32).reshape(2, 3) * 2)


def test_zero_copy_on_host(host: accel.Device) -> None:
    t = accel.from_numpy(np.zeros(5, dtype=np.float32), device=host)
    view = np.from_dlpack(t)
    assert view.ctypes.data == t.data_ptr  # one data pointer
    view[1] = 7.0  # a write through NumPy is seen by accel
    assert t.numpy()[1] == 7.0
    ones = accel.from_numpy(np.ones(5, dtype=np.float32), device=host)
    ops.add(t, ones, out=t)  # a write through accel is seen by NumPy
    assert view[1] == 8.0 and view[0] == 1.0
    # And back: DLPack of that memory is the same tensor, not a copy.
    assert accel.from_dlpack(view) is t
    assert accel.from_dlpack(view, copy=True) is not t


class _Owned(np.ndarray):
    """An ndarray that a weak reference can follow (plain ndarrays take none)."""


@pytest.mark.parametrize("dtype", ["f32", "f64", "f16"])
def test_from_dlpack_shares_writable_host_memory(host: accel.Device, dtype: str) -> None:
    a = RNG.standard_normal((6, 5)).astype(NUMPY_DTYPES[dtype]).view(_Owned)
    expect = np.maximum(a, 0)
    alive = weakref.ref(a)
    before = host.memory_info().in_use
    t = accel.from_dlpack(a, device=host, copy=False)  # no copy, or BufferError
    assert t.data_ptr == a.ctypes.data and t.shape == (6, 5) and t.dtype == dtype
    assert host.memory_info().in_use == before  # wrapped, not allocated
    ops.relu(t, out=t)  # a write through accel is seen by NumPy
    assert np.array_equal(a, expect)
    a[2, 3] = -7.0  # and a write through NumPy by accel
    assert t.numpy()[2, 3] == -7.0
    assert accel.from_dlpack(a, device=host) is t  # that memory again: the same tensor
    del a
    gc.collect()
    assert alive() is not None  # the tensor holds the array
    assert np.array_equal(np.from_dlpack(t)[0], expect[0])
    del t
    gc.collect()
    assert alive() is None  # released with the tensor


def test_from_dlpack_copies_what_it_cannot_share(host: accel.Device) -> None:
    a = RNG.standard_normal((4, 6)).astype(np.float32)
    ro = a.copy()
    ro.setflags(write=False)
    strided = a[:, ::2]
    for src in (ro, strided):
        t = accel.from_dlpack(src, device=host)
        assert t.data_ptr != src.ctypes.data and np.array_equal(t.numpy(), src)
        with pytest.raises(BufferError, match="read-only or not contiguous"):
            accel.from_dlpack(src, device=host, copy=False)
    copied = accel.from_dlpack(a, device=host, copy=True)
    assert copied.data_ptr != a.ctypes.data and np.array_equal(copied.numpy(), a)


def test_from_dlpack_onto_other_backends_copies(device: accel.Device) -> None:
    if device.backend == "host":
        pytest.skip("the host backend shares host memory (test_from_dlpack_shares_writable_host_memory)")
    a = RNG.standard_normal(9).astype(np.float32)
    t = accel.from_dlpack(a, device=device)
    a[0] = 1e6  # a copy: the tensor keeps the old value
    assert t.numpy()[0] != 1e6
    with pytest.raises(BufferError, match="cannot address host memory in place"):
        accel.from_dlpack(a, device=device, copy=False)


def test_tensors_over_overlapping_memory_are_aliases(host: accel.Device) -> None:
    mem = RNG.standard_normal(12).astype(np.float32)
    head, shifted, tail = (accel.from_dlpack(mem[s:s + 6], device=host) for s in (0, 3, 6))
    with pytest.raises(accel.InvalidArgument, match="overlaps input"):
        ops.add(head, head, out=shifted)
    expect = mem[0:6] * 2
    ops.add(head, head, out=tail)  # disjoint
    assert np.array_equal(mem[6:12], expect)
    ops.add(head, head, out=head)  # in place: the same memory, allowed
    assert np.array_equal(mem[0:6], expect)


def test_torch_cpu_tensors_are_shared_on_host(host: accel.Device) -> None:
    torch = pytest.importorskip("torch", reason="PyTorch is not installed: the torch CPU import is skipped")
    tt = torch.randn(3, 4)
    t = accel.from_dlpack(tt, device=host, copy=False)
    assert t.data_ptr == tt.data_ptr()
    ops.sigmoid(t, out=t)
    assert torch.equal(tt, torch.from_dlpack(t))


def test_dlpack_export_outlives_the_tensor_object(host: accel.Device) -> None:
    t = accel.from_numpy(np.arange(1000, dtype=np.float32), device=host)
    ref = weakref.ref(t)
    view = np.from_dlpack(t)
    before = host.memory_info().in_use
    del t
    gc.collect()
    assert ref() is not None  # the export holds the tensor
    assert host.memory_info().in_use == before  # its storage is not freed
    assert np.array_equal(view, np.arange(1000, dtype=np.float32))
    del view
    gc.collect()
    assert ref() is None  # released with the last export
    assert host.memory_info().in_use == before - 4000


def test_capsule_outlives_the_tensor_object(device: accel.Device) -> None:
    t = accel.from_numpy(np.arange(3, dtype=np.float32), device=device)
    capsule = t.__dlpack__()
    del t
    gc.collect()
    assert np.array_equal(np.from_dlpack(_Capsule(capsule)), [0, 1, 2])


class _Capsule:
    """A bare capsule dressed as a DLPack exporter (NumPy takes objects, not capsules)."""

    def __init__(self, capsule: object) -> None:
        self.capsule = capsule

    def __dlpack__(self, **kwargs: object) -> object:
        return self.capsule

    def __dlpack_device__(self) -> tuple:
        return (1, 0)


def test_device_outlives_its_tensors() -> None:
    dev = accel.device("host")
    t = accel.from_numpy(np.arange(4, dtype=np.float32), device=dev)
    s, e = dev.create_stream(), dev.create_event()
    ref = weakref.ref(dev)
    del dev
    gc.collect()
    assert ref() is not None  # held by the tensor, stream and event
    assert np.array_equal(ops.add(t, t, stream=s).numpy(), [0, 2, 4, 6])
    e.record(s)
    e.synchronize()
    del t, s, e
    gc.collect()
    # The registry may keep the device open; the Python object goes when nothing else holds it.
    assert ref() is None or ref() is accel.device("host")


def test_bad_input_raises_the_right_class(device: accel.Device) -> None:
    with pytest.raises(accel.InvalidArgument, match="rank 1 \\[n\\] or rank 2"):
        accel.from_numpy(np.zeros((2, 2, 2), dtype=np.float32), device=device)
    with pytest.raises(accel.InvalidArgument, match="int64"):
        accel.from_numpy(np.zeros(3, dtype=np.int64), device=device)
    a = accel.zeros((3,), device=device)
    b = accel.zeros((4,), device=device)
    with pytest.raises(accel.InvalidArgument, match=r"\[3\].*\[4\]|\[4\].*\[3\]"):
        ops.add(a, b)
    with pytest.raises(accel.InvalidArgument):
        ops.matmul(accel.zeros((2, 3), device=device), accel.zeros((4, 5), device=device))
    with pytest.raises(accel.InvalidArgument, match="path"):
        ops.add(a, a, path="fastest")
    with pytest.raises(accel.InvalidArgument, match="dtype|bogus"):
        accel.zeros((3,), "bogus", device)
    with pytest.raises(accel.InvalidArgument):
        ops.adam_step(a, a, a, a, 0)  # step 0
    # InvalidArgument is also a ValueError, and every class an accel.Error.
    assert issubclass(accel.InvalidArgument, ValueError) and issubclass(accel.InvalidArgument, accel.Error)
    assert issubclass(accel.OutOfMemory, MemoryError) and issubclass(accel.Unsupported, NotImplementedError)
    assert issubclass(accel.DeviceError, accel.Error) and issubclass(accel.BackendUnavailable, accel.Error)


def test_tensor_of_another_device(device: accel.Device, host: accel.Device) -> None:
    if device is host:
        pytest.skip("needs a device other than the host")
    with pytest.raises(accel.InvalidArgument, match="device"):
        ops.add(accel.zeros((3,), device=device), accel.zeros((3,), device=host))


def test_selectors_raise_the_right_class() -> None:
    with pytest.raises(accel.InvalidArgument, match="selector"):
        accel.device("no such:thing:here")
    with pytest.raises(accel.BackendUnavailable):
        accel.device("host:7")


def test_out_of_memory(device: accel.Device) -> None:
    device.set_memory_limit(device.memory_info().in_use + 1024)
    try:
        with pytest.raises(accel.OutOfMemory, match="bytes"):
            accel.empty((1024, 1024), device=device)
    finally:
        device.set_memory_limit(0)


def test_unsupported_vendor_path(device: accel.Device) -> None:
    if device.supports("matmul", "f32", "vendor"):
        pytest.skip(f"{device.selector} has a vendor path for matmul")
    a = accel.zeros((4, 4), device=device)
    with pytest.raises(accel.Unsupported):
        ops.matmul(a, a, path="vendor")


def test_repr_and_properties(device: accel.Device) -> None:
    t = accel.zeros((2, 3), "f64", device)
    assert t.ndim == 2 and t.size == 6 and t.nbytes == 48 and len(t) == 2
    assert device.selector in repr(t) and "f64" in repr(t)
    assert device.name in repr(device)


def test_to_device_and_dtype(device: accel.Device, host: accel.Device) -> None:
    a = RNG.standard_normal((3, 4)).astype(np.float32)
    t = accel.from_numpy(a, device=device)
    on_host = t.to(host)
    assert on_host.device is host and np.array_equal(on_host.numpy(), a)
    back = on_host.to(device)
    assert back.device is device and np.array_equal(back.numpy(), a)
    if device.supports("convert", "f64", "native"):
        wide = t.to("f64")
        assert wide.dtype == "f64" and np.array_equal(wide.numpy(), a.astype(np.float64))


def test_bfloat16_arrays(device: accel.Device) -> None:
    if ml_dtypes is None:
        pytest.skip("ml_dtypes is not installed: bf16 tensors come back as float32 (see README)")
    a = np.array([1.5, -2.0, 3.25], dtype=ml_dtypes.bfloat16)
    for t in (accel.from_numpy(a, device=device), accel.from_dlpack(a, device=device)):
        assert t.dtype == "bf16" and t.numpy().dtype == ml_dtypes.bfloat16
        assert np.array_equal(t.numpy().astype(np.float32), a.astype(np.float32))


def test_asarray_gives_the_values(device: accel.Device) -> None:
    """numpy.asarray / numpy.array of a tensor are its values (the __array__ protocol, NumPy 1 and 2
    signatures): a view of the tensor's memory on the host backend, a copy elsewhere."""
    a = RNG.standard_normal((3, 4)).astype(np.float32)
    t = accel.from_numpy(a, device=device)
    view = np.asarray(t)
    assert view.dtype == np.float32 and view.shape == (3, 4) and np.array_equal(view, a)
    copied = np.array(t)  # copy=True: never shared
    assert copied.ctypes.data != t.data_ptr and np.array_equal(copied, a)
    assert np.asarray(t, dtype=np.float64).dtype == np.float64
    assert np.array_equal(t.__array__(np.float64), a.astype(np.float64))  # NumPy 1's call: dtype only
    if device.backend == "host":
        assert view.ctypes.data == t.data_ptr  # no copy
        view[1, 2] = 42.0  # a write through the view is seen by accel
        assert t.numpy()[1, 2] == 42.0
        assert np.asarray(t, copy=False).ctypes.data == t.data_ptr
    else:
        with pytest.raises(ValueError, match="copy=False"):
            t.__array__(copy=False)
    with pytest.raises(ValueError, match="copy=False"):
        t.__array__(np.float64, copy=False)  # a conversion is a copy


def test_asarray_of_bf16_and_empty(host: accel.Device) -> None:
    if ml_dtypes is None:
        pytest.skip("ml_dtypes is not installed: bf16 arrays come back as float32")
    b = accel.from_numpy(np.array([1.5, -2.0], dtype=ml_dtypes.bfloat16), device=host)
    view = np.asarray(b)
    assert view.dtype == ml_dtypes.bfloat16 and view.ctypes.data == b.data_ptr
    assert np.array_equal(view.astype(np.float32), [1.5, -2.0])
    assert np.asarray(accel.zeros((0,), device=host)).shape == (0,)


@pytest.mark.parametrize("given, name", [(np.float32, "f32"), (np.dtype("float64"), "f64"), (np.float16, "f16"),
                                         ("bfloat16", "bf16"), ("f32", "f32")])
def test_numpy_dtypes_are_accepted(host: accel.Device, given: object, name: str) -> None:
    """Wherever accel takes a dtype name it takes a NumPy dtype too."""
    assert accel.empty((2,), given, host).dtype == name
    assert accel.zeros((2,), dtype=given, device=host).dtype == name
    assert accel.from_numpy(np.ones(2), device=host, dtype=given).dtype == name
    assert accel.ones((2,), "f64", host).to(given).dtype == name
    assert ops.convert(accel.ones((2,), "f64", host), dtype=given).dtype == name
    assert host.supports("add", given) and accel.nmse_threshold("add", given) > 0


def test_bfloat16_dtype_of_ml_dtypes(host: accel.Device) -> None:
    if ml_dtypes is None:
        pytest.skip("ml_dtypes is not installed")
    assert accel.zeros((2,), ml_dtypes.bfloat16, host).dtype == "bf16"


@pytest.mark.parametrize("given", [np.int8, np.dtype("int32"), "int8", object()])
def test_unsupported_dtype_lists_the_valid_ones(host: accel.Device, given: object) -> None:
    with pytest.raises(accel.InvalidArgument, match="f32.*f64.*f16.*bf16"):
        accel.zeros((2,), given, host)
    with pytest.raises(accel.InvalidArgument, match="f32.*f64.*f16.*bf16"):
        accel.ones((2,), device=host).to(given)


@pytest.mark.parametrize("dtype", ["f32", "f64", "f16", "bf16"])
def test_ones_and_full(device: accel.Device, dtype: str) -> None:
    ones = accel.ones((2, 3), dtype, device)
    assert ones.shape == (2, 3) and ones.dtype == dtype and ones.device is device
    assert np.array_equal(np.asarray(ones.numpy(), np.float64), np.ones((2, 3)))
    full = accel.full((5,), -2.5, dtype, device)  # exact in every dtype
    assert full.dtype == dtype and np.array_equal(np.asarray(full.numpy(), np.float64), np.full(5, -2.5))
    assert np.all(np.isnan(np.asarray(accel.full((2,), float("nan"), dtype, device).numpy(), np.float64)))
    assert np.array_equal(np.asarray(accel.zeros((4,), dtype, device).numpy(), np.float64), np.zeros(4))
    assert accel.full((0,), 1.0, dtype, device).shape == (0,)
