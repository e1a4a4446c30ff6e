#!/usr/bin/env bash
# verify-gpu.sh: run accel's GPU checks on a machine with a GPU and pack the
# results into one tarball to send back.
#
# Usage: tools/verify-gpu.sh [build-dir]     (default: build/release)
# Exit: 0 all checks passed, 1 a check failed, 2 no NVIDIA driver / GPU here.
# Steps (CUDA): build (release preset), accel-info, nvidia-smi,
# conformance.cuda with ACCEL_OP_PATH=native and =vendor, the conformance
# suite again at small sizes (ACCEL_TEST_SEED fixed) under compute-sanitizer
# memcheck, racecheck and synccheck, the reliability test, a quick
# accel-bench --json. Then the same for OpenCL when a GPU ICD is present and
# for Kokkos when it reports a GPU. Output: accel-gpu-<host>-<date>.tar.gz.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build/release}
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "verify-gpu: no NVIDIA driver (nvidia-smi missing or finding no GPU): nothing to verify on this machine" >&2
  exit 2
fi
stamp=$(date +%Y%m%d-%H%M%S)
out=$root/accel-gpu-$(hostname)-$stamp
mkdir -p "$out"
status=0
run() {  # run NAME CMD...: log to $out/NAME.log, remember failures
  local name=$1; shift
  echo "== $name: $*"
  if "$@" >"$out/$name.log" 2>&1; then echo "   ok"; else echo "   FAILED (see $name.log)"; status=1; fi
}
run build bash -c "cd '$root' && cmake --preset release && cmake --build --preset release"
run accel-info "$build/bin/accel-info"
run nvidia-smi nvidia-smi -q
conf=$build/bin/accel-conformance
for path in native vendor; do
  run conformance.cuda.$path env ACCEL_BACKEND=cuda ACCEL_OP_PATH=$path "$conf"
done
if command -v compute-sanitizer >/dev/null 2>&1; then
  for tool in memcheck racecheck synccheck; do
    run sanitizer.$tool env ACCEL_BACKEND=cuda ACCEL_TEST_SEED=1 compute-sanitizer --tool $tool --error-exitcode 1 \
      "$conf" "--test-case-exclude=*large*,*tall*"
  done
else
  echo "compute-sanitizer not found (it comes with the CUDA toolkit): sanitizer runs skipped" | tee "$out/sanitizer.log"
  status=1
fi
run reliability.cuda env ACCEL_BACKEND=cuda "$build/bin/accel-reliability"
run bench.cuda "$build/bin/accel-bench" --backends cuda --quick --json "$out/bench-cuda.json"
if "$build/bin/accel-info" 2>/dev/null | grep -qi "opencl: available.*GPU"; then
  run conformance.opencl env ACCEL_BACKEND=opencl "$conf"
  run reliability.opencl env ACCEL_BACKEND=opencl "$build/bin/accel-reliability"
  run bench.opencl "$build/bin/accel-bench" --backends opencl --quick --json "$out/bench-opencl.json"
fi
if "$build/bin/accel-info" 2>/dev/null | grep -qi "kokkos: available.*GPU"; then
  run conformance.kokkos env ACCEL_BACKEND=kokkos "$conf"
  run reliability.kokkos env ACCEL_BACKEND=kokkos "$build/bin/accel-reliability"
  run bench.kokkos "$build/bin/accel-bench" --backends kokkos --quick --json "$out/bench-kokkos.json"
fi
tar -czf "$out.tar.gz" -C "$(dirname "$out")" "$(basename "$out")"
echo "verify-gpu: results in $out.tar.gz (status $status)"
exit $status
