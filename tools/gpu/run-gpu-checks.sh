#!/usr/bin/env bash
# run-gpu-checks.sh: accel's whole GPU check, run from a bundle made by
# tools/gpu-bundle.sh, on a machine with an NVIDIA GPU and its driver and
# nothing of accel's build installed (docs/gpu.md).
#
# Usage: run-gpu-checks.sh OUT [--minutes N] [--steps LIST] [--python PATH] [--rehearsal] [--quick]
#   OUT          folder for the results (created; one log per step, the
#                figures as JSON, and OUT/summary.txt)
#   --minutes N  wall-time budget (default 8): a step that no longer fits
#                is skipped, the late ones first, and named so in the summary
#   --steps LIST only these steps (comma list of names as in the summary, or
#                their first part: conformance, sanitizer, bench, mlp; facts
#                and info always run), e.g. --steps bench,peer
#   --python PATH the Python with PyTorch for the peer and mlp.wide steps
#                (default: the first python3 on PATH that imports torch)
#   --rehearsal  no NVIDIA GPU: the same steps with the bundle's emulated
#                CUDA plugin as `cuda`, PoCL as the OpenCL driver and Mesa's
#                lavapipe as the Vulkan driver (the machine's own packages)
#   --quick      every step at small sizes, few epochs (the CTest test of
#                the rehearsal)
#
# Each step writes its log and figures into OUT as soon as it ends, and one
# line `STEP VERDICT detail` into OUT/summary.txt (VERDICT: pass, fail or
# skip, with the reason); a failing step does not stop the next. The
# summary ends with the headline ratios (accel against PyTorch on the same
# GPU). Exit status: 0 no step failed; 1 a step failed; 2 usage error.
set -u
here=$(cd "$(dirname "$0")" && pwd)
# The logs are records: whole lines and every column of each table (the
# tools fit 100 columns where stdout is not a terminal).
export COLUMNS=10000
usage() { sed -n '2,27p' "$0"; }
out="" minutes=8 rehearsal=0 quick=0 steps="" python_arg=""
while [ $# -gt 0 ]; do
  case "$1" in
    --minutes)
      [[ "${2:-}" =~ ^[1-9][0-9]*$ ]] || { echo "run-gpu-checks: --minutes needs a whole number of minutes, got '${2:-}'" >&2; exit 2; }
      minutes=$2; shift ;;
    --steps)
      [[ "${2:-}" =~ ^[a-z.,]+$ ]] || { echo "run-gpu-checks: --steps needs a comma list of step names, got '${2:-}'" >&2; exit 2; }
      steps=$2; shift ;;
    --python)
      [ -n "${2:-}" ] && [ -x "$2" ] || { echo "run-gpu-checks: --python needs an executable Python, got '${2:-}'" >&2; exit 2; }
      python_arg=$2; shift ;;
    --rehearsal) rehearsal=1 ;;
    --quick) quick=1 ;;
    -h|--help) usage; exit 0 ;;
    -*) echo "run-gpu-checks: unknown option '$1' (known: --minutes N, --steps LIST, --python PATH, --rehearsal, --quick)" >&2; exit 2 ;;
    *) [ -z "$out" ] || { echo "run-gpu-checks: one OUT folder, got '$out' and '$1'" >&2; exit 2; }
       out=$1 ;;
  esac
  shift
done
known_steps="conformance conformance.cuda.native conformance.cuda.vendor conformance.opencl conformance.vulkan conformance.kokkos
  sanitizer sanitizer.memcheck sanitizer.racecheck sanitizer.synccheck tune bench bench.matmul bench.add bench.dense bench.stream
  mlp mlp.graph mlp.wide peer reliability interop custom_kernel"
