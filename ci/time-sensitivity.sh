#!/usr/bin/env bash
# How small a slowdown the time gate catches: plants a busy wait of D clock cycles per thread at the
# end of the tiled GEMM (nothing else about the kernel that is gated changes: no cliff, no extra
# sectors) for each D given, runs the gate against the committed baselines, and prints the
# measured change of the median and the verdict for every case of 50 us or more.
# Usage: ci/time-sensitivity.sh OUT_DIR BUILD_DIR DELAY... [-- extra harness run options]
set -uo pipefail
out="${1:?usage: ci/time-sensitivity.sh OUT_DIR BUILD_DIR DELAY... [-- options]}"
build="$(cd "${2:?build folder}" && pwd)"
shift 2
delays=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do delays+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
root="$(cd "$(dirname "$0")/.." && pwd)"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
for delay in "${delays[@]}"; do
  copy="$(mktemp -d)"
  cp -r "$root/kernels" "$root/suites" "$copy/"
  sed -i "s|    if (row < m \&\& col < n) c\[row \* n + col\] = sum;|    { const long long start = clock64(); while (clock64() - start < $delay) {} }\n    if (row < m \&\& col < n) c[row * n + col] = sum;|" \
    "$copy/kernels/gemm/gemm_smem_tiled.cu"
  (cd "$copy" && "$build/harness" run suites/gemm.yaml --variant tiled32 --no-profile --no-ci \
    --baseline-dir "$root/baselines" --out "$out/delay-$delay" "$@") >"$out/delay-$delay.log" 2>&1
  rc=$?
  # One line per tiled32 case: the median's move and whether it failed.
  python3 - "$out/delay-$delay/gemm/results.json" "$delay" "$rc" <<'PY'
import json, sys
results, delay, rc = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
for r in results["results"]:
    if r["variant"] != "tiled32": continue
    for v in r.get("verdicts", []):
        if v["metric"] != "time_median" or v.get("baseline") is None: continue
        if v["baseline"] < 50: continue
        change = 100.0 * (v["value"] - v["baseline"]) / v["baseline"]
        print(f"delay {delay:>6} cycles  {r['params_text']:<8} {v['baseline']:10.1f} -> {v['value']:10.1f} us  {change:+6.2f} %  {v['verdict']}  (run exit {rc})")
PY
  rm -rf "$copy"
done
