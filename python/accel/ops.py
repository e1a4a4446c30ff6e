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
(``a - b`` raises TypeError: the op table has no subtraction).
Errors: :class:`accel.InvalidArgument` (shapes, dtypes, devices, names; the
operands named as the Python parameters, the output as ``out``),
:class:`accel.Unsupported` (no kernel for the op, dtype and path on the
device), :class:`accel.OutOfMemory`, :class:`accel.DeviceError`.

Thread-safety: as the device's (any thread may call any op); two ops that
write one tensor from different threads must be ordered by the caller.
"""

from __future__ import annotations

import typing

from . import _accel
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
    run,
    sigmoid,
    sigmoid_backward,
)

if typing.TYPE_CHECKING:  # names for annotations only: not attributes of the module
    from typing import Any, Callable, List, Optional

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
    "run",
    "sigmoid",
    "sigmoid_backward",
]


def _elementwise(name: str) -> Callable[..., Any]:
    def op(*inputs: _accel.Tensor, out: Optional[_accel.Tensor] = None, path: str = "auto",
           stream: Optional[_accel.Stream] = None) -> _accel.Tensor:
        return run(name, list(inputs), out, path=path, stream=stream)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"Elementwise op {name!r} of the op table: run({name!r}, inputs, out, path=, stream=)."
    return op


# Every elementwise op of the op table without a function above (one added
# to the C++ table, or defined by a plugin) gets one here, through run().
_added: List[str] = []
for _name in _accel.elementwise_op_names():
    if _name not in globals():
        globals()[_name] = _elementwise(_name)
        _added.append(_name)
__all__ += _added