for wanted in ${steps//,/ }; do
  [[ " $(echo $known_steps) " == *" $wanted "* ]] ||
    { echo "run-gpu-checks: --steps: no step '$wanted'; the steps are: $(echo $known_steps)" >&2; exit 2; }
done
[ -n "$out" ] || { echo "run-gpu-checks: name the OUT folder (run-gpu-checks.sh OUT [--minutes N] [--steps LIST] [--rehearsal] [--quick])" >&2; exit 2; }
[ -x "$here/bin/accel-info" ] || { echo "run-gpu-checks: $here/bin/accel-info missing: run this script from a bundle of tools/gpu-bundle.sh" >&2; exit 2; }
mkdir -p "$out" || exit 2
out=$(cd "$out" && pwd)
bin=$here/bin
summary=$out/summary.txt
start=$(date +%s)
deadline=$((start + minutes * 60))
failed=0
: >"$summary"

# verdict STEP pass|fail|skip DETAIL: one line of the summary (and the screen).
verdict() {
  local line
  line=$(printf '%-22s %-4s %s' "$1" "$2" "$3")
  echo "$line" >>"$summary"
  echo "== $line"
  [ "$2" != fail ] || failed=1
}
left() { echo $((deadline - $(date +%s))); }

# step NAME NEED LIMIT CMD...: runs CMD with its output in OUT/NAME.log,
# under `timeout` of at most LIMIT seconds and what is left of the budget;
# skipped when less than NEED seconds are left. Returns CMD's status (124
# timed out, 200 skipped). The caller turns the status into a verdict.
step() {
  local name=$1 need=$2 limit=$3 rest
  shift 3
  if [ -n "$steps" ] && [ "$name" != info ] && [[ ",$steps," != *",$name,"* && ",$steps," != *",${name%%.*},"* ]]; then
    verdict "$name" skip "not in --steps $steps"
    return 200
  fi
  rest=$(left)
  if [ "$rest" -lt "$need" ]; then
    verdict "$name" skip "time budget: ${rest} s of --minutes $minutes left, the step needs about ${need} s"
    return 200
  fi
  [ "$limit" -le "$rest" ] || limit=$rest
  echo "-- $name (at most ${limit} s): $*"
  local t0=$(date +%s)
  timeout --kill-after=10 "$limit" "$@" >"$out/$name.log" 2>&1
  local rc=$?
  echo "$name: exit $rc after $(( $(date +%s) - t0 )) s" >>"$out/times.txt"
  [ "$rc" -ne 124 ] && [ "$rc" -ne 137 ] || echo "run-gpu-checks: stopped after ${limit} s" >>"$out/$name.log"
  return $rc
}

# failing_cases LOG: the doctest cases of LOG with an ERROR, '|'-separated.
failing_cases() {
  awk '/^====/ { if (block ~ /ERROR:/) print name; block = ""; name = "" }
       /TEST CASE:/ { sub(/.*TEST CASE: +/, ""); name = $0 }
       { block = block "\n" $0 }
       END { if (block ~ /ERROR:/) print name }' "$1" | sort -u | head -n 6 | cut -c1-90 | paste -sd'|' -
}

# judge NAME STATUS: the verdict of a doctest program's step from its exit
# status and the last summary lines of its log.
judge() {
  local name=$1 rc=$2 log=$out/$1.log tail
  [ "$rc" -ne 200 ] || return 0
  tail=$(grep -E '^\[doctest\] (test cases|assertions):' "$log" | tr -s ' ' | paste -sd';' -)
  # A filter that matched nothing is no pass.
  [ "$rc" -ne 0 ] || ! grep -qE '^\[doctest\] test cases: +0 \|' "$log" || rc=1
  case $rc in
    0) verdict "$name" pass "${tail:-exit 0}" ;;
    77) verdict "$name" skip "$(grep -m1 -iE 'skip' "$log" | cut -c1-200)" ;;
    124|137) verdict "$name" fail "timed out (the budget's limit); $tail" ;;
    *) verdict "$name" fail "exit $rc; ${tail:-$(tail -n 1 "$log" | cut -c1-200)}; failing cases: $(failing_cases "$log")" ;;
  esac
}

