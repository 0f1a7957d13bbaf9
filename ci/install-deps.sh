#!/usr/bin/env bash
# Installs what building and testing the harness needs on Debian / Ubuntu.
# Idempotent: packages already present are left alone. The CUDA Toolkit itself
# (nvcc, NVRTC, CUPTI, NVTX headers) is expected under ${CUDA_HOME:-/usr/local/cuda}.
# Usage: ci/install-deps.sh [--tool]
#   --tool: only what building the tool needs (a CI job that builds it to run suites, as the
#           templates in ci/github and ci/gitlab do), none of the tests' and checks' packages.
set -euo pipefail

tool_only=0
case "${1:-}" in
  --tool) tool_only=1 ;;
  "") ;;
  *) echo "usage: ci/install-deps.sh [--tool]" >&2; exit 2 ;;
esac

packages=(
  cmake ninja-build g++ pkg-config
  git               # harness bisect: the commits it tests, in worktrees
  libyaml-cpp-dev   # suite files
  libcsv-dev        # CSV results and baselines
  libfmt-dev        # formatting
  libcli11-dev      # command line
  nlohmann-json3-dev # worker protocol, JSON results
  libxxhash-dev     # compile cache keys
  libssl-dev        # SHA-256 of module sources (libcrypto)
  libsqlite3-dev    # the history's query index (static archive)
  zlib1g-dev        # the normalised SASS beside the baselines, gzip-compressed (static archive)
)
((tool_only)) || packages+=(
  libgtest-dev      # tests
  patch             # ci/example-check.sh plants a regression with a patch file
  clang-format      # the formatting check in CI
  chromium          # renders the HTML report headless in its browser test
  yamllint          # ci/check-ci-templates.sh: the CI templates as strict YAML (and PyYAML for its rules)
  ccache            # .ci/run: compiled objects kept between runs and shared by its build folders
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

cuda="${CUDA_HOME:-/usr/local/cuda}"
if [ ! -f "$cuda/include/nvrtc.h" ]; then
  echo "install-deps: CUDA Toolkit not found at $cuda (set CUDA_HOME); NVRTC is required" >&2
  exit 1
fi
"$(dirname "${BASH_SOURCE[0]}")/install-nvdisasm.sh" # the static tier's SASS figures (docs/sass.md)
echo "install-deps: all dependencies present (CUDA at $cuda)"
