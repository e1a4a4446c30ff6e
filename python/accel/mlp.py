"""The MLP example's problem, initial weights and batch order, as NumPy arrays.

The same functions the C++ example ``mlp_train`` (examples/mlp_train) uses,
so that a Python training loop over them (python/examples/mlp_train.py)
sees, for one seed, the same standardized split, initial weights and batch
order as mlp_train. Arrays are float32 (orders int64), row-major; weights in
torch.nn.Linear layout (weight [out, in], bias [out]). MlpModel is mlp_train's
own model and training loop (C++), for timing a Python loop against it.
"""

from __future__ import annotations

import os
import typing

import numpy as np
import numpy.typing as npt

from . import _accel
from ._accel import MlpModel

if typing.TYPE_CHECKING:  # names for annotations only: not attributes of the module
    from typing import Dict, Tuple

__all__ = ["MlpModel", "data_path", "problem", "init_params", "epoch_order"]


def data_path() -> str:
    """The breast-cancer CSV bundled with the package (accel/share/accel/breast_cancer.csv)."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "share", "accel", "breast_cancer.csv")


def problem(
    seed: int, path: str = ""
) -> Tuple[npt.NDArray[np.float32], npt.NDArray[np.float32], npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    """(train_x [n, 30], train_y [n], test_x, test_y) of the CSV at `path` (default: data_path()),
    split with `seed` (a fifth held out) and standardized with the training part's statistics.
    Raises accel.InvalidArgument for a missing or malformed file."""
    train_x, train_y, test_x, test_y = _accel.mlp_problem(path or data_path(), seed)
    return (np.asarray(train_x, dtype=np.float32), np.asarray(train_y, dtype=np.float32),
            np.asarray(test_x, dtype=np.float32), np.asarray(test_y, dtype=np.float32))


def init_params(inputs: int, hidden: int, seed: int) -> Dict[str, npt.NDArray[np.float32]]:
    """The initial weights for `seed`: {'w1': [hidden, inputs], 'b1': [hidden], 'w2': [1, hidden],
    'b2': [1]} (nn.Linear's default initialization, from the example's seeded stream).
    Raises accel.InvalidArgument for inputs or hidden 0."""
    return {str(k): np.asarray(v, dtype=np.float32) for k, v in _accel.mlp_init_params(inputs, hidden, seed).items()}


def epoch_order(n: int, seed: int, epoch: int) -> npt.NDArray[np.int64]:
    """The sample order of `epoch` (0-based) for `seed`: a permutation of range(n); batch k is
    order[k*B:(k+1)*B]."""
    return np.asarray(_accel.mlp_epoch_order(n, seed, epoch), dtype=np.int64)