# ---- 0. the machine: driver, libraries, private registrations -------------
facts=$out/facts.txt
{
  echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
  echo "host: $(hostname); $(uname -srm); $(nproc) cores; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
  [ -r /etc/os-release ] && echo "os: $(. /etc/os-release; echo "$PRETTY_NAME")"
  echo "bundle: $(head -n 1 "$here/MANIFEST.txt" 2>/dev/null)"
  echo "mode: $([ $rehearsal = 1 ] && echo rehearsal || echo gpu)$([ $quick = 1 ] && echo ', quick'); budget $minutes min"
} >"$facts"
# find_lib NAME DIR...: the first NAME in ldconfig's cache or in one of DIRs.
find_lib() {
  local name=$1 d
  shift
  d=$(ldconfig -p 2>/dev/null | awk -v n="$name" '$1 == n && /x86-64|x86_64/ {print $NF; exit}')
  [ -n "$d" ] && { echo "$d"; return; }
  for d in "$@"; do
    [ -e "$d/$name" ] && { echo "$d/$name"; return; }
  done
}
# PyTorch's Python: --python, else the first python3 on PATH that imports
# torch; `python` (the summaries, accel's side of mlp.wide) is that one, else
# the first python3.
torch_python="" tried=""
if [ -n "$python_arg" ]; then
  tried=$python_arg
  "$python_arg" -c 'import torch' 2>/dev/null && torch_python=$python_arg
else
  IFS=: read -ra path_dirs <<<"${PATH:-}"
  for d in "${path_dirs[@]}"; do
    [ -x "${d:-.}/python3" ] || continue
    case " $tried " in *" ${d:-.}/python3 "*) continue ;; esac
    tried="${tried:+$tried }${d:-.}/python3"
    "${d:-.}/python3" -c 'import torch' 2>/dev/null && { torch_python=${d:-.}/python3; break; }
  done
fi
python=${torch_python:-${python_arg:-$(command -v python3 || true)}}
echo "python: ${python:-none}; PyTorch: ${torch_python:-not importable by ${tried:-any python3 (none on PATH)}}" >>"$facts"
export OCL_ICD_VENDORS=$out/opencl-vendors  # only what is registered here
mkdir -p "$OCL_ICD_VENDORS"
# The Kokkos plugin, where the bundle carries one (gpu-bundle.sh --kokkos-root):
# its CUDA space on the GPU, its first host space in the rehearsal.
kokkos=""
if [ $rehearsal = 1 ]; then
  cuda=cuda opencl=opencl:pocl vulkan=vulkan:lavapipe
  [ -e "$here/lib/libaccel-backend-kokkos.so" ] && kokkos=kokkos:cpu
  export ACCEL_PLUGIN_PATH=$here/lib/emulated
  pocl=$(find_lib libpocl.so.2 /usr/lib/x86_64-linux-gnu)
  [ -n "$pocl" ] && echo "$pocl" >"$OCL_ICD_VENDORS/pocl.icd"
  icd=$(ls /usr/share/vulkan/icd.d/lvp_icd.*.json 2>/dev/null | head -n 1)
  gpu_found="rehearsal: no GPU asked for (cuda = the emulated CUDA runtime, opencl:pocl, vulkan:lavapipe)"
else
  cuda=cuda opencl=opencl:nvidia vulkan=vulkan:gpu
  [ -e "$here/lib/libaccel-backend-kokkos.so" ] && kokkos=kokkos:cuda
  # CUDA 13's runtime and cuBLAS: the system's, else the toolkit's or the
  # Python wheels' folders (PyTorch's nvidia packages), put on the path.
  py_nvidia=""
  [ -n "$python" ] && py_nvidia=$("$python" -c 'import nvidia, os; print(" ".join(p + s for p in nvidia.__path__ for s in ("/cu13/lib", "/cublas/lib", "/cuda_runtime/lib")))' 2>/dev/null)
  for lib in libcudart.so.13 libcublas.so.13 libcublasLt.so.13; do
    at=$(find_lib $lib /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib $py_nvidia)
    echo "$lib: ${at:-not found}" >>"$facts"
    if [ -n "$at" ] && ! ldconfig -p | grep -q "$at"; then
      case ":${LD_LIBRARY_PATH:-}:" in *":$(dirname "$at"):"*) ;; *) export LD_LIBRARY_PATH=$(dirname "$at")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} ;; esac
    fi
  done
  ocl=$(find_lib libnvidia-opencl.so.1 /usr/local/nvidia/lib64 /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/lib /lib)
  echo "libnvidia-opencl.so.1: ${ocl:-not found}" >>"$facts"
  [ -n "$ocl" ] && echo "$ocl" >"$OCL_ICD_VENDORS/nvidia.icd"
  icd=""
  for f in /usr/share/vulkan/icd.d/nvidia_icd*.json /etc/vulkan/icd.d/nvidia_icd*.json \
           /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd*.json /usr/local/share/vulkan/icd.d/nvidia_icd*.json; do
    [ -e "$f" ] && { icd=$f; break; }
  done
  gpu_found=$(nvidia-smi -L 2>&1 | head -n 4 | paste -sd';' -)
