#!/usr/bin/env bash
# Installs the kernel exporters (Triton, cuTile with its tileiras compiler) at the versions pinned
# in ci/exporters-requirements.txt, from PyPI, into a virtual environment of their own:
# ${HARNESS_EXPORTERS_VENV:-<repository>/.venv-exporters}, apart from the tool's (.venv, nvdisasm),
# so that the tool's own dependencies stay small. No GPU or driver is needed: the exporters
# compile for the target their specs name. Idempotent: a venv that holds the pins already is left
# alone. Prints the time the install took.
# Usage: ci/install-exporters.sh            then  <venv>/bin/python ci/triton_export.py SPEC --reexport
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${HARNESS_EXPORTERS_VENV:-$root/.venv-exporters}"
requirements="$root/ci/exporters-requirements.txt"
python="${PYTHON:-python3}"
started=$SECONDS

if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv "$venv"
fi
# Every pin present at its version: nothing to do (pip would only say so, slower).
if ! "$venv/bin/python" - "$requirements" <<'PY'
import sys
from importlib import metadata
for line in open(sys.argv[1]):
    line = line.split("#")[0].strip()
    if not line:
        continue
    name, version = line.split("==")
    try:
        if metadata.version(name) != version:
            sys.exit(1)
    except metadata.PackageNotFoundError:
        sys.exit(1)
PY
then
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$requirements"
fi
"$venv/bin/python" -c 'import triton, cuda.tile; print(f"install-exporters: Triton {triton.__version__}, cuTile", cuda.tile.__version__)'
echo "install-exporters: $venv in $((SECONDS - started)) s"
