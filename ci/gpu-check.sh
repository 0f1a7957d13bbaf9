#!/usr/bin/env bash
# Runs the GPU tests and every suite on a GPU machine; logs and reports go to the folder given
# as the first argument. Usage: ci/gpu-check.sh OUT_DIR [BUILD_DIR]
# Exit status: 0 when everything passed, else the first failing step's status.
set -uo pipefail

out="${1:?usage: ci/gpu-check.sh OUT_DIR [BUILD_DIR]}"
build="${2:-build}"
root="$(cd "$(dirname "$0")/.." && pwd)"
mkdir -p "$out"
export HARNESS_CACHE_DIR="${HARNESS_CACHE_DIR:-$out/kernel-cache}"
status=0

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv >"$out/gpu.txt" 2>&1 || true

# The GPU test programs run directly, so a build copied from another machine works too.
for t in "$build"/*gpu*_test; do
  [ -x "$t" ] || continue
  (cd "$root" && "$t" --gtest_output="xml:$out/$(basename "$t").xml") >>"$out/gpu-tests.log" 2>&1 || status=$?
done

for suite in "$root"/suites/*.yaml; do
  name="$(basename "$suite" .yaml)"
  (cd "$root" && "$build/harness" run "$suite" --out "$out/reports") >"$out/$name.log" 2>&1
  rc=$?
  echo "$name: exit $rc" | tee -a "$out/summary.txt"
  [ $rc -eq 0 ] || [ $status -ne 0 ] || status=$rc
done
exit $status