fi
if [ -n "${icd:-}" ]; then
  export VK_DRIVER_FILES=$icd VK_ICD_FILENAMES=$icd
  # The driver's own libraries (NVIDIA: libGLX_nvidia.so.0 needs glvnd's
  # libGLdispatch): the bundle's copies only for what the machine lacks.
  drv=$(sed -n 's/.*"library_path" *: *"\([^"]*\)".*/\1/p' "$icd")
  drv_at=$drv
  [[ "$drv" == /* ]] || drv_at=$(find_lib "$drv" /usr/local/nvidia/lib64 /usr/lib/x86_64-linux-gnu)
  lacking=$(ldd "$drv_at" 2>/dev/null | awk '/not found/ {print $1}' | paste -sd' ' -)
  if [ $rehearsal = 0 ]; then
    for l in libGLdispatch.so.0 libEGL.so.1; do
      [ -n "$(find_lib $l ${LD_LIBRARY_PATH//:/ })" ] || lacking="$lacking $l"
    done
    # glvnd's EGL finds NVIDIA's EGL driver through its vendor file.
    for f in /usr/share/glvnd/egl_vendor.d/10_nvidia.json /usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json; do
      [ -e "$f" ] && [ -z "${__EGL_VENDOR_LIBRARY_FILENAMES:-}" ] && export __EGL_VENDOR_LIBRARY_FILENAMES=$f
    done
    echo "EGL vendor file: ${__EGL_VENDOR_LIBRARY_FILENAMES:-none found}" >>"$facts"
  fi
  if [ -n "$lacking" ]; then
    echo "vulkan driver $drv_at: this machine lacks$lacking; the bundle's lib/fallback added to the path" >>"$facts"
    export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$here/lib/fallback
  fi
  echo "vulkan ICD: $icd (library ${drv_at:-$drv not found})" >>"$facts"
else
  echo "vulkan ICD: not found" >>"$facts"
fi
echo "OpenCL ICDs registered: $(cat "$OCL_ICD_VENDORS"/*.icd 2>/dev/null | paste -sd' ' -)" >>"$facts"
echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}" >>"$facts"
export POCL_CACHE_DIR=${POCL_CACHE_DIR:-$out/cache/pocl} ACCEL_CACHE_DIR=${ACCEL_CACHE_DIR:-$out/cache/accel}
if [ $rehearsal = 0 ] && ! nvidia-smi -L >/dev/null 2>&1; then
  verdict facts fail "no NVIDIA GPU: nvidia-smi: $gpu_found"
else
  verdict facts pass "$gpu_found; details in facts.txt"
fi

# A Kokkos built with CUDA initializes its CUDA space with its host spaces, so
# without the GPU (the rehearsal) none of them opens: its steps are skipped,
# saying why, rather than failed.
kokkos_why=""
if [ $rehearsal = 1 ] && [ -n "$kokkos" ] && ! ACCEL_BACKEND=$kokkos "$bin/accel-info" >"$out/info.kokkos.txt" 2>&1; then
  kokkos_why="$kokkos does not open here: $(grep -m1 -E '^ *kokkos: ' "$out/info.kokkos.txt" | sed 's/^ *//' | cut -c1-200)"
  echo "kokkos: $kokkos_why" >>"$facts"
  kokkos=""
fi
rm -f "$out/info.kokkos.txt"

# ---- 1. identity: accel-info, nvidia-smi -q --------------------------------
step info 10 60 "$bin/accel-info"
rc=$?
if [ $rc -ne 200 ]; then
  [ $rehearsal = 1 ] || nvidia-smi -q >"$out/nvidia-smi.txt" 2>&1
  missing="" opened=""
  for sel in $cuda $opencl $vulkan $kokkos; do
    if ACCEL_BACKEND=$sel "$bin/accel-info" >"$out/info.$sel.txt" 2>&1; then opened="$opened $sel"; else
      missing="$missing $sel ($(grep -m1 -E "^${sel%%:*}: " "$out/info.log" | cut -c1-200))"
      # The loader's own account of why (Vulkan, OpenCL ICD loader).
      VK_LOADER_DEBUG=all OCL_ICD_DEBUG=15 ACCEL_BACKEND=$sel "$bin/accel-info" >"$out/info.$sel.debug.log" 2>&1
      [ "${sel%%:*}" != vulkan ] || [ -z "${drv_at:-}" ] || ldd "$drv_at" >>"$out/info.$sel.debug.log" 2>&1
    fi
    rm -f "$out/info.$sel.txt"
  done
  same=$(grep -c 'SAME PHYSICAL DEVICE' "$out/info.log")
  # kokkos:cuda is the GPU cuda:0 is: its block of accel-info says so.
  kokkos_same=1
  [ $rehearsal = 1 ] || [ -z "$kokkos" ] ||
    awk '/^  \[/ { block = ($0 ~ /^  \[kokkos:cuda:0\]/) } block && /SAME PHYSICAL DEVICE/ { found = 1 } END { exit !found }' \
      "$out/info.log" || kokkos_same=0
  if [ $rc -ne 0 ]; then verdict info fail "accel-info exit $rc"
  elif [ -n "$missing" ]; then verdict info fail "cannot open:$missing"
  elif [ $rehearsal = 0 ] && [ "$same" -eq 0 ]; then
    verdict info fail "the GPU opens as$opened but accel-info flags no SAME PHYSICAL DEVICE (UUID/PCI id not matched)"
  elif [ "$kokkos_same" -eq 0 ]; then
    verdict info fail "kokkos:cuda opens but accel-info does not flag it as the same physical device as another backend's"
  else verdict info pass "opens$opened; SAME PHYSICAL DEVICE lines: $same"; fi
fi
available() { case " $opened " in *" $1 "*) return 0 ;; esac; return 1; }

# ---- 2. conformance --------------------------------------------------------
# Full sizes on a GPU; the rehearsal's CPU drivers take the small cases;
# --quick: every case at the smallest sizes.
conf_env=() conf_args=()
[ $rehearsal = 1 ] && conf_env=(ACCEL_TEST_MAX_WORK=$([ $quick = 1 ] && echo 20000 || echo 2000000))
[ $quick = 1 ] && conf_env=(ACCEL_TEST_MAX_WORK=20000)
for run in "$cuda native" "$cuda vendor" "$opencl auto" "$vulkan auto" ${kokkos:+"$kokkos auto"}; do
  set -- $run
  name=conformance.${1%%:*}$([ "$2" = auto ] || echo ".$2")
  if ! available "$1"; then verdict "$name" skip "$1 does not open (step info)"; continue; fi
  step "$name" 30 120 env ACCEL_BACKEND=$1 ACCEL_OP_PATH=$2 "${conf_env[@]}" "$bin/accel-conformance" "${conf_args[@]}"
  judge "$name" $?
done
[ -z "$kokkos_why" ] || verdict conformance.kokkos skip "$kokkos_why"

# ---- 3. compute-sanitizer on cuda, small sizes ------------------------------
sanitizer=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
for tool in memcheck racecheck synccheck; do
  if [ $rehearsal = 1 ]; then verdict sanitizer.$tool skip "rehearsal: compute-sanitizer needs an NVIDIA GPU"; continue; fi
  if [ -z "$sanitizer" ]; then verdict sanitizer.$tool skip "compute-sanitizer not found (CUDA toolkit's bin/)"; continue; fi
  if ! available $cuda; then verdict sanitizer.$tool skip "cuda does not open"; continue; fi
  step sanitizer.$tool 30 60 env ACCEL_BACKEND=$cuda ACCEL_TEST_MAX_WORK=100000 ACCEL_TEST_SEED=1 \
    "$sanitizer" --tool $tool --error-exitcode 99 "$bin/accel-conformance" "--test-case-exclude=*large*,*tall*,*2^25*"
  judge sanitizer.$tool $?
done

# ---- 4. accel-bench: the three APIs of one GPU side by side ------------------
# One run per op (each with every GPU backend), so that a run cut off by the
# budget keeps the ops measured before it.
gpus=""
for sel in $cuda $opencl $vulkan $kokkos; do available "$sel" && gpus=${gpus:+$gpus,}$sel; done
# stream: BabelStream's copy, mul, add, triad and dot at its default 2^25
# elements, in f32 and f64 (its default).
if [ $quick = 1 ]; then
  common=(--quick --dtypes f32,f16,bf16) add=() matmul=() dense=() stream=(--quick --dtypes f32,f64)
elif [ $rehearsal = 1 ]; then
  common=(--dtypes f32,f16,bf16 --repeats 2) add=(--add-sizes 1e6) matmul=(--matmul-sizes 256) dense=(--dense-shapes 256x1024x1024)
  stream=(--add-sizes 1e6 --dtypes f32,f64 --repeats 2)
else
  # add past 2^28 elements (3 GiB moved in f32); matmul and dense to 8192³.
  common=(--dtypes f32,f16,bf16 --repeats 3) add=(--add-sizes 268435456)
  matmul=(--matmul-sizes 2048,8192) dense=(--dense-shapes 256x4096x4096,8192x8192x8192)
  stream=(--add-sizes 33554432 --dtypes f32,f64 --repeats 3)
fi
# Tuning first, so that the bench rows below run with the records it writes
# (into the cache, OUT/cache/accel/tuning/ unless ACCEL_CACHE_DIR says otherwise,
# which the later steps read; and
# copied into OUT/tuning for the project's database). A device with nothing to
# tune (CUDA) is named so in the log.
if [ -z "$gpus" ]; then verdict tune skip "no GPU backend opens (step info)"; else
  if [ $quick = 1 ] || [ $rehearsal = 1 ]; then tune_args=(--quick --minutes 0.3); else tune_args=(--minutes 1.5); fi
  mkdir -p "$out/tuning"
  step tune 60 110 "$bin/accel-bench" tune --backends "$gpus" "${tune_args[@]}" --out "$out/tuning"
  rc=$?
  records=$(ls "$out/tuning" 2>/dev/null | paste -sd' ' -)
  case $rc in
    200) ;;
    0) verdict tune pass "records: ${records:-none (nothing to tune)}; tune.log" ;;
    124|137) verdict tune fail "timed out (records written so far: ${records:-none})" ;;
    *) verdict tune fail "exit $rc: $(grep -m2 -iE 'error|refused|fail' "$out/tune.log" | cut -c1-200 | paste -sd'|' -)" ;;
  esac
