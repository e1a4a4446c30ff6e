#!/usr/bin/env bash
# The op-support matrix of docs/ops/ (support.md, support.csv) against this
# build: regenerates it with `ACCEL_INFO --ops` and
#  - check (default): exit 0 when the committed files are the generated ones;
#    1 when they differ (stale), printing the differing lines and the command
#    that regenerates them; 77 (CTest's skip) when an implementation of the
#    committed matrix is not available here (e.g. Intel's OpenCL runtime not
#    installed), naming it and why, as the rest cannot be judged complete;
#  - --update: writes the generated files over the committed ones, refusing
#    to drop an implementation the committed matrix has.
# Usage: check_op_support.sh ACCEL_INFO DOCS_OPS_FOLDER [--update]
# The environment (the build's private OpenCL vendors folder, the emulated
# CUDA and HIP plugins, lavapipe only) comes from tests/op_support/CMakeLists.txt.
set -u
if [ $# -lt 2 ] || [ $# -gt 3 ] || { [ $# -eq 3 ] && [ "$3" != --update ]; }; then
  echo "usage: $0 ACCEL_INFO DOCS_OPS_FOLDER [--update]" >&2
  exit 2
fi
info=$1 docs=$2 mode=${3:-check}
# The defaults, whatever the caller's shell has: another CBLAS changes the
# host's vendor cells, injected faults the emulated devices.
unset ACCEL_HOST_BLAS ACCEL_CUDA_EMULATION_FAULTS ACCEL_HIP_EMULATION_FAULTS ACCEL_BACKEND
regenerate='cmake --build --preset release --target update-op-support'
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for format in csv md; do
  "$info" --ops --format "$format" >"$work/support.$format" 2>"$work/notes.$format"
  rc=$?
  # 1: a device could not be opened (named on stderr; its column is missing).
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ]; then
    cat "$work/notes.$format"
    echo "FAILED: $info --ops --format $format exited $rc"
    exit 1
  fi
done

# The implementations (the CSV's first field; selectors have no commas).
implementations() { [ -f "$1" ] && tail -n +2 "$1" | cut -d, -f1 | sort -u; }
missing=$(comm -23 <(implementations "$docs/support.csv") <(implementations "$work/support.csv"))
why_missing() {
  echo "  not here: $(echo $missing) (accel-info --ops does not list it: not installed or registered, its backend"
  echo "  not built or unavailable; tools/install-deps.sh --opencl-runtimes installs Intel's runtime and Oclgrind)"
  sed 's/^/  /' "$work/notes.csv"
}

if [ "$mode" = --update ]; then
  if [ -n "$missing" ]; then
    echo "FAILED: not written: the committed matrix has implementations this machine lacks, which regenerating would drop:"
    why_missing
    echo "Regenerate where they are installed (tools/install-deps.sh --opencl-runtimes), or delete"
    echo "$docs/support.md and .csv first to drop them."
    exit 1
  fi
  mkdir -p "$docs"
  for format in md csv; do
    if cmp -s "$work/support.$format" "$docs/support.$format"; then
      echo "unchanged: $docs/support.$format"
    else
      cp "$work/support.$format" "$docs/support.$format" && echo "written: $docs/support.$format"
    fi
  done
  exit 0
fi

stale=0
for format in md csv; do
  cmp -s "$work/support.$format" "$docs/support.$format" || stale=1
done
if [ "$stale" -eq 0 ]; then
  echo "up to date: $docs/support.md and support.csv ($(implementations "$work/support.csv" | wc -l) implementations)"
  exit 0
fi
if [ -n "$missing" ]; then
  echo "SKIPPED: the committed matrix has implementations this machine lacks, so it cannot be compared whole:"
  why_missing
  # The columns both have, for information only.
  keep=$(comm -12 <(implementations "$docs/support.csv") <(implementations "$work/support.csv") | sed 's/\./\\./g' |
    tr '\n' '|')
  filter() { grep -E "^(implementation,|(${keep%|}),)" "$1"; }
  if ! diff -q <(filter "$docs/support.csv") <(filter "$work/support.csv") >/dev/null; then
    echo "The implementations both have differ too (- committed, + generated):"
    diff -u --label committed --label generated <(filter "$docs/support.csv") <(filter "$work/support.csv") | tail -n +3
  fi
  exit 77
fi
echo "FAILED: the committed op-support matrix is stale; differing lines (- committed, + generated):"
for format in md csv; do
  diff -u --label "committed $docs/support.$format" --label "generated" "$docs/support.$format" "$work/support.$format"
done
sed 's/^/note: /' "$work/notes.csv"
echo "Regenerate it: $regenerate"
exit 1
