"""accel's ops: the same on every backend (C++ ``accel/ops.hpp``).

Every op takes its input tensors (one device, one dtype), an optional output
tensor ``out`` (else one is made on the inputs' device and returned), and the
keyword options ``path`` (``"auto"``, ``"native"``: accel's own kernel,
``"vendor"``: the platform's library — CPU BLAS, CLBlast, cuBLAS, Kokkos
Kernels; matmul and dense only) and ``stream`` (an :class:`accel.Stream` of
the tensors' device; default: its default stream). Ops are enqueued and may
return before the device ran them: :meth:`accel.Tensor.numpy`,
:func:`bce_with_logits_loss` and ``synchronize()`` wait. The GIL is released
while an op runs, so other Python threads go on, except by an op of under
32768 elements (multiply-adds for matmul, dense and dense_backward), which
takes about as long as releasing and re-acquiring the GIL (NumPy keeps it
under 500 elements alike); calls that wait for the device always release it.
Shapes are row-major. The operators of :class:`accel.Tensor` run ops too:
``a + b`` is :func:`add`, ``a * b`` :func:`mul`, ``a @ b`` :func:`matmul`
(a transposed view ``a.T`` through its ``trans_a`` / ``trans_b``, no copy);
a Python number as an operand (``a + 1.0``, ``2 * a``) is a filled tensor of
the other's shape, ``-a`` is ``mul`` by -1, ``a += b`` and ``a *= b`` write
``a``'s own storage (``a - b`` and ``a / b`` raise TypeError: the op table
has no subtraction or division).
Errors: :class:`accel.InvalidArgument` (shapes, dtypes, devices, names; the
operands named as the Python parameters, the output as ``out``),
:class:`accel.Unsupported` (no kernel for the op, dtype and path on the
device), :class:`accel.OutOfMemory`, :class:`accel.DeviceError`.

The functions of the op table's elementwise ops (:func:`add`, :func:`mul`,
:func:`sigmoid`, :func:`relu`, ...; :func:`accel.elementwise_op_names`) are
made from their table entries: ``NAME(inputs..., out=None, *, path, stream)``,
the inputs named as in the table; an elementwise op defined later (by a
backend plugin loaded since) is found too. The other ops' calls have forms of
their own.

Thread-safety: as the device's (any thread may call any op); two ops that
write one tensor from different threads must be ordered by the caller.
"""

from __future__ import annotations

import typing

from . import _accel
from ._accel import (
    adam_step,
    bce_with_logits_backward,
    bce_with_logits_loss,
    column_sum,
    convert,
    dense,
    dense_backward,
    dot,
    matmul,
    run,
    scale,
    triad,
)

if typing.TYPE_CHECKING:  # names for annotations only: not attributes of the module
    from typing import List, Optional, Protocol

    class _ElementwiseOp(Protocol):
        """An elementwise op's function: its input tensors (by position, or by their op-table names), out, path
        and stream; returns the output."""

        def __call__(self, *inputs: _accel.Tensor, out: Optional[_accel.Tensor] = None, path: str = "auto",
                     stream: Optional[_accel.Stream] = None, **named_inputs: _accel.Tensor) -> _accel.Tensor: ...


__all__ = [
    "adam_step",
    "bce_with_logits_backward",
    "bce_with_logits_loss",
    "column_sum",
    "convert",
    "dense",
    "dense_backward",
    "dot",
    "matmul",
    "run",
    "scale",
    "triad",
]

# The elementwise ops of the op table, each a function made from its entry.
_table_ops: List[str] = list(_accel.elementwise_op_names())
for _name in _table_ops:
    globals()[_name] = _accel.elementwise_function(_name)
__all__ += _table_ops
__all__.sort()


def __getattr__(name: str) -> _ElementwiseOp:
    """An elementwise op defined after this module was imported (by a backend plugin loaded since): its
    function, made from its table entry. Raises AttributeError for any other name."""
    if name in _accel.elementwise_op_names():
        return typing.cast("_ElementwiseOp", _accel.elementwise_function(name))
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
