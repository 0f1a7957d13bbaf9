#!/usr/bin/env bash
# Plants known regressions in scratch copies of the kernels and checks that the harness fails each
# one (exit 1) naming the metric and, where the per-instruction metrics know it, the source line:
# a transpose loses its shared-memory padding (bank conflicts), the tiled GEMM loads its B tile
# column-wise (uncoalesced), the tiled GEMM keeps a row of A in registers (a register cliff), a
# vector add stages its inputs in a private array it indexes at run time (local memory), and the
# warp-uniform divergence kernel lets odd lanes run one iteration fewer (a divergent branch).
# Then two benign edits must pass (exit 0) with the change reported as drift: additions of zero in
# the vector add in a loop of run-time length (more registers, the same occupancy) and unrolled
# (more instructions in a memory-bound kernel, the same sectors). The committed baselines are the
# reference. Usage: ci/regression-drill.sh OUT_DIR [BUILD_DIR] [extra harness run options]
set -uo pipefail

out="${1:?usage: ci/regression-drill.sh OUT_DIR [BUILD_DIR] [harness run options]}"
build="$(cd "${2:-build}" && pwd)"
shift $(( $# >= 2 ? 2 : 1 ))
root="$(cd "$(dirname "$0")/.." && pwd)"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
status=0

# drill NAME SUITE VARIANT FILE SED_EXPRESSION EXPECTED_METRIC [harness run options]: must exit 1
# and name the metric. EXPECTED_METRIC may be "metric@file:line" to require the source line too.
# A NAME starting with "benign-" must instead exit 0 and report the metric as moved (drift).
drill() {
  local name="$1" suite="$2" variant="$3" file="$4" expression="$5" metric="$6"
  shift 6
  local line=""
  if [[ "$metric" == *@* ]]; then line="${metric#*@}"; metric="${metric%@*}"; fi
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
  if [[ "$name" == benign-* ]]; then
    if [ $rc -eq 0 ] && sed -n '/^moved, reported only/,/^$/p' "$out/$name.log" | grep -q " $metric: "; then
      echo "$name: exit 0, $metric moved and was reported, not failed (as expected)" | tee -a "$out/drill.txt"
    else
      echo "$name: exit $rc, expected 0 with $metric reported as moved" | tee -a "$out/drill.txt"
      status=1
    fi
    sed -n '/^moved, reported only/,/^$/p' "$out/$name.log" | head -6 | tee -a "$out/drill.txt"
  else
    if [ $rc -eq 1 ] && grep -q "$metric" "$out/$name.log" && { [ -z "$line" ] || grep "$metric" "$out/$name.log" | grep -q "$line"; }; then
      echo "$name: exit $rc, names $metric${line:+ at $line} (as expected)" | tee -a "$out/drill.txt"
    else
      echo "$name: exit $rc, expected 1 naming $metric${line:+ at $line}" | tee -a "$out/drill.txt"
      status=1
    fi
    grep -E "regress|cliff|->" "$out/$name.log" | head -8 | tee -a "$out/drill.txt"
  fi
  grep -E "^gated:" "$out/$name.log" | tee -a "$out/drill.txt"
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
drill local-array memory vector_add kernels/memory/vector_add.cu \
  's/    if (i < n) c\[i\] = a\[i\] + b\[i\];/    if (i < n) { float acc[16] = {}; for (int k = 0; k < 16; ++k) acc[(k * n) \& 15] += k == 0 ? a[i] : 0.0f; c[i] = acc[0] + b[i]; }/' \
  "local_sectors@vector_add.cu:9" "${extra[@]}"
drill divergent-branch divergence warp_uniform kernels/divergence/branch_warp_uniform.cu \
  's/        out\[i\] = even_path(in\[i\], iterations);/        out[i] = lane % 2 ? even_path(__sinf(in[i]) * 0.9f + 0.1f, iterations - 1) : even_path(in[i], iterations);/' \
  "divergent_branch_targets@.cu:" "${extra[@]}"
drill benign-registers memory vector_add kernels/memory/vector_add.cu \
  's/    if (i < n) c\[i\] = a\[i\] + b\[i\];/    if (i < n) { float s = a[i] + b[i]; for (int k = 0; k < (n \& 3) + 8; ++k) s += 0.0f; c[i] = s; }/' \
  registers "${extra[@]}"
drill benign-instructions memory vector_add kernels/memory/vector_add.cu \
  's/    if (i < n) c\[i\] = a\[i\] + b\[i\];/    if (i < n) { float s = a[i] + b[i]; for (int k = 0; k < 8; ++k) s += 0.0f; c[i] = s; }/' \
  instructions "${extra[@]}"
exit $status
