#!/usr/bin/env bash
# Installs NVIDIA's nvdisasm, which the static tier runs to count a cubin's SASS (docs/sass.md),
# from the nvidia-cuda-nvdisasm package on PyPI into a virtual environment of the project's:
# ${HARNESS_VENV:-<repository>/.venv}, with the program linked as <venv>/bin/nvdisasm. The harness
# finds it there when the environment is active ($VIRTUAL_ENV), through PATH, or through
# HARNESS_NVDISASM=<venv>/bin/nvdisasm. Skipped when the CUDA install already has nvdisasm.
# Idempotent. Usage: ci/install-nvdisasm.sh [--force]  (--force: install even beside the toolkit's)
set -euo pipefail

# Pinned: the oldest release on PyPI (there is no 13.0 one); it reads the sm_80 and sm_90 cubins
# that NVRTC 13.0 builds.
version="13.2.86"

force=0
case "${1:-}" in
  --force) force=1 ;;
  "") ;;
  *) echo "usage: ci/install-nvdisasm.sh [--force]" >&2; exit 2 ;;
esac

cuda="${CUDA_HOME:-/usr/local/cuda}"
if ((!force)) && [ -x "$cuda/bin/nvdisasm" ]; then
  echo "install-nvdisasm: $cuda/bin/nvdisasm is present; nothing to install"
  exit 0
fi

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${HARNESS_VENV:-$root/.venv}"
python="${PYTHON:-python3}"
if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv "$venv"
fi
installed="$("$venv/bin/python" -m pip show nvidia-cuda-nvdisasm 2>/dev/null | sed -n "s/^Version: //p" || true)"
if [ "$installed" != "$version" ]; then
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "nvidia-cuda-nvdisasm==$version"
fi
program="$("$venv/bin/python" - <<'PY'
import pathlib, sys
import nvidia
for base in map(pathlib.Path, nvidia.__path__):
    for found in sorted(base.glob("*/bin/nvdisasm")):
        print(found)
        sys.exit(0)
sys.exit("install-nvdisasm: the package holds no bin/nvdisasm")
PY
)"
ln -sf "$program" "$venv/bin/nvdisasm"
"$venv/bin/nvdisasm" --version | tail -1
echo "install-nvdisasm: $venv/bin/nvdisasm (set HARNESS_NVDISASM to it, or activate $venv)"
