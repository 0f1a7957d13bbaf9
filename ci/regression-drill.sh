#!/usr/bin/env bash
# Plants three known regressions in scratch copies of the kernels and checks that the harness
# fails each one (exit 1) naming the metric: a transpose loses its shared-memory padding (bank
# conflicts), the tiled GEMM loads its B tile column-wise (uncoalesced), the tiled GEMM keeps a row
# of A in registers (a register cliff). The committed baselines are the reference.
# Usage: ci/regression-drill.sh OUT_DIR [BUILD_DIR] [extra harness run options, e.g. --static]
set -uo pipefail

out="${1:?usage: ci/regression-drill.sh OUT_DIR [BUILD_DIR] [harness run options]}"
build="$(cd "${2:-build}" && pwd)"
shift $(( $# >= 2 ? 2 : 1 ))
root="$(cd "$(dirname "$0")/.." && pwd)"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
status=0

# drill NAME SUITE VARIANT FILE SED_EXPRESSION EXPECTED_METRIC [harness run options]
drill() {
  local name="$1" suite="$2" variant="$3" file="$4" expression="$5" metric="$6"
  shift 6
  local copy
  copy="$(mktemp -d)"
  cp -r "$root/kernels" "$root/suites" "$copy/"
  sed -i -e "$expression" "$copy/$file"
  if cmp -s "$root/$file" "$copy/$file"; then
    echo "$name: the change did not apply to $file" | tee -a "$out/drill.txt"
    status=2
    return
  fi
  diff -u "$root/$file" "$copy/$file" >"$out/$name.diff"
  # From inside the copy, so reports name source lines as a run in the repository would.
  (cd "$copy" && "$build/harness" run "suites/$suite.yaml" --variant "$variant" --baseline-dir "$root/baselines" \
    --out "$out/$name" "$@") >"$out/$name.log" 2>&1
  local rc=$?
  if [ $rc -eq 1 ] && grep -q "$metric" "$out/$name.log"; then
    echo "$name: exit $rc, names $metric (as expected)" | tee -a "$out/drill.txt"
  else
    echo "$name: exit $rc, expected 1 naming $metric" | tee -a "$out/drill.txt"
    status=1
  fi
  grep -E "regress|cliff|->" "$out/$name.log" | head -8 | tee -a "$out/drill.txt"
  rm -rf "$copy"
}

extra=("$@")
drill transpose-no-padding transpose smem_padded kernels/transpose/transpose_smem_padded.cu \
  's/__shared__ float tile\[TILE\]\[TILE + 1\];/__shared__ float tile[TILE][TILE];/' \
  excess_shared_wavefronts "${extra[@]}"
drill gemm-uncoalesced-b gemm tiled16 kernels/gemm/gemm_smem_tiled.cu \
  's/b_tile\[ty\]\[tx\] = (t + ty < k \&\& col < n) ? b\[(t + ty) \* n + col\] : 0.0f;/b_tile[tx][ty] = (t + tx < k \&\& blockIdx.x * TILE + ty < n) ? b[(t + tx) * n + blockIdx.x * TILE + ty] : 0.0f;/' \
  excess_global_sectors "${extra[@]}"
drill gemm-register-cliff gemm tiled16 kernels/gemm/gemm_smem_tiled.cu \
  's/for (int i = 0; i < TILE; ++i) sum += a_tile\[ty\]\[i\] \* b_tile\[i\]\[tx\];/{ float a_row[TILE]; _Pragma("unroll") for (int i = 0; i < TILE; ++i) a_row[i] = a_tile[ty][i]; __syncthreads(); _Pragma("unroll") for (int i = 0; i < TILE; ++i) sum += a_row[i] * b_tile[i][tx]; }/' \
  registers "${extra[@]}"
exit $status
