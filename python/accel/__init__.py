"""accel: one set of compute ops on several backends, chosen at run time.

Devices come from :func:`device` (a selector such as ``"host"``,
``"opencl:pocl"``, ``"cuda:0"``), :func:`default_device` (the environment
variable ``ACCEL_BACKEND``, else ``"auto"``) or :func:`devices`. Tensors are
rank 1 ``(n,)`` or rank 2 ``(rows, cols)``, row-major, of dtype ``"f32"``,
``"f64"``, ``"f16"`` or ``"bf16"``; they come from :func:`from_numpy`,
:func:`from_dlpack`, :func:`empty`, :func:`zeros`, :func:`ones`, :func:`full`
or an op of :mod:`accel.ops` (also ``a + b``, ``a * b``, ``a @ b``), and
leave through :meth:`Tensor.numpy` (a copy), ``numpy.asarray(t)`` or DLPack
(``numpy.from_dlpack(t)``, ``torch.from_dlpack(t)``: zero-copy on the host
backend and for CUDA device memory, a host copy elsewhere). A dtype is a name
(``"f32"``) or a NumPy dtype (``numpy.float32``). Errors are the
classes below :class:`Error`, carrying the C++ message. Streams and events
time device work (:meth:`Device.create_event`, :meth:`Device.elapsed_ms`);
:func:`capture` records ops once as a :class:`Graph` to replay (an optimizer's
:class:`StepCount` advances between replays);
:mod:`accel.bench` runs accel-bench.

The package bundles libaccel, the backend plugins built with it and
accel-bench (``accel/lib``, ``accel/bin``): nothing else needs to be on the
library path.
"""

from ._accel import (
    BackendUnavailable,
    Device,
    DeviceError,
    DeviceInfo,
    Error,
    Event,
    Graph,
    InvalidArgument,
    Kernel,
    MemoryInfo,
    OutOfMemory,
    Param,
    StepCount,
    Stream,
    Tensor,
    Unsupported,
    backends,
    capture,
    default_device,
    device,
    devices,
    elementwise_op_names,
    empty,
    from_dlpack,
    from_numpy,
    full,
    nmse_threshold,
    ones,
    op_names,
    plugin_folders,
    version,
    zeros,
)
from . import bench as bench
from . import ops as ops

for _cls in (Error, BackendUnavailable, InvalidArgument, Unsupported, OutOfMemory, DeviceError):
    _cls.__module__ = "accel"  # tracebacks name them accel.InvalidArgument, ...
del _cls

__version__ = "0.2.0"

__all__ = [
    "BackendUnavailable",
    "Device",
    "DeviceError",
    "DeviceInfo",
    "Error",
    "Event",
    "Graph",
    "InvalidArgument",
    "Kernel",
    "MemoryInfo",
    "OutOfMemory",
    "Param",
    "StepCount",
    "Stream",
    "Tensor",
    "Unsupported",
    "backends",
    "bench",
    "capture",
    "default_device",
    "device",
    "devices",
    "elementwise_op_names",
    "empty",
    "from_dlpack",
    "from_numpy",
    "full",
    "nmse_threshold",
    "ones",
    "op_names",
    "ops",
    "plugin_folders",
    "version",
    "zeros",
]
