# shellcheck shell=bash
# Sourced by the scripts that run suites on a GPU machine: reads their common arguments,
#   OUT_DIR [BUILD_DIR] [-- SUITE.yaml... [harness run options]]
# and sets `out` (created, absolute), `build` (absolute; default build), `root` (the project),
# `suites` (absolute paths; default every suite of suites/) and `options` (the rest, for
# `harness run`).
read_suite_arguments() {
  out="$1"
  shift
  build=build
  if [ $# -gt 0 ] && [ "$1" != "--" ]; then
    build="$1"
    shift
  fi
  [ "${1:-}" = "--" ] && shift
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  build="$(cd "$build" && pwd)"
  mkdir -p "$out"
  out="$(cd "$out" && pwd)"
  suites=()
  options=()
  local a
  for a in "$@"; do
    case "$a" in
      *.yaml) suites+=("$(cd "$(dirname "$a")" && pwd)/$(basename "$a")") ;;
      *) options+=("$a") ;;
    esac
  done
  ((${#suites[@]})) || suites=("$root"/suites/*.yaml)
}
