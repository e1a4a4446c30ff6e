#!/usr/bin/env bash
# gpu-bundle.sh: builds, on a machine without a GPU, a relocatable folder that
# runs accel's whole GPU check on a bare machine with an NVIDIA GPU (a driver,
# CUDA 13's runtime and cuBLAS; no package manager, no network): libaccel,
# the host, CUDA, OpenCL and Vulkan plugins, accel-info, accel-bench,
# accel-conformance, accel-reliability, accel-interop-tests, mlp_train and
# its data, the custom_kernel example, the
# libraries such a machine may lack (OpenCL ICD loader, Vulkan loader,
# CLBlast, ...), the emulated CUDA plugin for the rehearsal, and
# run-gpu-checks.sh with its Python helpers (docs/gpu.md); with
# --kokkos-root, the Kokkos plugin and that Kokkos' shared libraries too.
#
# Usage: tools/gpu-bundle.sh [--out DIR] [--build-dir DIR] [--from-build DIR]
#                            [--cuda-archs LIST] [--max-mib N] [--kokkos-root DIR]
#   --out DIR         the bundle (default build/gpu-bundle/bundle; replaced)
#   --build-dir DIR   where to configure and build (default build/gpu-bundle)
#   --from-build DIR  build nothing: assemble from that build tree (e.g.
#                     build/release, whose programs are already built)
#   --cuda-archs LIST CMAKE_CUDA_ARCHITECTURES of the CUDA plugin (default
#                     90-real: H100/H200; e.g. "90-real;100-real")
#   --max-mib N       fail when the bundle is larger (default 40; 64 with
#                     --from-build: a build tree's CUDA plugin carries each
#                     architecture of its CMAKE_CUDA_ARCHITECTURES, six in the
#                     release preset's default, and its programs may link MPI)
#   --kokkos-root DIR carry the Kokkos plugin built against the Kokkos
#                     installed at DIR (a shared Kokkos; for the GPU one built
#                     with CUDA for the bundle's architecture) and its
#                     libraries; with --from-build, that tree's plugin, which
#                     must have been built against DIR. Without it the bundle
#                     has no Kokkos (Debian's is Serial: no GPU)
# Every library the programs load outside the C/C++ runtime, the NVIDIA
# driver and CUDA's runtime and cuBLAS is copied into lib/, and every RPATH
# is $ORIGIN-relative: nothing is found through this machine's paths.
# Exit: 0 bundle written; 1 build or assembly failed; 2 usage error.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/build/gpu-bundle/bundle
build=$root/build/gpu-bundle
from_build=""
archs="90-real"
max_mib=""
kokkos_root=""
while [ $# -gt 0 ]; do
  case "$1" in
    --out|--build-dir|--from-build|--cuda-archs|--max-mib|--kokkos-root)
      [ $# -ge 2 ] || { echo "gpu-bundle.sh: $1 needs a value" >&2; exit 2; }
      case "$1" in
        --out) out=$(realpath -m "$2") ;;
        --build-dir) build=$(realpath -m "$2") ;;
        --from-build) from_build=$(realpath -m "$2") ;;
        --cuda-archs) archs=$2 ;;
        --kokkos-root) [ -d "$2" ] || { echo "gpu-bundle.sh: --kokkos-root $2 is not a folder" >&2; exit 2; }
                       kokkos_root=$(realpath "$2") ;;
        --max-mib) [[ "$2" =~ ^[1-9][0-9]*$ ]] || { echo "gpu-bundle.sh: --max-mib needs a whole number, got '$2'" >&2; exit 2; }
                   max_mib=$2 ;;
      esac
      shift ;;
    -h|--help) sed -n '2,34p' "$0"; exit 0 ;;
    *) echo "gpu-bundle.sh: unknown option '$1' (known: --out, --build-dir, --from-build, --cuda-archs, --max-mib, --kokkos-root)" >&2; exit 2 ;;
  esac
  shift
done
[ -n "$max_mib" ] || max_mib=$([ -n "$from_build" ] && echo 64 || echo 40)
command -v patchelf >/dev/null || { echo "gpu-bundle.sh: patchelf not found (tools/install-deps.sh installs it)" >&2; exit 1; }

