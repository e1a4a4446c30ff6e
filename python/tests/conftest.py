"""pytest set-up: the devices every test runs on, one parameter each.

Devices: one per backend whose plugin accel finds (accel.backends(): host, kokkos, cuda,
hip, vulkan, ... as built), and for OpenCL one per implementation (PoCL, Intel's runtime,
...), named by its devices' stable selectors (opencl:pocl, opencl:intel); simulators
such as Oclgrind, which the OpenCL backend opens only by name, are left out. A backend
that cannot be used here is skipped with the reason accel gives (never passed).

A build tree of the repository (default build/release; PYTEST_ACCEL_BUILD
names another, "" none) adds what the package does not bundle: the CUDA
and HIP emulation plugins (emulated-plugins/, put first on ACCEL_PLUGIN_PATH,
so the "cuda" and "hip" parameters are the emulated runtimes, reported as
cuda-emulated and hip-emulated) and the
private OpenCL vendors folder listing PoCL, Intel's runtime and Oclgrind
(opencl-vendors/, as OCL_ICD_VENDORS). Both are set in this process's
environment only, before accel is imported, and only where not set already.
"""

from __future__ import annotations

import os
import pathlib
import typing
from typing import Iterator, List

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
_build = os.environ.get("PYTEST_ACCEL_BUILD", str(REPO / "build" / "release"))
BUILD = pathlib.Path(_build) if _build else None
CUDA_EMULATED = False
if BUILD is not None and BUILD.is_dir():
    emulated = BUILD / "emulated-plugins"
    if (emulated / "libaccel-backend-cuda.so").exists() and "ACCEL_PLUGIN_PATH" not in os.environ:
        os.environ["ACCEL_PLUGIN_PATH"] = str(emulated)
        CUDA_EMULATED = True
    vendors = BUILD / "opencl-vendors"
    if vendors.is_dir() and "OCL_ICD_VENDORS" not in os.environ:
        os.environ["OCL_ICD_VENDORS"] = str(vendors)
    os.environ.setdefault("POCL_CACHE_DIR", str(BUILD / "pocl-cache"))
    os.environ.setdefault("ACCEL_CACHE_DIR", str(BUILD / "accel-cache"))

import accel  # noqa: E402  (after the environment above)


def _opencl_selectors(device_count: int) -> List[str]:
    """One selector per OpenCL implementation: device I's stable selector ('opencl:pocl:0'), without the
    index for a platform's first device ('opencl:pocl'). The backend counts real devices only: a simulator
    (Oclgrind) has no index among them. A device that does not open keeps its index, to be skipped with
    accel's reason."""
    selectors: List[str] = []
    for index in range(device_count):
        try:
            stable = accel.device(f"opencl:{index}").info.stable_selector
        except accel.Error:
            stable = ""
        selector = stable[: -len(":0")] if stable.endswith(":0") else stable or f"opencl:{index}"
        if selector not in selectors:
            selectors.append(selector)
    return selectors


def _selectors() -> List[str]:
    """The backends accel finds (their plugins, available or not), OpenCL as its implementations."""
    selectors: List[str] = []
    for backend in accel.backends():
        if backend["name"] == "opencl" and backend["available"]:
            selectors += _opencl_selectors(typing.cast(int, backend["device_count"]))
        else:
            selectors.append(str(backend["name"]))
    return selectors


SELECTORS: List[str] = _selectors()


def _label(selector: str) -> str:
    return f"{selector}-emulated" if selector in ("cuda", "hip") and CUDA_EMULATED else selector


@pytest.fixture(scope="session", params=SELECTORS, ids=[_label(s) for s in SELECTORS])
def device(request: pytest.FixtureRequest) -> Iterator[accel.Device]:
    """Each device in turn; skipped (with accel's reason) where it cannot be opened."""
    selector = request.param
    try:
        dev = accel.device(selector)
    except accel.BackendUnavailable as e:
        pytest.skip(f"{_label(selector)} is not available here: {str(e).splitlines()[0]}")
    yield dev


@pytest.fixture(scope="session")
def host() -> accel.Device:
    """The host backend's device (always built)."""
    return accel.device("host")
