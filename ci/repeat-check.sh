#!/usr/bin/env bash
# Runs every suite (or the suites given) several times in a row on a GPU machine against the
# committed baselines, then checks two things: no run regressed or failed (a clean tree never
# fails CI), and every exact figure repeated in every run (`harness stability`).
# Usage: ci/repeat-check.sh ROUNDS OUT_DIR [BUILD_DIR] [-- SUITE.yaml... [harness run options]]
# e.g.   ci/repeat-check.sh 10 /tmp/repeat build -- suites/*.yaml --budget 0.05
# Exit status: 0 when every run exited 0 and every exact figure repeated, 1 otherwise.
set -uo pipefail

rounds="${1:?usage: ci/repeat-check.sh ROUNDS OUT_DIR [BUILD_DIR] [-- SUITE.yaml... [options]]}"
out="${2:?usage: ci/repeat-check.sh ROUNDS OUT_DIR [BUILD_DIR] [-- SUITE.yaml... [options]]}"
shift
# shellcheck source=ci/suite-arguments.sh
source "$(dirname "$0")/suite-arguments.sh"
read_suite_arguments "$@"
export HARNESS_CACHE_DIR="${HARNESS_CACHE_DIR:-$out/kernel-cache}"

status=0
: >"$out/exits.txt"
for ((k = 1; k <= rounds; k++)); do
  start=$(date +%s)
  for suite in "${suites[@]}"; do
    name="$(basename "$suite" .yaml)"
    (cd "$root" && "$build/harness" run "$suite" --out "$out/run$k" "${options[@]}") >"$out/run$k-$name.log" 2>&1
    rc=$?
    echo "run $k $name: exit $rc" >>"$out/exits.txt"
    [ $rc -eq 0 ] || status=1
  done
  echo "run $k: $(( $(date +%s) - start )) s, $(grep -c "^run $k .*exit [^0]" "$out/exits.txt") suites exited non-zero"
done

for suite in "${suites[@]}"; do
  name="$(basename "$suite" .yaml)"
  files=()
  for ((k = 1; k <= rounds; k++)); do
    [ -f "$out/run$k/$name/results.json" ] && files+=("$out/run$k/$name/results.json")
  done
  if ((${#files[@]} < 2)); then
    echo "$name: fewer than two results to compare" | tee -a "$out/stability.txt"
    status=1
    continue
  fi
  "$build/harness" stability "${files[@]}" >>"$out/stability.txt" 2>&1 || status=1
done
grep -E "^[a-z_]+: [0-9]+ runs|^exact:" "$out/stability.txt"
echo "non-zero exits: $(grep -vc 'exit 0$' "$out/exits.txt") of $(wc -l <"$out/exits.txt") runs"
exit $status