fi

bench_json=$out/bench.json
for op in matmul add dense stream; do
  if [ -z "$gpus" ]; then verdict bench.$op skip "no GPU backend opens (step info)"; continue; fi
  ops=$op run=("${common[@]}")
  case $op in
    add) op_sizes=("${add[@]}") ;; matmul) op_sizes=("${matmul[@]}") ;; dense) op_sizes=("${dense[@]}") ;;
    stream) ops=copy,scale,add,triad,dot op_sizes=() run=("${stream[@]}") ;;
  esac
  step bench.$op 40 110 "$bin/accel-bench" --backends "$gpus" --ops $ops "${op_sizes[@]}" "${run[@]}" --progress \
    --json "$out/bench.$op.json"
  rc=$?
  rows=$(grep -c '^\[' "$out/bench.$op.log" 2>/dev/null)
  case $rc in
    200) ;;
    0) verdict bench.$op pass "$gpus: $rows rows, each within the oracle's threshold; bench.$op.log" ;;
    124|137) verdict bench.$op fail "timed out after $rows rows (their figures in bench.$op.log)" ;;
    *) verdict bench.$op fail "exit $rc: $(grep -m2 -E 'FAIL|rror' "$out/bench.$op.log" | cut -c1-200 | paste -sd'|' -)" ;;
  esac
