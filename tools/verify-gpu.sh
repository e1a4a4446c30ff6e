#!/usr/bin/env bash
# verify-gpu.sh: accel's GPU check on this machine, when it has an NVIDIA GPU
# and the build's Debian packages (tools/install-deps.sh): builds the GPU
# bundle (tools/gpu-bundle.sh) and runs it (docs/gpu.md). For a bare GPU
# machine, build the bundle elsewhere and copy it there instead.
#
# Usage: tools/verify-gpu.sh [OUT] [run-gpu-checks.sh options...]
#   OUT  results folder (default accel-gpu-<host>-<date>); e.g. --minutes 8
# Exit: run-gpu-checks.sh's (0 no step failed, 1 a step failed, 2 usage
# error); 1 when the bundle cannot be built; 2 no NVIDIA GPU here.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "verify-gpu: no NVIDIA driver (nvidia-smi missing or finding no GPU): nothing to verify on this machine;" \
       "run-gpu-checks.sh --rehearsal checks the bundle without one (docs/gpu.md)" >&2
  exit 2
fi
out=$root/accel-gpu-$(hostname)-$(date +%Y%m%d-%H%M%S)
if [ $# -gt 0 ] && [[ "$1" != -* ]]; then out=$1; shift; fi
"$root/tools/gpu-bundle.sh" || { echo "verify-gpu: tools/gpu-bundle.sh failed" >&2; exit 1; }
exec "$root/build/gpu-bundle/bundle/run-gpu-checks.sh" "$out" "$@"
