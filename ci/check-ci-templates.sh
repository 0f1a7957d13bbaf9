#!/usr/bin/env bash
# Checks the CI templates (ci/github/harness.yml, ci/gitlab/harness.gitlab-ci.yml; docs/ci-templates.md)
# without GitHub or GitLab, in a few seconds:
#   1. each file parses as strict YAML (yamllint: syntax, duplicate keys, indentation, every
#      warning an error) and follows the structural rules of its format's reference that our files
#      rely on (ci/check_ci_templates.py: jobs, needs, stages, matrices, pinned actions, ...);
#   2. a self-test plants breaks in copies of both of this repository's templates (a `needs:` naming a missing job, an
#      undeclared stage, an unpinned action, a matrix variable that does not exist, ...) and requires
#      the check to fail on each with the expected message, so the check is shown to catch errors;
#   3. each file carries suites with `module:` variants end to end (ci/check_ci_modules.py): one variables block
#      with the project's build command and the variables the suites' module paths read, for every job, and the
#      build run before `harness run` in each job that runs the suites; the same on the templates set up as the
#      worked example of docs/ci-templates.md (examples/tensor-kernels, whose suite `stencil` runs an nvcc-built
#      fatbin), and a self-test of planted breaks in those copies.
# Why this checker: Debian 12 packages neither actionlint, check-jsonschema nor the SchemaStore
# schemas of either format, CI has no network to fetch them or to ask GitLab's lint API, and schema
# files of others are not copied into this repository. yamllint is a Debian package
# (ci/install-deps.sh installs it); the structural rules are plain Python on Debian's python3.
# Usage: ci/check-ci-templates.sh [--github FILE] [--gitlab FILE] [--project DIR]
#   FILE: a project's edited copy to check. Given one or both, only the files given are checked (a GitHub
#     workflow alone with --github alone), and the self-tests, which plant breaks in the templates, are left
#     out; given neither, both templates are checked with every self-test.
#   DIR: the folder HARNESS_SUITES is relative to, where the module checks read the suites (default: the current one).
# The package installs this script with the templates beside the docs (share/doc/harness/ci/).
# Exit status: 0 when the files pass and the self-test catches every planted break, else 1 (2: usage).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
github_template="$root/ci/github/harness.yml"
gitlab_template="$root/ci/gitlab/harness.gitlab-ci.yml"
github=""
gitlab=""
project=.
while (($#)); do
  case "$1" in
    --github) github="${2:?--github FILE}"; shift 2 ;;
    --gitlab) gitlab="${2:?--gitlab FILE}"; shift 2 ;;
    --project) project="${2:?--project DIR}"; shift 2 ;;
    *) echo "usage: ci/check-ci-templates.sh [--github FILE] [--gitlab FILE] [--project DIR]" >&2; exit 2 ;;
  esac
done

# The interpreter yamllint's package runs on has its Python modules (yamllint, PyYAML); another
# python3 earlier on PATH may lack them.
python=python3
if command -v yamllint >/dev/null; then
  shebang="$(head -n 1 "$(command -v yamllint)")"
  [[ "$shebang" == "#!"*python3* ]] && python="${shebang#\#!}"
fi
if ! "$python" -c 'import yaml, yamllint' 2>/dev/null; then
  echo "check-ci-templates: yamllint is not installed for $python (ci/install-deps.sh installs it)" >&2
  exit 1
fi

# A project's copies only, when it names them: the templates themselves, and the self-tests, otherwise.
templates=0
if [ -z "$github" ] && [ -z "$gitlab" ]; then
  templates=1
  github="$github_template"
  gitlab="$gitlab_template"
fi

# Every check runs, so that one run names every error.
status=0
for format in github gitlab; do
  file="${!format}"
  [ -n "$file" ] || continue
  "$python" "$root/ci/check_ci_templates.py" "$format" "$file" || status=1
  "$python" "$root/ci/check_ci_modules.py" "$format" "$file" "$project" || status=1
done
if [ "$templates" -eq 1 ]; then
  "$python" "$root/ci/check_ci_templates.py" self-test "$github_template" "$gitlab_template" || status=1
  for check in worked-example self-test; do
    "$python" "$root/ci/check_ci_modules.py" "$check" "$root/docs/ci-templates.md" "$github_template" \
      "$gitlab_template" "$root/examples/tensor-kernels" || status=1
  done
fi
exit $status
