#!/usr/bin/env bash
# Runs every unit test (the GPU tests first) and every suite on a GPU machine; logs and reports go to the folder given
# as the first argument. Usage: ci/gpu-check.sh OUT_DIR [BUILD_DIR] [-- RUN_OPTIONS...]
# RUN_OPTIONS go to every `harness run`, e.g. `-- --counter-cache` to reuse exact counters kept in
# $HARNESS_CACHE_DIR by an earlier check (restore that folder between CI jobs).
# Every suite runs in one `harness run`; its log (suites.log) is split into <suite>.log, and
# summary.txt has each suite's verdict line and where its time went.
# Exit status: 0 when everything passed, else the first failing step's status.
set -uo pipefail

out="${1:?usage: ci/gpu-check.sh OUT_DIR [BUILD_DIR] [-- RUN_OPTIONS...]}"
shift
build=build
if [ $# -gt 0 ] && [ "$1" != "--" ]; then build="$1"; shift; fi
[ $# -gt 0 ] && [ "$1" = "--" ] && shift
run_options=("$@")
root="$(cd "$(dirname "$0")/.." && pwd)"
mkdir -p "$out"
export HARNESS_CACHE_DIR="${HARNESS_CACHE_DIR:-$out/kernel-cache}"
status=0

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv >"$out/gpu.txt" 2>&1 || true

# The GPU test programs run directly, so a build copied from another machine works too; its
# nvcc-built test modules are found beside the programs.
if [ -d "$build/test-modules" ] && [ -z "${HARNESS_TEST_MODULE_DIR:-}" ]; then
  HARNESS_TEST_MODULE_DIR="$(cd "$build/test-modules" && pwd)"
  export HARNESS_TEST_MODULE_DIR
fi
# Every unit test program, not only the GPU-labelled ones: a GPU, 16 cores and another OS change
# what some CPU code paths see (parallel compiles, the driver's presence). The GPU tests first.
start=$(date +%s.%N)
failed_programs=()
for t in "$build"/*gpu*_test "$build"/*_test; do
  [ -x "$t" ] || continue
  name="$(basename "$t")"
  [ -e "$out/$name.xml" ] && continue # a GPU test program, already run
  # A program that hangs fails, and the check goes on.
  if ! (cd "$root" && timeout "${HARNESS_TEST_TIMEOUT:-300}" "$t" --gtest_output="xml:$out/$name.xml") \
    >>"$out/unit-tests.log" 2>&1; then
    failed_programs+=("$name")
    [ $status -ne 0 ] || status=1
  fi
done
tests=$(cat "$out"/*_test.xml 2>/dev/null | grep -c '<testcase ' || true)
failures=$(cat "$out"/*_test.xml 2>/dev/null | grep -c '<failure' || true)
echo "unit tests: exit $status, $tests tests, $failures failures${failed_programs:+ in ${failed_programs[*]}}, $(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s" | tee -a "$out/summary.txt"

# Every suite in one run: the GPU is probed once. Its log is split into one log per suite.
start=$(date +%s.%N)
(cd "$root" && "$build/harness" run "$root"/suites/*.yaml --out "$out/reports" "${run_options[@]}") >"$out/suites.log" 2>&1
rc=$?
seconds=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
awk -v dir="$out" '/^harness: suite [^ ]+ on / { file = dir "/" $3 ".log" } file { print > file }' "$out/suites.log"
grep -E '^[A-Za-z0-9_.-]+: [0-9]+ passed, ' "$out/suites.log" | while IFS= read -r verdict; do
  name="${verdict%%:*}"
  echo "$verdict; $(grep -E '^  case time: ' "$out/$name.log" 2>/dev/null | sed 's/^  //')" | tee -a "$out/summary.txt"
done
echo "suites: exit $rc, ${seconds} s" | tee -a "$out/summary.txt"
[ $rc -eq 0 ] || [ $status -ne 0 ] || status=$rc
exit $status
