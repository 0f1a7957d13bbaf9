#!/usr/bin/env bash
# Checks that a CUDA project can hook the harness into its own CMake and CTest (docs/cmake.md), with
# examples/tensor-kernels as the project:
#   1. installs the harness from an already-built build folder into a scratch prefix; the installed tool
#      runs from elsewhere, and find_package(harness 0.1 CONFIG) takes the package while 0.2 and 1.0 refuse it;
#      the installed docs' links all lead somewhere, and the installed template checker checks the installed
#      templates, and only the one it is given (a GitHub workflow alone: nothing of GitLab); CMake finds the
#      package through PATH too; the installed history script records a run onto a branch and fetches it back;
#   2. builds the example against the installed package: `ctest -LE gpu` passes (the static tier against
#      the committed baselines) and, without a GPU, `ctest -L gpu` reports the GPU test as skipped;
#   3. configures and builds the example against the harness's build folder as a package (-Dharness_DIR=BUILD_DIR):
#      its tests run the tool of that folder;
#   4. builds the example with the harness as a subproject (add_subdirectory, which compiles the tool
#      again, and only the tool, with BUILD_DIR's build type): `ctest` passes, the GPU test skipped without a GPU;
#      with HARNESS_EXAMPLE_SUBPROJECT_BUILD=0 (CI on a 2-core machine, where the tool's second cold compile
#      costs minutes) it is configured, its build's commands listed (ninja -t commands) and its tests listed, not built and run;
#   5. applies examples/tensor-kernels/ci/planted-local-array.patch to a copy of the example: its static
#      test must fail as a regression of local_bytes, and, configured with HARNESS_GPU_TEST_WITHOUT_GPU=FAIL,
#      its GPU test must fail without a GPU instead of being skipped.
# Usage: ci/example-check.sh [BUILD_DIR [WORK_DIR [SUBPROJECT_DIR]]]
#   (defaults: build, BUILD_DIR/example-check, WORK_DIR/subproject)
# The subproject compiles the tool's objects with the flags of BUILD_DIR's, through ccache where installed:
# with ccache's base_dir at the source tree and SUBPROJECT_DIR a folder at the depth of BUILD_DIR
# (`build-subproject` beside `build`, as .ci/run passes), every object is found in the cache, and the step
# takes seconds; otherwise it compiles the tool again (about 270 s of CPU for a Release build).
# Exit status: 0 when every check held, 1 otherwise (the failing check's log is printed).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
build="$(cd "${1:-build}" && pwd)"
work="${2:-$build/example-check}"
example="$root/examples/tensor-kernels"
rm -rf "$work"
mkdir -p "$work"
work="$(cd "$work" && pwd)"
prefix="$work/prefix"
subproject="${3:-$work/subproject}"
mkdir -p "$subproject"
subproject="$(cd "$subproject" && pwd)"
case "$subproject" in "$root" | "$build" | "$example" | "$work")
  echo "example-check: SUBPROJECT_DIR $subproject is not a folder of its own" >&2
  exit 1
  ;;
esac
rm -rf "$subproject"
mkdir -p "$subproject"
# The subproject's tool is compiled as the tool of BUILD_DIR was (a parent project chooses the build type).
build_type="$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build/CMakeCache.txt")"
# In batches too where BUILD_DIR was a unity build: the same translation units, which ccache then finds.
unity="$(sed -n 's/^HARNESS_UNITY_BUILD:[A-Z]*=//p' "$build/CMakeCache.txt")"

# A compile cache of its own, so that every kernel is compiled here whatever another cache holds.
export HARNESS_CACHE_DIR="$work/kernel-cache"
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
# The GPU tests' checks hold on a machine without a GPU (CPU CI); on a GPU machine they are left out.
has_gpu=0
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then has_gpu=1; fi

fail() {
  echo "example-check: $*" >&2
  exit 1
}

# step [TEXT]: ends the step under way, printing its wall time, and starts the next one (if TEXT is given).
step_name="" step_started=0
step() {
  [ -z "$step_name" ] || echo "example-check: $step_name: $((SECONDS - step_started)) s"
  step_name="${1:-}"
  step_started=$SECONDS
  [ -z "$step_name" ] || echo "example-check: $step_name ..."
}

