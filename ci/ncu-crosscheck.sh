#!/usr/bin/env bash
# Runs a suite twice on a GPU machine - once profiled by the harness, once under Nsight Compute
# with the same metric names - and prints both side by side (`harness crosscheck`).
# Usage: ci/ncu-crosscheck.sh SUITE.yaml OUT_DIR [BUILD_DIR]   (NCU_TIME_RUNS: ncu runs for times, default 3)
# Exit status: 0 when every figure is equal (counters) or within tolerance (DRAM 2 %, occupancy
# 5 points), 1 when one differs, other values when a step failed.
set -euo pipefail

suite="${1:?usage: ci/ncu-crosscheck.sh SUITE.yaml OUT_DIR [BUILD_DIR]}"
out="${2:?usage: ci/ncu-crosscheck.sh SUITE.yaml OUT_DIR [BUILD_DIR]}"
build="${3:-build}"
name="$(basename "$suite" .yaml)"
mkdir -p "$out"

# Ours: the normal profiled run (cold L2 before each profiled launch, like ncu's cache control).
"$build/harness" run "$suite" --out "$out/harness" --budget 0.1 >"$out/$name-harness.log" 2>&1 || true

# Theirs: each case exactly once inside its NVTX range; ncu names each kernel after that range.
# ncu flushes and invalidates the caches before each kernel (the harness cools the L2 with a read
# sweep); it does not lock clocks, as the harness does not. --external-profiler runs each case once
# unprofiled first and brackets the second run with cuProfilerStart/Stop: with --profile-from-start
# off, ncu profiles warm kernels, as the harness times them.
ncu_run() {
  ncu --csv --page raw --print-units base --nvtx --print-nvtx-rename kernel --profile-from-start off \
      --cache-control all --clock-control none --replay-mode kernel --metrics "$1" \
      "$build/harness" run "$suite" --external-profiler --out "$out/external"
}
ncu_run "$("$build/harness" crosscheck --ncu-metrics)" >"$out/$name-ncu.csv" 2>"$out/$name-ncu.log"
# DRAM traffic again in a run of its own: with several passes ncu saves and restores memory around
# each kernel and its DRAM writes come out about 2.3 MB higher on an H100 (even for kernels that
# only read); a single pass restores nothing, as the harness's profiling restores nothing but the
# case's own inputs before it empties the L2.
ncu_run "$("$build/harness" crosscheck --ncu-dram-metrics)" >"$out/$name-ncu-dram.csv" 2>"$out/$name-ncu-dram.log"

# Time medians next to ncu's gpu__time_duration (printed, not failed). Durations come from runs
# that collect that one counter, as the harness's timer does: other counters in the same pass make
# a short kernel slower. ncu takes one sample per kernel and run, so it runs NCU_TIME_RUNS times
# (default 3) and each case is compared with the median of its runs.
time_files=()
for run in $(seq 1 "${NCU_TIME_RUNS:-3}"); do
  ncu_run gpu__time_duration.sum >"$out/$name-ncu-time$run.csv" 2>"$out/$name-ncu-time$run.log"
  time_files+=(--ncu "$out/$name-ncu-time$run.csv")
done
"$build/harness" crosscheck --times "${time_files[@]}" "$out/harness/$name/results.json" \
  >"$out/$name-times.txt" || true

"$build/harness" crosscheck --ncu "$out/$name-ncu.csv" --ncu "$out/$name-ncu-dram.csv" \
  "$out/harness/$name/results.json" | tee "$out/$name-crosscheck.txt"
