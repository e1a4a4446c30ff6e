"""The public modules' names: each __all__ lists the module's API only, and nothing else public
(typing helpers, imported functions) leaks from a module."""

from __future__ import annotations

import __future__
import importlib
import types
import typing

import pytest

PUBLIC_MODULES = ["accel", "accel.ops", "accel.bench", "accel.mlp"]


@pytest.mark.parametrize("name", PUBLIC_MODULES)
def test_all_lists_the_api_only(name: str) -> None:
    module = importlib.import_module(name)
    listed = list(module.__all__)
    assert len(listed) == len(set(listed)), f"{name}.__all__ repeats a name"
    for attr in listed:
        assert not attr.startswith("_"), f"{name}.__all__ lists the private {attr}"
        value = getattr(module, attr)  # every listed name exists
        assert getattr(typing, attr, None) is not value, f"{name}.__all__ lists typing.{attr}"
        if isinstance(value, types.ModuleType):
            assert value.__name__.startswith("accel."), f"{name}.__all__ lists the module {value.__name__}"
        else:
            assert callable(value), f"{name}.{attr} is neither a module, a class nor a function"
            origin = getattr(value, "__module__", "") or ""
            assert origin.startswith("accel"), f"{name}.{attr} comes from {origin}, not accel"
    # Nothing public beyond __all__ (imported modules and `from __future__` aside): no typing names,
    # no helpers.
    leaked = [a for a in vars(module) if not a.startswith("_") and a not in listed
              and not isinstance(getattr(module, a), (types.ModuleType, __future__._Feature))]
    assert not leaked, f"{name} has public names outside __all__: {leaked}"
