#!/usr/bin/env bash
# Every committed kernel export re-made on the CPU and compared with what is committed
# (docs/triton.md#ci, docs/cutile.md#ci): installs the pinned exporters (ci/install-exporters.sh),
# runs each spec's --reexport, then plants, in a copy of the exports, a stale export (its .py edited
# since), a hand-edited cubin (one instruction changed, its manifest's hash made to match, which the
# hash check alone passes) and a hand-edited manifest (a launch fact, an array's assumption), and
# checks that each fails and names its file. Needs nvdisasm (ci/install-nvdisasm.sh), no GPU.
# Prints the time of the install and of each export.
# Usage: ci/exports-check.sh [WORK_DIR]   (default build/exports-check)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="${1:-$root/build/exports-check}"
venv="${HARNESS_EXPORTERS_VENV:-$root/.venv-exporters}"
cd "$root"
if [ -z "${HARNESS_NVDISASM:-}" ] && [ -x .venv/bin/nvdisasm ]; then export HARNESS_NVDISASM="$PWD/.venv/bin/nvdisasm"; fi

started=$SECONDS
bash ci/install-exporters.sh
echo "exports-check: exporters installed in $((SECONDS - started)) s"
python="$venv/bin/python"

for spec in kernels/triton/export.json tests/kernels/triton/export.json kernels/cutile/export.json; do
  case "$spec" in */cutile/*) script=ci/cutile_export.py ;; *) script=ci/triton_export.py ;; esac
  at=$SECONDS
  "$python" "$script" "$spec" --reexport
  echo "exports-check: $spec re-exported and compared in $((SECONDS - at)) s"
done

# The plants, in a project of their own (a .git marker: the exporters keep their reads inside it).
rm -rf "$work"
mkdir -p "$work/.git" "$work/kernels"
cp -r kernels/triton kernels/cutile "$work/kernels/"

# plant_text_edit CUBIN MANIFEST: flips a bit of the first kernel's second instruction and writes the
# cubin's new SHA-256 into its manifest, as a hand edit that keeps the hashes consistent would.
plant_text_edit() {
  python3 - "$1" "$2" <<'PY'
import hashlib, json, struct, sys
cubin, manifest = sys.argv[1], sys.argv[2]
data = bytearray(open(cubin, "rb").read())
shoff, = struct.unpack_from("<Q", data, 0x28)
shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
headers = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
names = headers[shstrndx][4]
for h in headers:
    name = data[names + h[0]:data.index(b"\0", names + h[0])].decode()
    if name.startswith(".text."):
        data[h[4] + 0x10 + 2] ^= 0x01  # the second instruction's destination register
        break
open(cubin, "wb").write(data)
m = json.load(open(manifest))
m["cubin_sha256"] = hashlib.sha256(data).hexdigest()
json.dump(m, open(manifest, "w"), indent=2, sort_keys=True)
PY
}

# expect_failure NAME WHAT... -- COMMAND...: the command must exit 1 and print every WHAT.
expect_failure() {
  local name="$1" expected=()
  shift
  while [ "$1" != "--" ]; do expected+=("$1"); shift; done
  shift
  set +e
  "$@" >"$work/$name.log" 2>&1
  local status=$?
  set -e
  for text in "${expected[@]}"; do
    if [ "$status" -ne 1 ] || ! grep -qF -- "$text" "$work/$name.log"; then
      cat "$work/$name.log"
      echo "exports-check: $name: exit $status, expected 1 naming '$text'" >&2
      exit 1
    fi
  done
  echo "exports-check: $name fails as it must: $(grep -F -- "${expected[0]}" "$work/$name.log" | head -1)"
}

triton="$work/kernels/triton"
cutile="$work/kernels/cutile"
plant_text_edit "$triton/exported/softmax_rows_b1024.cubin" "$triton/exported/softmax_rows_b1024.json"
python3 ci/triton_export.py "$triton/export.json" --check --only softmax_rows_b1024 >/dev/null # the hashes agree
expect_failure triton-hand-edited-cubin \
  "$triton/exported/softmax_rows_b1024.cubin: section .text.softmax_rows differs" \
  "$triton/exported/softmax_rows_b1024.cubin: SASS: -" -- \
  "$python" ci/triton_export.py "$triton/export.json" --reexport --only softmax_rows_b1024
python3 - "$triton/exported/matmul_tiled_64x64x32.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["launch"]["shared"] = 16384
json.dump(m, open(sys.argv[1], "w"), indent=2, sort_keys=True)
PY
expect_failure triton-hand-edited-manifest \
  "$triton/exported/matmul_tiled_64x64x32.json: launch.shared is 16384, the export says 32768" -- \
  "$python" ci/triton_export.py "$triton/export.json" --reexport --only matmul_tiled_64x64x32
printf '\n# edited after the export\n' >>"$triton/matmul.py"
expect_failure triton-stale \
  "$triton/exported/matmul_tiled_128x128x32.json: source_sha256 is" -- \
  "$python" ci/triton_export.py "$triton/export.json" --reexport --only matmul_tiled_128x128x32

plant_text_edit "$cutile/exported/softmax_rows_t1024.cubin" "$cutile/exported/softmax_rows_t1024.json"
expect_failure cutile-hand-edited-cubin \
  "$cutile/exported/softmax_rows_t1024.cubin: section .text." \
  "$cutile/exported/softmax_rows_t1024.cubin: SASS: -" -- \
  "$python" ci/cutile_export.py "$cutile/export.json" --reexport --only softmax_rows_t1024
python3 - "$cutile/exported/matmul_tiled_64x64x32.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["parameters"][0]["base_addr_divisible_by"] = 1  # an assumption the cubin was not compiled for
json.dump(m, open(sys.argv[1], "w"), indent=2, sort_keys=True)
PY
expect_failure cutile-hand-edited-manifest \
  "$cutile/exported/matmul_tiled_64x64x32.json: parameters[0].base_addr_divisible_by is 1, the export says 16" -- \
  "$python" ci/cutile_export.py "$cutile/export.json" --reexport --only matmul_tiled_64x64x32
printf '\n# edited after the export\n' >>"$cutile/softmax.py"
expect_failure cutile-stale \
  "$cutile/exported/softmax_rows_t1024.json: source_sha256 is" -- \
  "$python" ci/cutile_export.py "$cutile/export.json" --reexport --only softmax_rows_t1024
echo "exports-check: every committed export is what its exporter makes, and every plant failed ($((SECONDS - started)) s)"
