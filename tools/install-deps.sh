#!/usr/bin/env bash
# Installs what accel builds and runs with on Debian 12 (run as root, or
# with sudo available). The CUDA toolkit is not a Debian package: when
# /usr/local/cuda exists the CUDA backend is built too. clang, libFuzzer's
# runtime (libclang-rt-14-dev: clang only recommends it) and clang's OpenMP
# serve the `fuzz` preset. Open MPI (libopenmpi-dev, openmpi-bin) builds
# accel_mpi and the tools' MPI mode, and runs the `mpi` tests.
set -euo pipefail
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq \
  ca-certificates git cmake g++ ninja-build pkg-config \
  doctest-dev nlohmann-json3-dev \
  ocl-icd-opencl-dev opencl-headers pocl-opencl-icd clinfo libclblast-dev \
  libtrilinos-kokkos-dev libtrilinos-kokkos-kernels-dev \
  libopenblas-dev libopenblas0-openmp libblis-dev \
  gnuplot-nox \
  libopenmpi-dev openmpi-bin \
  clang libclang-rt-14-dev libomp-14-dev
echo "accel dependencies installed."
