"""accel's ops: the same on every backend (C++ ``accel/ops.hpp``).

Every op takes its input tensors (one device, one dtype), an optional output
tensor ``out`` (else one is made on the inputs' device and returned), and the
keyword options ``path`` (``"auto"``, ``"native"``: accel's own kernel,
``"vendor"``: the platform's library — CPU BLAS, CLBlast, cuBLAS, Kokkos
Kernels; matmul and dense only) and ``stream`` (an :class:`accel.Stream` of
the tensors' device; default: its default stream). Ops are enqueued and may
return before the device ran them: :meth:`accel.Tensor.numpy`,
:func:`bce_with_logits_loss` and ``synchronize()`` wait. The GIL is released
while an op runs, so other Python threads go on. Shapes are row-major.
Errors: :class:`accel.InvalidArgument` (shapes, dtypes, devices, names),
:class:`accel.Unsupported` (no kernel for the op, dtype and path on the
device), :class:`accel.OutOfMemory`, :class:`accel.DeviceError`.

Thread-safety: as the device's (any thread may call any op); two ops that
write one tensor from different threads must be ordered by the caller.
"""

from ._accel import (
    adam_step,
    add,
    bce_with_logits,
    bce_with_logits_backward,
    bce_with_logits_loss,
    column_sum,
    convert,
    dense,
    dense_backward,
    matmul,
    mul,
    relu,
    relu_backward,
    sigmoid,
    sigmoid_backward,
)

__all__ = [
    "adam_step",
    "add",
    "bce_with_logits",
    "bce_with_logits_backward",
    "bce_with_logits_loss",
    "column_sum",
    "convert",
    "dense",
    "dense_backward",
    "matmul",
    "mul",
    "relu",
    "relu_backward",
    "sigmoid",
    "sigmoid_backward",
]
