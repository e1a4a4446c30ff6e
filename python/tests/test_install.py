"""Building the package against an accel built already (ACCEL_PYTHON_USE, python/prebuilt.cmake):
the CMake project then holds the extension module's targets only, and the install step bundles
that accel's libaccel, plugins and accel-bench with runtime paths of the package's own.

And an op accel does not know when the package is built, defined by a backend built against that
accel (tests/package/toy_backend: toy_square), has its function in accel.ops, made from the op's
table entry.

Uses an install of the build tree conftest.py names (cmake --install into a temporary prefix, so
that nothing is built); skipped where there is none.
"""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys

import pytest

from conftest import BUILD

REPO = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def build_tree() -> pathlib.Path:
    """The build tree conftest.py names, built (libaccel and accel-bench)."""
    if BUILD is None or not (BUILD / "lib" / "libaccel.so.0").exists() or not (BUILD / "bin" / "accel-bench").exists():
        pytest.skip(f"no built accel tree with accel-bench at {BUILD} (build the release preset)")
    for tool in ("cmake", "ninja", "readelf"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed")
    return BUILD


@pytest.fixture(scope="module")
def prefix(build_tree: pathlib.Path, tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    """The build tree installed into a temporary prefix (nothing built)."""
    where = tmp_path_factory.mktemp("accel-prefix")
    done = subprocess.run(["cmake", "--install", str(build_tree), "--prefix", str(where)], capture_output=True,
                          text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return where


def test_configures_the_extension_module_only(prefix: pathlib.Path, tmp_path: pathlib.Path) -> None:
    done = subprocess.run(["cmake", "-S", str(REPO), "-B", str(tmp_path), "-G", "Ninja", "-DACCEL_BUILD_PYTHON=ON",
                           f"-DACCEL_PYTHON_USE={prefix}", f"-DPython_EXECUTABLE={sys.executable}"],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0 and "needs nanobind" in done.stderr:
        pytest.skip("nanobind is not installed for this Python (pip install -r python/requirements-dev.txt)")
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"the extension module against {prefix}" in done.stdout, done.stdout
    targets = subprocess.run(["ninja", "-C", str(tmp_path), "-t", "targets", "all"], capture_output=True, text=True,
                             check=True).stdout
    assert "_accel" in targets and "accel-python" in targets
    for built_elsewhere in ("libaccel.so", "accel-backend-host", "bin/accel-bench"):
        assert built_elsewhere not in targets, f"{built_elsewhere} would be built again"


def runpath(path: pathlib.Path) -> str:
    """The RUNPATH (or RPATH) of an ELF file, as readelf shows it."""
    out = subprocess.run(["readelf", "-d", str(path)], capture_output=True, text=True, check=True).stdout
    return next((line.split("[", 1)[1].rstrip("]") for line in out.splitlines() if "PATH)" in line), "")


def test_bundles_that_accel(build_tree: pathlib.Path, tmp_path: pathlib.Path) -> None:
    """bundle-prebuilt.cmake, the install step, from the build tree itself: libaccel as its SONAME,
    the plugins, accel-bench; the build tree's absolute runtime paths replaced by the package's own
    ($ORIGIN, $ORIGIN/../lib), so that accel-bench runs from the bundle with no library path."""
    done = subprocess.run(["cmake", f"-DACCEL_BUNDLE_LIBACCEL={(build_tree / 'lib' / 'libaccel.so.0').resolve()}",
                           "-DACCEL_BUNDLE_SONAME=libaccel.so.0",
                           f"-DACCEL_BUNDLE_BENCH={build_tree / 'bin' / 'accel-bench'}",
                           f"-DCMAKE_INSTALL_PREFIX={tmp_path}", "-P", str(REPO / "python" / "bundle-prebuilt.cmake")],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    library, bench = tmp_path / "lib" / "libaccel.so.0", tmp_path / "bin" / "accel-bench"
    assert library.is_file() and not library.is_symlink()
    plugins = sorted((tmp_path / "lib").glob("libaccel-backend-*.so"))
    assert [p.name for p in plugins] == sorted(p.name for p in (build_tree / "lib").glob("libaccel-backend-*.so"))
    assert runpath(bench) == "$ORIGIN/../lib"
    for lib in [library] + plugins:
        assert runpath(lib) in ("", "$ORIGIN"), f"{lib.name}: {runpath(lib)}"
    env = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "ACCEL_PLUGIN_PATH")}
    run = subprocess.run([str(bench), "--help"], env=env, capture_output=True, text=True, check=False)
    assert run.returncode == 0 and "accel-bench" in run.stdout, run.stderr


# Run in a fresh interpreter whose ACCEL_PLUGIN_PATH holds the toy backend only: its plugin, loaded by
# accel.device("toy"), defines toy_square (y = x * x, input x) after accel.ops was imported.
TOY_SQUARE = """
import numpy as np
import accel, accel.ops as ops

assert "toy_square" not in accel.elementwise_op_names()  # no plugin loaded yet
dev = accel.device("toy")
assert "toy_square" in accel.elementwise_op_names()
square = ops.toy_square
x = accel.from_numpy(np.array([-2.0, 0.5, 3.0], dtype=np.float32), device=dev)
assert square(x).numpy().tolist() == [4.0, 0.25, 9.0]
out = accel.empty((3,), device=dev)
assert square(x=x, out=out, path="native") is out and out.numpy().tolist() == [4.0, 0.25, 9.0]
assert "y = x * x" in square.__doc__ and "'toy_square'" in square.__doc__, square.__doc__
try:
    square(x, accel.empty((4,), device=dev))
except accel.InvalidArgument as e:
    assert "'out' has [4]" in str(e), e
else:
    raise AssertionError("a mismatched out was accepted")
print("toy_square from the table")
"""


def test_an_op_of_a_plugin_has_its_function(prefix: pathlib.Path, tmp_path: pathlib.Path) -> None:
    """An elementwise op that a backend plugin defines (define_op) is reachable as accel.ops.NAME with no
    binding of its own: its function is made from its op-table entry (inputs by name, out, path, docstring)."""
    build, plugins = tmp_path / "build", tmp_path / "plugins"
    for step in (["cmake", "-S", str(REPO / "tests" / "package" / "toy_backend"), "-B", str(build), "-G", "Ninja",
                  f"-DCMAKE_PREFIX_PATH={prefix}"],
                 ["cmake", "--build", str(build)],
                 ["cmake", "--install", str(build), "--prefix", str(plugins)]):
        done = subprocess.run(step, capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stdout + done.stderr
    env = dict(os.environ, ACCEL_PLUGIN_PATH=str(plugins))
    run = subprocess.run([sys.executable, "-c", TOY_SQUARE], env=env, capture_output=True, text=True, timeout=120,
                         check=False)
    assert run.returncode == 0 and "toy_square from the table" in run.stdout, run.stdout + run.stderr