programs=(accel-info accel-bench accel-conformance accel-reliability accel-interop-tests mlp_train custom_kernel)
kokkos_targets=() kokkos_flags=(-DACCEL_WITH_KOKKOS=OFF)
[ -z "$kokkos_root" ] || kokkos_targets=(accel-backend-kokkos) kokkos_flags=(-DACCEL_WITH_KOKKOS=ON "-DKokkos_ROOT=$kokkos_root")
if [ -z "$from_build" ]; then
  launcher=()
  # Not for C++ with a Kokkos built for CUDA: its launcher (kokkos_launch_compiler)
  # must come first on the command line to hand the plugin's files to nvcc_wrapper.
  command -v ccache >/dev/null && launcher=(-DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
  command -v ccache >/dev/null && [ -z "$kokkos_root" ] && launcher+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  # Kokkos only with --kokkos-root; MPI and Python stay out.
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CUDA_ARCHITECTURES=$archs" \
    -DACCEL_WITH_CUDA=ON -DACCEL_WITH_OPENCL=ON -DACCEL_WITH_VULKAN=ON "${kokkos_flags[@]}" \
    -DACCEL_WITH_MPI=OFF -DACCEL_BUILD_PYTHON=OFF -DACCEL_BUILD_TESTS=ON -DACCEL_BUILD_EXAMPLES=ON "${launcher[@]}"
  cmake --build "$build" --target accel accel-backend-host accel-backend-cuda accel-backend-opencl \
    accel-backend-vulkan accel-backend-cuda-emulated "${kokkos_targets[@]}" "${programs[@]}"
  from_build=$build
fi
if [ -n "$kokkos_root" ]; then
  [ -e "$from_build/lib/libaccel-backend-kokkos.so" ] ||
    { echo "gpu-bundle.sh: $from_build/lib/libaccel-backend-kokkos.so is not built" >&2; exit 1; }
  kokkos_dir=$(sed -n 's/^Kokkos_DIR:[A-Z]*=//p' "$from_build/CMakeCache.txt")
  case "$(realpath -m "$kokkos_dir")/" in
    "$kokkos_root"/*) ;;
    *) echo "gpu-bundle.sh: $from_build's Kokkos plugin was built against the Kokkos at ${kokkos_dir:-(none)}, not under --kokkos-root $kokkos_root" >&2; exit 1 ;;
  esac
fi
for p in "${programs[@]}"; do
  [ -x "$from_build/bin/$p" ] || { echo "gpu-bundle.sh: $from_build/bin/$p is not built" >&2; exit 1; }
done

# Assembled beside, then moved into place: a failed run leaves no half bundle.
mkdir -p "$(dirname "$out")"
stage=$(mktemp -d "$(dirname "$out")/.gpu-bundle.XXXXXX")
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage"/{bin,lib/emulated,lib/fallback,share,python}
cp -a "${programs[@]/#/$from_build/bin/}" "$stage/bin/"
cp -a "$from_build"/lib/libaccel.so* "$stage/lib/"
# Every backend plugin built but Kokkos without --kokkos-root and HIP (the
# bundle is for NVIDIA machines; the HIP runtime alone would add 17 MiB).
for plugin in "$from_build"/lib/libaccel-backend-*.so; do
  case "$(basename "$plugin")" in
    libaccel-backend-hip.so) ;;
    libaccel-backend-kokkos.so) [ -z "$kokkos_root" ] || cp -a "$plugin" "$stage/lib/" ;;
    *) cp -a "$plugin" "$stage/lib/" ;;
  esac
done
[ -e "$from_build/emulated-plugins/libaccel-backend-cuda.so" ] &&
  cp -a "$from_build/emulated-plugins/libaccel-backend-cuda.so" "$stage/lib/emulated/"
cp "$root/data/breast_cancer.csv" "$root/data/README.md" "$stage/share/"
cp "$root/tools/gpu/run-gpu-checks.sh" "$stage/"
cp "$root/tools/gpu/ops_vs_pytorch.py" "$root/tools/gpu/gpu_summary.py" "$root/tools/bench/mlp_vs_pytorch.py" "$stage/python/"

# What a bare machine may lack: every library ldd resolves for the programs
# and plugins, but the C/C++ runtime, the driver and CUDA's own libraries.
runtime='^(linux-vdso|ld-linux|libc|libm|libstdc\+\+|libgcc_s|libpthread|libdl|librt|libcuda|libcudart|libcublas|libcublasLt|libaccel)\.so'
# The Debian package a library file comes from (dpkg knows each file under
# one of /lib and /usr/lib).
package_of() {
  local f
  for f in "$(realpath "$1")" "$1" "${1#/usr}" "/usr${1#/usr}"; do
    dpkg -S "$f" 2>/dev/null | cut -d: -f1-2 | head -n 1 | grep . && return
  done
  echo "no package"
}
libs_of() { ldd "$@" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | sort -u; }
carried=$stage/lib/CARRIED.txt
: >"$carried"
while read -r name path; do
  [[ "$name" =~ $runtime ]] && continue
  [ -e "$stage/lib/$name" ] && continue
  cp -L "$path" "$stage/lib/$name"
  echo "$name from $(package_of "$path") ($path)" >>"$carried"
done < <(libs_of "$stage"/bin/* "$stage"/lib/*.so* "$stage"/lib/emulated/*.so
         # and what the plugins open by name at run time (dlopen): the Vulkan loader
         for l in libvulkan.so.1; do p=$(ldconfig -p | awk -v n=$l '$1 == n && /x86-64/ {print $NF; exit}')
           [ -n "$p" ] && echo "$l $p"; done)
# The NVIDIA Vulkan driver (libGLX_nvidia.so.0) needs glvnd's libraries
# (libGLdispatch; libEGL to find the GPU without a display) and libX11,
# which a compute-only image may not have: run-gpu-checks.sh puts
# lib/fallback on the path only when the machine lacks one of them.
while read -r name path; do
  [[ "$name" =~ $runtime ]] && continue
  cp -L "$path" "$stage/lib/fallback/$name"
  echo "fallback/$name from $(package_of "$path") ($path)" >>"$carried"
done < <(for l in libGLdispatch.so.0 libEGL.so.1 libGLX.so.0 libOpenGL.so.0 libX11.so.6 libXext.so.6; do p=$(ldconfig -p | awk -v n=$l '$1 == n {print $NF; exit}'); [ -n "$p" ] && libs_of "$p"; [ -n "$p" ] && echo "$l $p"; done | sort -u)

# $ORIGIN-relative search paths only (the CUDA plugin's toolkit folder is
# dropped: run-gpu-checks.sh finds CUDA's libraries on the machine it runs on).
for f in "$stage"/bin/*; do patchelf --set-rpath '$ORIGIN/../lib' "$f"; done
for f in "$stage"/lib/*.so*; do [ -L "$f" ] || patchelf --set-rpath '$ORIGIN' "$f"; done
for f in "$stage"/lib/emulated/*.so; do [ -e "$f" ] && patchelf --set-rpath '$ORIGIN/..' "$f"; done
for f in "$stage"/lib/fallback/*; do [ -e "$f" ] && patchelf --set-rpath '$ORIGIN' "$f"; done

# Symbol tables and debug sections are not run: the bundle carries the code only.
find "$stage/bin" "$stage/lib" -type f \( -path "$stage/bin/*" -o -name '*.so*' \) -exec strip --strip-unneeded {} +
mib=$(( ($(du -sb "$stage" | cut -f1) + 1048575) / 1048576 ))
{
  echo "accel GPU bundle $(git -C "$root" describe --always --dirty 2>/dev/null || echo unknown), built $(date -u '+%Y-%m-%d %H:%M UTC') on $(. /etc/os-release; echo "$PRETTY_NAME"), $mib MiB"
  echo "CUDA architectures: $(grep -m1 -oE '^CMAKE_CUDA_ARCHITECTURES:[A-Z]+=.*' "$from_build/CMakeCache.txt" | cut -d= -f2)"
  echo "plugins: $(cd "$stage/lib" && ls libaccel-backend-*.so | sed 's/libaccel-backend-//; s/\.so//' | paste -sd' ' -)"
  [ -z "$kokkos_root" ] || echo "Kokkos: the plugin built against $kokkos_dir (--kokkos-root $kokkos_root)"
  echo "carried libraries:"
  sed 's/^/  /' "$carried"
  echo "run: ./run-gpu-checks.sh OUT [--minutes N] [--rehearsal] [--quick] (docs/gpu.md)"
} >"$stage/MANIFEST.txt"
if [ "$mib" -gt "$max_mib" ]; then
  echo "gpu-bundle.sh: the bundle is $mib MiB, over --max-mib $max_mib; largest files:" >&2
  (cd "$stage" && find . -type f -printf '%s %p\n' | sort -rn | head -n 8) >&2
  exit 1
fi
rm -rf "$out"
mkdir -p "$(dirname "$out")"
mv "$stage" "$out"
trap - EXIT
echo "gpu-bundle.sh: $out ($mib MiB); run it there as: ./run-gpu-checks.sh OUT --minutes 8"
