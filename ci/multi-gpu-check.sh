#!/usr/bin/env bash
# How the check scales with the GPUs of a host: every suite given (default: all) with `--device 0`
# and with `--devices all`, with an empty counter cache (--fresh-counters) and a warm one, one
# pair after the other on the same host, then once more spread over the GPUs with no recorded case
# costs (the model alone). Exact figures of each pair must be identical (`harness stability`).
# Usage: ci/multi-gpu-check.sh OUT_DIR [BUILD_DIR] [-- SUITE.yaml... [harness run options]]
# Exit status: 0 when every run exited 0 and every pair's exact figures were identical.
set -uo pipefail

out="${1:?usage: ci/multi-gpu-check.sh OUT_DIR [BUILD_DIR] [-- SUITE.yaml... [options]]}"
# shellcheck source=ci/suite-arguments.sh
source "$(dirname "$0")/suite-arguments.sh"
read_suite_arguments "$@"
export HARNESS_CACHE_DIR="$out/kernel-cache"
status=0

nvidia-smi --query-gpu=index,name --format=csv,noheader >"$out/gpus.txt" 2>&1 || true
echo "GPUs: $(wc -l <"$out/gpus.txt"), $(head -1 "$out/gpus.txt")" | tee "$out/summary.txt"
# The kernels compiled once beforehand, so that no timed run pays for compilation alone.
(cd "$root" && "$build/harness" run --static "${suites[@]}" --out "$out/static") >"$out/static.log" 2>&1

seconds_of=()
run() { # NAME OPTIONS...: one timed run of every suite
  local name="$1"
  shift
  local start
  start=$(date +%s.%N)
  (cd "$root" && "$build/harness" run "${suites[@]}" --counter-cache --out "$out/$name" "${options[@]}" "$@") \
    >"$out/$name.log" 2>&1
  local rc=$?
  local seconds
  seconds=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  echo "$name: exit $rc, $seconds s" | tee -a "$out/summary.txt"
  grep -E "^  cases spread over|^  reference outputs computed again" "$out/$name.log" | sort -u | head -3 >>"$out/summary.txt"
  [ $rc -eq 0 ] || status=1
  seconds_of+=("$seconds")
}
identical() { # A B: every exact figure of each suite equal in the two runs
  for suite in "${suites[@]}"; do
    local name
    name="$(basename "$suite" .yaml)"
    if ! "$build/harness" stability "$out/$1/$name/results.json" "$out/$2/$name/results.json" \
      >"$out/stability-$1-$2-$name.txt" 2>&1; then
      echo "  $name: exact figures differ between $1 and $2 (stability-$1-$2-$name.txt)" | tee -a "$out/summary.txt"
      status=1
    fi
  done
  echo "  $1 / $2: $(cat "$out"/stability-"$1"-"$2"-*.txt | grep -ohE '[0-9]+ figures, identical' | awk '{ n += $1 } END { print n + 0 }') exact figures identical" | tee -a "$out/summary.txt"
}
speedup() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2fx", a / b }'; }

run cold-one --device 0 --fresh-counters
run cold-all --devices all --fresh-counters
identical cold-one cold-all
run warm-one --device 0
run warm-all --devices all
identical warm-one warm-all
rm -rf "$HARNESS_CACHE_DIR/case-costs"
run cold-all-modelled --devices all --fresh-counters
echo "speed-up, empty counter cache: $(speedup "${seconds_of[0]}" "${seconds_of[1]}"); warm: $(speedup "${seconds_of[2]}" "${seconds_of[3]}"); empty, costs modelled: $(speedup "${seconds_of[0]}" "${seconds_of[4]}")" | tee -a "$out/summary.txt"
exit $status