# run_logged LOG COMMAND...: runs COMMAND with its output in LOG; prints LOG and fails when COMMAND fails.
run_logged() {
  local log="$1"
  shift
  "$@" >"$log" 2>&1 || { cat "$log"; fail "failed: $* (log: $log)"; }
}

# expect_in LOG PATTERN WHAT: LOG must hold PATTERN (grep -E), else it is printed and the check fails.
expect_in() {
  grep -Eq -- "$2" "$1" || { cat "$1"; fail "$3 (log: $1)"; }
}

# expect_gpu_skipped LOG: without a GPU, the GPU test ran and was reported as skipped.
expect_gpu_skipped() {
  [ "$has_gpu" -eq 0 ] || return 0
  expect_in "$1" "bias_relu\.gpu .*Skipped" "without a GPU the GPU test was not reported as skipped"
}

step "install the harness from $build into a scratch prefix"
run_logged "$work/install.log" cmake --install "$build" --prefix "$prefix"
[ -x "$prefix/bin/harness" ] || fail "no bin/harness after cmake --install"
# The installed tool needs nothing from the source tree or the build folder.
(cd "$work" && run_logged "$work/installed-list.log" "$prefix/bin/harness" list "$example/suites/bias_relu.yaml")
mkdir -p "$work/version-probe"
cat >"$work/version-probe/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.25)
project(version_probe LANGUAGES NONE)
find_package(harness ${WANTED} CONFIG REQUIRED)
get_target_property(imported harness::harness IMPORTED)
get_target_property(type harness::harness TYPE)
if(NOT imported OR NOT type STREQUAL "EXECUTABLE" OR NOT COMMAND harness_add_suite)
  message(FATAL_ERROR "harness::harness is not an imported executable, or harness_add_suite() is missing")
endif()
EOF
for wanted in 0.1 0.2 1.0; do
  if cmake -S "$work/version-probe" -B "$work/version-probe/build-$wanted" -DCMAKE_PREFIX_PATH="$prefix" \
    -DWANTED="$wanted" >"$work/version-probe/$wanted.log" 2>&1; then found=yes; else found=no; fi
  expected=no
  [ "$wanted" = 0.1 ] && expected=yes
  [ "$found" = "$expected" ] ||
    { cat "$work/version-probe/$wanted.log"; fail "find_package(harness $wanted): found $found"; }
done

# Without the prefix in CMAKE_PREFIX_PATH (a bisect step's worktree, where $PWD/harness-install is not), CMake
# finds the package through PATH: the prefix of an entry <prefix>/bin is searched.
PATH="$prefix/bin:$PATH" cmake -S "$work/version-probe" -B "$work/version-probe/build-path" -DWANTED=0.1 \
  >"$work/version-probe/path.log" 2>&1 ||
  { cat "$work/version-probe/path.log"; fail "find_package(harness) did not find the package through PATH"; }

step "the installed history script (bin/harness-history-branch)"
# As the CI templates' gate job runs it, from the package: in a clone of a repository with a remote, `record`
# starts the store, records a run at HEAD and pushes the branch; `fetch` in another clone checks it out.
[ -x "$prefix/bin/harness-history-branch" ] || fail "no bin/harness-history-branch after cmake --install"
history="$work/history"
git -c init.defaultBranch=main init -q --bare "$history/origin.git"
git -c init.defaultBranch=main init -q "$history/project"
git -C "$history/project" -c user.name=example -c user.email=example@localhost commit -q --allow-empty -m "a commit"
git -C "$history/project" remote add origin "$history/origin.git"
git -C "$history/project" push -q origin HEAD:refs/heads/main
(cd "$history/project" && PATH="$prefix/bin:$PATH" run_logged "$history/record.log" harness-history-branch record \
  harness-history store "$root/tests/fixtures/gemm_static_results.json")
expect_in "$history/record.log" "pushed to harness-history" "harness-history-branch record did not push the branch"
git clone -q "$history/origin.git" "$history/second"
(cd "$history/second" && PATH="$prefix/bin:$PATH" run_logged "$history/fetch.log" harness-history-branch fetch \
  harness-history store)
(cd "$history/second" && run_logged "$history/list.log" "$prefix/bin/harness" history list --store store)
expect_in "$history/list.log" "gemm" "the store fetched by harness-history-branch does not hold the recorded run"

