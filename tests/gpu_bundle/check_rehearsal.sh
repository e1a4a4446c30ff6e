#!/usr/bin/env bash
# The GPU bundle's rehearsal (docs/gpu.md), as CTest runs it: assembles a
# bundle from this build tree (tools/gpu-bundle.sh --from-build: nothing is
# compiled), moves it to a fresh folder, checks that every library it
# carries and every accel library loads from that folder (ldd, and LD_DEBUG
# on accel-info, which opens every plugin) and nothing from the build tree,
# then runs run-gpu-checks.sh --rehearsal --quick there and checks that it
# passes with a verdict for every step. As root, the checks and the run are
# done in a mount namespace where this machine's copies of the carried
# libraries are unreadable (/dev/null bound over them), so that nothing can
# fall back to them, but for those the machine's own OpenCL and Vulkan
# drivers and OpenBLAS need.
#
# Usage: check_rehearsal.sh SOURCE_DIR BUILD_DIR WORK_DIR
set -u
source_dir=$1 build_dir=$2 work=$3
fail() { echo "check_rehearsal: FAIL: $*" >&2; exit 1; }
b=$work/bundle
if [ -z "${GPU_BUNDLE_REHEARSAL_HIDDEN:-}" ]; then
  rm -rf "$work"
  mkdir -p "$work"
  "$source_dir/tools/gpu-bundle.sh" --from-build "$build_dir" --out "$work/assembled" --max-mib 64 ||
    fail "tools/gpu-bundle.sh --from-build $build_dir failed"
  mv "$work/assembled" "$b"  # relocated: no path of the assembly is left to find
  # What the machine's own drivers and BLAS need (PoCL, lavapipe, OpenBLAS)
  # stays readable: they are the machine's, as the NVIDIA driver is there.
  machine_needs=$(for l in libpocl.so.2 libvulkan_lvp.so libopenblas.so.0; do
                    p=$(ldconfig -p | awk -v n=$l '$1 == n {print $NF; exit}')
                    [ -n "$p" ] && ldd "$p" 2>/dev/null | awk '$2 == "=>" {print $1}'
                  done | sort -u)
  hide=$(sed -nE 's/^(lib[^ ]+) from .*\((\/[^)]+)\)$/\1 \2/p' "$b/lib/CARRIED.txt" |
         while read -r name path; do grep -qxF "$name" <<<"$machine_needs" || realpath "$path"; done)
  if [ "$(id -u)" = 0 ] && unshare --mount true 2>/dev/null; then
    echo "check_rehearsal: this machine's copies made unreadable: $(echo $hide)"
    GPU_BUNDLE_REHEARSAL_HIDDEN=1 exec unshare --mount bash -c \
      'for f in $0; do mount --bind /dev/null "$f" || exit 1; done; exec "$@"' "$hide" "$0" "$@"
  fi
  echo "check_rehearsal: not root or no mount namespace: this machine's copies of the carried libraries stay" \
       "readable; LD_DEBUG alone shows where each loads from"
fi

# Every ELF of the bundle resolves each carried or accel library inside it.
carried=$(cd "$b/lib" && ls -p | grep -v / | grep '\.so' | paste -sd'|' -)
for f in "$b"/bin/* "$b"/lib/*.so* "$b"/lib/emulated/*.so; do
  ldd "$f" >"$work/ldd.txt" 2>&1
  grep -q 'not found' "$work/ldd.txt" && fail "ldd $f: $(grep 'not found' "$work/ldd.txt" | head -n 3)"
  wrong=$(grep -E "^\s($carried) => " "$work/ldd.txt" | grep -v "=> $b/" || true)
  [ -z "$wrong" ] || fail "ldd $f loads a carried library from outside the bundle: $wrong"
  from_build=$(grep -F "$build_dir/" "$work/ldd.txt" | grep -vF "$b/" || true)
  [ -z "$from_build" ] || fail "ldd $f loads from the build tree: $from_build"
done
# What accel-info really loads (it opens every plugin; Vulkan's loader by dlopen).
LD_DEBUG=files "$b/bin/accel-info" >"$work/accel-info.txt" 2>"$work/ld-debug.txt"
loaded=$(grep -oE 'calling init: [^ ]+' "$work/ld-debug.txt" | cut -d' ' -f3 | sort -u)
[ -n "$loaded" ] || fail "LD_DEBUG=files showed no library loaded (accel-info: $(tail -n 2 "$work/accel-info.txt"))"
# A library the bundle asks for (needed by, or opened by, one of its files)
# must come from the bundle, but for those gpu-bundle.sh leaves to the GPU
# machine (its `runtime` list: the C/C++ runtime, the driver, CUDA's
# libraries) and the CPU BLAS the host backend looks for there; the drivers
# that the bundle's ICD loaders open are the machine's too.
runtime=$(sed -n "s/^runtime='\(.*\)'\$/\1/p" "$source_dir/tools/gpu-bundle.sh")
[ -n "$runtime" ] || fail "no runtime='...' list in $source_dir/tools/gpu-bundle.sh"
blas='^(libopenblas|libblis|libcblas)\.so'
for lib in $loaded; do
  case "$lib" in "$b"/*) continue ;; "$build_dir"/*) fail "accel-info loaded $lib from the build tree" ;; esac
  name=$(basename "$lib")
  by=$(grep -m1 -E "file=$name \[0\]; +(needed|dynamically loaded) by" "$work/ld-debug.txt" | sed -E 's/.* by ([^ ]+).*/\1/')
  [[ "$by" == "$b"/* ]] || continue
  # (libaccel is in that list as what the bundle holds itself: never exempt here.)
  [[ "$name" != libaccel* ]] && [[ "$name" =~ $runtime || "$name" =~ $blas ]] && continue
  case "$(basename "$by")" in libOpenCL.so.1|libvulkan.so.1) continue ;; esac
  fail "accel-info loaded $name from $lib (asked for by $by), not from the bundle: the bundle does not carry it"
done
for name in libaccel.so.0 libaccel-backend-host.so libaccel-backend-opencl.so libOpenCL.so.1; do
  grep -q "/$name\$" <<<"$loaded" || fail "accel-info did not load $name (loaded: $(echo $loaded))"
done
echo "check_rehearsal: libraries: $(echo "$loaded" | grep -c "^$b/") loaded from the bundle, none from the build tree"

"$b/run-gpu-checks.sh" "$work/out" --rehearsal --quick --minutes 10 >"$work/run.txt" 2>&1
rc=$?
cat "$work/out/summary.txt"
[ $rc -eq 0 ] || fail "run-gpu-checks.sh --rehearsal --quick exited $rc (log: $work/run.txt, results: $work/out)"
for step in facts info conformance.cuda.native conformance.cuda.vendor conformance.opencl conformance.vulkan \
            sanitizer.memcheck sanitizer.racecheck sanitizer.synccheck bench.matmul bench.add bench.dense \
            mlp mlp.graph mlp.wide peer reliability; do
  grep -qE "^$step +(pass|skip|fail) " "$work/out/summary.txt" || fail "the summary has no verdict for step $step"
done
echo "check_rehearsal: the rehearsal passed with a verdict for every step"