done
# Side by side: the runs merged into bench.json, and each other API of the
# GPU against cuda, row by row.
if [ -n "$python" ] && ls "$out"/bench.*.json >/dev/null 2>&1; then
  "$python" "$here/python/gpu_summary.py" merge "$out" "$out"/bench.{add,matmul,dense,stream}.json >"$out/merge.log" 2>&1
  for other in ${opencl%%:*} ${vulkan%%:*} ${kokkos%%:*}; do
    [ -s "$out/bench.$other.json" ] && [ -s "$out/bench.cuda.json" ] &&
      "$bin/accel-bench" compare --by op "$out/bench.cuda.json" "$out/bench.$other.json" >"$out/compare.cuda-vs-$other.txt" 2>&1
  done
fi

# ---- 5. training: losses agree across backends; the wide MLP ---------------
data=$here/share/breast_cancer.csv
mlp_backends=$gpus${gpus:+,}host
if [ -z "$gpus" ]; then verdict mlp skip "no GPU backend opens"; else
  step mlp 20 120 "$bin/mlp_train" --backends "$mlp_backends" --data "$data" --epochs $([ $quick = 1 ] && echo 5 || echo 200)
  rc=$?
  if [ $rc -ne 200 ]; then
    diff=$(grep -iE 'largest|difference' "$out/mlp.log" | tail -n 1 | cut -c1-200)
    if [ $rc -eq 0 ]; then verdict mlp pass "$mlp_backends: ${diff:-see mlp.log}"
    else verdict mlp fail "exit $rc: ${diff:-$(tail -n 1 "$out/mlp.log" | cut -c1-200)}"; fi
  fi
