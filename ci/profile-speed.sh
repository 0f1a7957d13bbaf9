#!/usr/bin/env bash
# Profiling wall time of the harness next to Nsight Compute's for the same cases, on one GPU
# machine: ncu with the harness's counter set alone, and with the per-instruction figures the
# harness also gives (--section SourceCounters plus the SASS sector and wavefront ideals).
# Usage: ci/profile-speed.sh OUT_DIR [BUILD_DIR] -- SUITE.yaml...
# Prints one line per suite: harness profiling with fresh counters and with a warm counter
# cache (the run's own profiling note), then ncu's wall time less that of the same unprofiled run.
set -uo pipefail

out="${1:?usage: ci/profile-speed.sh OUT_DIR [BUILD_DIR] -- SUITE.yaml...}"
shift
build=build
if [ $# -gt 0 ] && [ "$1" != "--" ]; then build="$1"; shift; fi
[ $# -gt 0 ] && [ "$1" = "--" ] && shift
[ $# -gt 0 ] || { echo "usage: ci/profile-speed.sh OUT_DIR [BUILD_DIR] -- SUITE.yaml..." >&2; exit 2; }
mkdir -p "$out"
export HARNESS_CACHE_DIR="${HARNESS_CACHE_DIR:-$out/kernel-cache}"

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
# The seconds of a run's "profiling: <s> for <n> cases" note.
profiling_seconds() { sed -n 's/^  profiling: \([0-9.]*\) s for .*/\1/p' "$1" | head -1; }

counters="$("$build/harness" crosscheck --ncu-metrics)"
sass_ideals="smsp__sass_sectors_mem_global.sum,smsp__sass_sectors_mem_global_ideal.sum"
sass_ideals+=",smsp__sass_l1tex_pipe_lsu_wavefronts_mem_shared.sum,smsp__sass_l1tex_pipe_lsu_wavefronts_mem_shared_ideal.sum"

ncu_run() { # ncu_run LOG SUITE NCU_OPTIONS...: ncu over one unprofiled run of each case
  local log="$1" suite="$2"
  shift 2
  ncu --csv --page raw --nvtx --print-nvtx-rename kernel --cache-control all --clock-control none \
      --replay-mode kernel --profile-from-start off "$@" "$build/harness" run "$suite" --external-profiler --out "$out/external" \
      >"$log.csv" 2>"$log.log"
}

printf '%-16s %12s %12s %12s %12s %14s\n' suite "fresh" "warm cache" "unprofiled" "ncu counters" "ncu + source"
for suite in "$@"; do
  name="$(basename "$suite" .yaml)"
  "$build/harness" run "$suite" --budget 0.1 --counter-cache --fresh-counters --out "$out/fresh" \
    >"$out/$name-fresh.log" 2>&1
  "$build/harness" run "$suite" --budget 0.1 --counter-cache --out "$out/warm" >"$out/$name-warm.log" 2>&1
  start=$(now)
  "$build/harness" run "$suite" --external-profiler --out "$out/external" >"$out/$name-unprofiled.log" 2>&1
  unprofiled=$(since "$start")
  start=$(now)
  ncu_run "$out/$name-ncu" "$suite" --metrics "$counters"
  ncu_counters=$(since "$start")
  start=$(now)
  ncu_run "$out/$name-ncu-source" "$suite" --section SourceCounters --metrics "$counters,$sass_ideals"
  ncu_source=$(since "$start")
  printf '%-16s %10s s %10s s %10s s %10s s %12s s\n' "$name" "$(profiling_seconds "$out/$name-fresh.log")" \
    "$(profiling_seconds "$out/$name-warm.log")" "$unprofiled" \
    "$(awk -v a="$ncu_counters" -v b="$unprofiled" 'BEGIN { printf "%.1f", a - b }')" \
    "$(awk -v a="$ncu_source" -v b="$unprofiled" 'BEGIN { printf "%.1f", a - b }')" | tee -a "$out/profile-speed.txt"
done
