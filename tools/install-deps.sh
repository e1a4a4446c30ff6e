#!/usr/bin/env bash
# Installs what accel builds and runs with on Debian 12 (run as root, or
# with sudo available). The CUDA toolkit is not a Debian package: when
# /usr/local/cuda exists the CUDA backend is built too. clang, libFuzzer's
# runtime (libclang-rt-14-dev: clang only recommends it) and clang's OpenMP
# serve the `fuzz` and `tsan` presets. Open MPI (libopenmpi-dev, openmpi-bin)
# builds accel_mpi and the tools' MPI mode, and runs the `mpi` tests.
# patchelf sets the RPATHs of the GPU bundle (tools/gpu-bundle.sh); ccache
# serves CI's rebuilds (.ci/run). hipcc and libamdhip64-dev (ROCm 5.2) build
# the HIP backend for AMD GPUs (gfx908, gfx90a, gfx1030); its emulated HIP
# runtime, which the tests run, needs neither.
#
#   --opencl-runtimes  also install the OpenCL implementations the tests
#                      compare beside PoCL: Oclgrind (Debian; a simulator that
#                      checks every access) and Intel's OpenCL CPU runtime
#                      (PyPI intel-opencl-rt with intel-cmplr-lib-rt, which it
#                      needs but does not declare), into a virtual environment
#                      at /opt/accel-opencl/intel. Neither is registered with
#                      the system's ICD loader: the tests register them in a
#                      private vendors folder (OCL_ICD_VENDORS) of the build.
#   --python-venv DIR  also create a Python virtual environment at DIR with
#                      what building the Python package (python/) without
#                      build isolation and its tests need
#                      (python/requirements-dev.txt, from PyPI).
# python3-venv and python3-dev (the package's build) are always installed.
set -euo pipefail
OPENCL_RUNTIMES=0
PYTHON_VENV=""
while [ $# -gt 0 ]; do
  case "$1" in
    --opencl-runtimes) OPENCL_RUNTIMES=1 ;;
    --python-venv)
      [ $# -ge 2 ] || { echo "install-deps.sh: --python-venv needs a folder" >&2; exit 2; }
      PYTHON_VENV="$2"; shift ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    *) echo "install-deps.sh: unknown option '$1' (known: --opencl-runtimes, --python-venv DIR)" >&2; exit 2 ;;
  esac
  shift
done
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq \
  ca-certificates git cmake g++ ninja-build pkg-config \
  doctest-dev nlohmann-json3-dev libeigen3-dev libcli11-dev \
  ocl-icd-opencl-dev opencl-headers pocl-opencl-icd clinfo libclblast-dev \
  libvulkan-dev mesa-vulkan-drivers glslc spirv-tools vulkan-tools vulkan-validationlayers \
  libtrilinos-kokkos-dev libtrilinos-kokkos-kernels-dev \
  libopenblas-dev libopenblas0-openmp libblis-dev \
  gnuplot-nox patchelf ccache \
  hipcc libamdhip64-dev \
  libopenmpi-dev openmpi-bin \
  clang libclang-rt-14-dev libomp-14-dev \
  python3-venv python3-dev
if [ "$OPENCL_RUNTIMES" = 1 ]; then
  $SUDO apt-get install -y -qq oclgrind python3-venv
  # Intel's wheel also ships a libOpenCL.so.1 (its own ICD loader); it stays in
  # this folder, off the library path, so the system's loader is the one used.
  venv=/opt/accel-opencl/intel
  # PyPI is the only source: where it cannot be reached, say so and go on
  # (conformance.opencl.intel then reports itself skipped, never passed).
  if [ ! -e "$venv/lib/libintelocl.so" ]; then
    $SUDO /usr/bin/python3 -m venv "$venv" &&
      $SUDO "$venv/bin/pip" install --quiet --disable-pip-version-check \
        intel-opencl-rt==2026.2.0 intel-cmplr-lib-rt==2026.2.0 ||
      echo "install-deps.sh: WARNING: Intel's OpenCL CPU runtime could not be installed from PyPI;" \
           "conformance.opencl.intel will be skipped" >&2
  fi
fi
if [ -n "$PYTHON_VENV" ]; then
  /usr/bin/python3 -m venv "$PYTHON_VENV"
  "$PYTHON_VENV/bin/pip" install --quiet --disable-pip-version-check \
    -r "$(dirname "$0")/../python/requirements-dev.txt"
fi
echo "accel dependencies installed."