fi
# The articles' MLP (hidden 10) and the wide one (4096), each step eager and
# replayed as a graph, interleaved (accel-bench mlp --graph).
if [ -z "$gpus" ]; then verdict mlp.graph skip "no GPU backend opens"; else
  graph_args=(--hidden 10,4096 --batch 40 --epochs 20 --rounds 3)
  [ $quick = 1 ] && graph_args=(--hidden 10 --batch 40 --epochs 2 --rounds 1)
  step mlp.graph 30 150 "$bin/accel-bench" mlp --backends "$mlp_backends" --data "$data" "${graph_args[@]}" --graph --wide
  rc=$?
  if [ $rc -ne 200 ]; then
    lines=$(grep -E '^graph step on' "$out/mlp.graph.log" | cut -c1-110 | paste -sd'|' -)
    if [ $rc -eq 0 ]; then verdict mlp.graph pass "${lines:-see mlp.graph.log}"
    else verdict mlp.graph fail "exit $rc: $(grep -m2 -E 'FAIL|rror' "$out/mlp.graph.log" | cut -c1-200 | paste -sd'|' -)"; fi
  fi
fi
torch_device=cuda
[ $rehearsal = 1 ] && torch_device=cpu
if [ -z "$gpus" ]; then verdict mlp.wide skip "no GPU backend opens"
elif [ -z "$python" ]; then verdict mlp.wide skip "no python3 on this machine (mlp_vs_pytorch.py)"; else
  wide=(--hidden 4096 --batch 256 --epochs 10 --rounds 3)
  [ $quick = 1 ] && wide=(--hidden 64 --batch 64 --epochs 2 --rounds 1)
  [ $rehearsal = 1 ] && [ $quick = 0 ] && wide=(--hidden 1024 --batch 256 --epochs 2 --rounds 1)
  step mlp.wide 40 150 "$python" "$here/python/mlp_vs_pytorch.py" --bench "$bin/accel-bench" --backends "$gpus" \
    --data "$data" "${wide[@]}" --torch-device $torch_device --json "$out/mlp-wide.json"
  rc=$?
  case $rc in
    200) ;;
    0) if grep -q 'PyTorch is not installed' "$out/mlp.wide.log"; then
         verdict mlp.wide pass "accel's figures only: PyTorch is not importable by ${tried:-any python3}; mlp.wide.log"
       else verdict mlp.wide pass "$(grep -cE '^[0-9].* ok$' "$out/mlp.wide.log") rows whose final loss agrees with PyTorch's; mlp.wide.log"; fi ;;
    *) verdict mlp.wide fail "exit $rc: $(grep -m2 -E 'DIFF|FAIL|rror' "$out/mlp.wide.log" | cut -c1-200 | paste -sd'|' -)" ;;
  esac