step "the installed docs, CI templates and template checker"
docs="$prefix/share/doc/harness"
for file in ci/github/harness.yml ci/gitlab/harness.gitlab-ci.yml ci/check-ci-templates.sh \
  examples/tensor-kernels/CMakeLists.txt; do
  [ -f "$docs/$file" ] || fail "no share/doc/harness/$file after cmake --install"
done
# Every relative link of the installed pages names a file or folder of the installed tree (../ci/...).
broken=""
while IFS= read -r -d '' page; do
  while IFS= read -r link; do
    target="${link#](}"
    target="${target%)}"
    target="${target%%#*}"
    case "$target" in "" | http://* | https://* | mailto:*) continue ;; esac
    [ -e "$(dirname "$page")/$target" ] || broken+="  ${page#"$docs"/}: $target"$'\n'
  done < <(grep -o '](\([^) ]*\))' "$page" || true)
done < <(find "$docs" -name '*.md' -print0)
[ -z "$broken" ] || fail "links of the installed docs that lead nowhere:"$'\n'"$broken"
# The installed checker on its own templates, with every self-test; then on one copy of each format alone.
checker="$docs/ci/check-ci-templates.sh"
(cd "$work" && run_logged "$work/installed-check-templates.log" "$checker")
cp "$docs/ci/github/harness.yml" "$work/kernels.yml"
cp "$docs/ci/gitlab/harness.gitlab-ci.yml" "$work/gitlab-ci.yml"
(cd "$root" && run_logged "$work/installed-check-github.log" "$checker" --github "$work/kernels.yml")
expect_in "$work/installed-check-github.log" "kernels.yml: ok" "the installed checker did not check the GitHub copy"
! grep -q "^gitlab" "$work/installed-check-github.log" ||
  { cat "$work/installed-check-github.log"; fail "asked for a GitHub workflow alone, the checker checked GitLab"; }
(cd "$root" && run_logged "$work/installed-check-gitlab.log" "$checker" --gitlab "$work/gitlab-ci.yml")
expect_in "$work/installed-check-gitlab.log" "gitlab-ci.yml: ok" "the installed checker did not check the GitLab copy"
! grep -q "^github" "$work/installed-check-gitlab.log" ||
  { cat "$work/installed-check-gitlab.log"; fail "asked for a GitLab file alone, the checker checked GitHub"; }

step "example with find_package(harness CONFIG): configure, build, ctest -LE gpu, ctest -L gpu"
run_logged "$work/package-configure.log" cmake -S "$example" -B "$work/package" -G Ninja \
  -DCMAKE_PREFIX_PATH="$prefix" -DHARNESS_GPU_TEST_WITHOUT_GPU=SKIP
run_logged "$work/package-build.log" cmake --build "$work/package"
[ -f "$work/package/modules/stencil_1d.fatbin" ] || fail "nvcc did not build modules/stencil_1d.fatbin"
run_logged "$work/package-ctest-cpu.log" ctest --test-dir "$work/package" --output-on-failure -LE gpu
for suite in bias_relu bf16_gemm cub_reduce stencil; do
  expect_in "$work/package-ctest-cpu.log" "$suite\.static .*Passed" "$suite.static did not pass"
done
run_logged "$work/package-ctest-gpu.log" ctest --test-dir "$work/package" --output-on-failure -L gpu
expect_gpu_skipped "$work/package-ctest-gpu.log"

step "example with -Dharness_DIR=$build (the build folder as a package): configure, build"
run_logged "$work/build-folder-configure.log" cmake -S "$example" -B "$work/build-folder" -G Ninja \
  -Dharness_DIR="$build"
run_logged "$work/build-folder-build.log" cmake --build "$work/build-folder"
[ -f "$work/build-folder/modules/stencil_1d.fatbin" ] || fail "nvcc did not build modules/stencil_1d.fatbin"
# harness::harness is the tool built in $build, not an installed one.
expect_in "$work/build-folder/CTestTestfile.cmake" "\"$build/harness\" \"run\"" "the example's tests do not run $build/harness"

if [ "${HARNESS_EXAMPLE_SUBPROJECT_BUILD:-1}" = 1 ]; then
  step "example with the harness as a subproject: configure, build the tool, ctest"
else
  step "example with the harness as a subproject: configure, list the build's commands (the tool is not compiled again), list the tests"