fi

# ---- 6. the peer on the same GPU: PyTorch (cuBLAS) at the same sizes ---------
if [ -z "$python" ]; then verdict peer skip "no python3 on this machine"
elif [ -z "$torch_python" ]; then verdict peer skip "PyTorch is not importable by ${tried:-any python3} (--python PATH names one)"
elif [ ! -s "$bench_json" ]; then verdict peer skip "no bench.json (step bench)"
else
  step peer 30 120 "$python" "$here/python/ops_vs_pytorch.py" "$bench_json" --device $torch_device --json "$out/peer.json"
  rc=$?
  case $rc in
    200) ;;
    0) verdict peer pass "$(grep -c '"accel_over_pytorch"' "$out/peer.json" 2>/dev/null || echo 0) rows timed in PyTorch; peer.log" ;;
    *) verdict peer fail "exit $rc: $(tail -n 2 "$out/peer.log" | cut -c1-200 | paste -sd'|' -)" ;;
  esac
fi

# ---- 7. reliability on cuda -------------------------------------------------
if ! available $cuda; then verdict reliability skip "cuda does not open"; else
  rel_env=() rel_args=()
  [ $rehearsal = 1 ] && rel_env=(ACCEL_TEST_MAX_WORK=20000)
  [ $quick = 1 ] && rel_args=("--test-case=threads sharing one device? a stream each*")
  step reliability 30 90 env ACCEL_BACKEND=$cuda "${rel_env[@]}" "$bin/accel-reliability" "${rel_args[@]}"
  judge reliability $?
fi

# ---- 8. a program's own kernels and interop on cuda ---------------------------
# NVRTC (libnvrtc.so.13) is not in the bundle (100 MiB): where the machine
# lacks it, the kernel cases report skipped with the reason and the interop
# cases (memory, streams) still run.
if ! available $cuda; then verdict interop skip "cuda does not open"; else
  step interop 10 60 env ACCEL_BACKEND=$cuda "$bin/accel-interop-tests"
  judge interop $?
  step custom_kernel 10 60 "$bin/custom_kernel"
  rc=$?
  if [ $rc -ne 200 ]; then
    rows=$(grep -cE ' same$' "$out/custom_kernel.log")
    if [ $rc -eq 0 ]; then verdict custom_kernel pass "$rows launches bitwise equal to ops::add on every device"
    else verdict custom_kernel fail "exit $rc: $(grep -vE ' same$|skipped' "$out/custom_kernel.log" | tail -n 1 | cut -c1-200)"; fi
  fi
fi

# ---- the headline ratios ----------------------------------------------------
echo "total: $(( $(date +%s) - start )) s of --minutes $minutes" >>"$summary"
if [ -n "$python" ]; then
  "$python" "$here/python/gpu_summary.py" headline "$out" >>"$summary" 2>>"$out/headline.log" ||
    echo "headline: gpu_summary.py failed (headline.log)" >>"$summary"
fi
echo
cat "$summary"
exit $failed