fi
run_logged "$work/subproject-configure.log" cmake -S "$example" -B "$subproject" -G Ninja \
  -DHARNESS_SOURCE_DIR="$root" -DHARNESS_GPU_TEST_WITHOUT_GPU=SKIP -DCMAKE_BUILD_TYPE="$build_type" -DHARNESS_UNITY_BUILD="${unity:-OFF}" "${launcher[@]}"
if [ "${HARNESS_EXAMPLE_SUBPROJECT_BUILD:-1}" = 1 ]; then
  built_from=$SECONDS
  run_logged "$work/subproject-build.log" cmake --build "$subproject" -j "$(nproc)"
  echo "example-check: the subproject's build (the tool and the fatbin, in $subproject) took $((SECONDS - built_from)) s"
else
  # Every command of the build listed (ninja -t commands resolves the whole graph, the tool's sources and link
  # included), nothing compiled: the tool is the one the build folder's sources already made.
  run_logged "$work/subproject-build.log" ninja -C "$subproject" -t commands
  expect_in "$work/subproject-build.log" " -o harness/harness " "the subproject's build does not make the tool"
fi
# Only the tool: no harness tests or fuzz driver built, none registered.
[ ! -e "$subproject/harness/harness_fuzz" ] || fail "the subproject built harness_fuzz"
! grep -q "harness_fuzz\|harness_cpu_test" "$work/subproject-build.log" || fail "the subproject's build makes the harness's tests"
run_logged "$work/subproject-tests.log" ctest --test-dir "$subproject" -N
suites=$(ls "$example"/suites/*.yaml | wc -l)
expect_in "$work/subproject-tests.log" "^Total Tests: $((2 * suites))$" \
  "the subproject registered tests other than the example's two per suite"
if [ "${HARNESS_EXAMPLE_SUBPROJECT_BUILD:-1}" = 1 ]; then
  run_logged "$work/subproject-ctest.log" ctest --test-dir "$subproject" --output-on-failure
  for suite in bias_relu bf16_gemm cub_reduce stencil; do
    expect_in "$work/subproject-ctest.log" "$suite\.static .*Passed" "$suite.static did not pass"
  done
  expect_gpu_skipped "$work/subproject-ctest.log"
fi

step "planted regression (ci/planted-local-array.patch): the static test must fail on local_bytes"
cp -r "$example" "$work/planted"
rm -rf "$work/planted"/build* "$work/planted/reports"
patch -s -p1 -d "$work/planted" <"$example/ci/planted-local-array.patch"
run_logged "$work/planted-configure.log" cmake -S "$work/planted" -B "$work/planted-build" -G Ninja \
  -DCMAKE_PREFIX_PATH="$prefix" -DHARNESS_GPU_TEST_WITHOUT_GPU=FAIL
run_logged "$work/planted-build.log" cmake --build "$work/planted-build"
if ctest --test-dir "$work/planted-build" --output-on-failure -LE gpu >"$work/planted-ctest.log" 2>&1; then
  cat "$work/planted-ctest.log"
  fail "the static test passed with a local array planted in bias_relu"
fi
expect_in "$work/planted-ctest.log" "bias_relu\.static .*Failed" "bias_relu.static did not fail"
# A regression of the metric, named with its change; not a usage or environment error.
expect_in "$work/planted-ctest.log" "\] local_bytes 0 B -> [0-9]+ B \(rule exact\)" \
  "the failed static test did not name the local_bytes regression"
expect_in "$work/planted-build/harness-reports/bias_relu/static/bias_relu/results.csv" \
  '"local_bytes",.*"(regressed|expect_failed)"' "results.csv does not fail local_bytes"
grep -m 2 "\] local_bytes 0 B" "$work/planted-ctest.log"
if [ "$has_gpu" -eq 0 ]; then
  if ctest --test-dir "$work/planted-build" --output-on-failure -L gpu >"$work/planted-ctest-gpu.log" 2>&1; then
    cat "$work/planted-ctest-gpu.log"
    fail "configured with HARNESS_GPU_TEST_WITHOUT_GPU=FAIL, the GPU test did not fail without a GPU"
  fi
  expect_in "$work/planted-ctest-gpu.log" "no usable GPU" "the failed GPU test did not say that no GPU is usable"
fi

step
echo "example-check: all checks passed in $SECONDS s (logs in $work); CPU time of this script and its children:"
times
