#!/usr/bin/env bash
# Fuzzing under AddressSanitizer and UndefinedBehaviorSanitizer (docs/fuzzing.md).
#
#   ci/fuzz.sh [SECONDS_PER_TARGET] [--build DIR]
#       SECONDS_PER_TARGET  default 40 s of mutation per parser, each parser in a process of its own, as
#                           many at once as there are cores
#       --build DIR         fuzz the harness_fuzz and harness that DIR holds, built already (CI's checked
#                           build, HARNESS_CHECKED_BUILD=ON), instead of making the sanitizer build
#
# 1. builds harness_core, the tool and harness_fuzz with HARNESS_SANITIZE=ON in build-sanitize/ (and
#    nothing else: no test programs), through ccache where installed; with --build, uses DIR's;
# 2. replays tests/fuzz/corpus and mutates it, SECONDS_PER_TARGET per parser (HARNESS_FUZZ_JOBS at once);
# 3. runs the sanitized tool (check, list, run --static; report; run --waivers; scaffold --list and
#    scaffold -o) over every suite, results, waiver and module file of the corpus, and run --static
#    of a suite against each cliffs file: each must exit 0, 1, 2 or 3, without "internal error" and
#    without a sanitizer report.
# Exits non-zero when anything broke; inputs that did are in build-sanitize/fuzz-findings/.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=40 build=build-sanitize prebuilt=0
while (($#)); do
    case $1 in
    --build)
        build="${2:?ci/fuzz.sh: --build needs a build folder}" prebuilt=1
        shift 2
        ;;
    *)
        seconds=$1
        shift
        ;;
    esac
done
repo="$PWD"

# Leaks are reported (but those inside NVRTC: tests/fuzz/lsan.supp); any report ends the process.
# The tool's runs also stop at 3 GiB resident or a 2 GiB allocation (a runaway sweep), since
# RLIMIT_AS cannot be used with AddressSanitizer.
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export LSAN_OPTIONS="suppressions=$PWD/tests/fuzz/lsan.supp:print_suppressions=0"
tool_asan_options="$ASAN_OPTIONS:hard_rss_limit_mb=3072:max_allocation_size_mb=2048"

launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi

findings="$build/fuzz-findings"
summary="$build/fuzz-summary.txt"
scratch="$build/fuzz-cli"

started=$(date +%s)
if ((prebuilt)); then
    for program in harness harness_fuzz; do
        [ -x "$build/$program" ] || { echo "fuzz: $build/$program is not built" >&2; exit 2; }
    done
    # What checks the inputs' effects: sanitizers where the build has them, else libstdc++'s assertions
    # (HARNESS_CHECKED_BUILD) or nothing beyond the fuzzer's own rules, exceptions, signals and limits.
    checks="no sanitizer"
    grep -q '^HARNESS_SANITIZE:BOOL=ON' "$build/CMakeCache.txt" 2>/dev/null && checks="AddressSanitizer, UndefinedBehaviorSanitizer"
    grep -q '^HARNESS_CHECKED_BUILD:BOOL=ON' "$build/CMakeCache.txt" 2>/dev/null && [ "$checks" = "no sanitizer" ] &&
        checks="no sanitizer; libstdc++'s container assertions"
    echo "fuzz: the build in $build ($checks)"
else
    checks="AddressSanitizer, UndefinedBehaviorSanitizer"
    cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DHARNESS_SANITIZE=ON -DHARNESS_FUZZ=ON \
        "${launcher[@]}" >/dev/null
    cmake --build "$build" -j "$(nproc)" --target harness_core harness harness_fuzz
fi
built=$(date +%s)

# Each parser is fuzzed by a process of its own, as many at once as there are cores: every one still
# gets SECONDS_PER_TARGET of mutation on a core of its own. Their outputs are printed in the targets'
# order, and their summaries added up into $summary (totals, then each target's lines).
rm -rf "$findings" "$scratch" "$build/fuzz-parts"
parts="$build/fuzz-parts"
mkdir -p "$parts"
jobs="${HARNESS_FUZZ_JOBS:-$(nproc)}"
mapfile -t targets < <("$build/harness_fuzz" --list | awk '{ print $1 }')
fuzz_target() {
    "$build/harness_fuzz" --target "$1" --seconds "$seconds" --findings "$findings" --summary "$parts/$1.txt" \
        >"$parts/$1.log" 2>&1
}
fuzz_status=0 running=0
for target in "${targets[@]}"; do
    if ((running >= jobs)); then
        wait -n || fuzz_status=1
        running=$((running - 1))
    fi
    fuzz_target "$target" &
    running=$((running + 1))
done
while ((running > 0)); do
    wait -n || fuzz_status=1
    running=$((running - 1))
done
for target in "${targets[@]}"; do cat "$parts/$target.log"; done
part_summaries=()
for target in "${targets[@]}"; do
    if [ -f "$parts/$target.txt" ]; then
        part_summaries+=("$parts/$target.txt")
    else
        echo "fuzz: harness_fuzz --target $target wrote no summary" >&2
        fuzz_status=1
    fi
done
awk '$1 !~ /[.]/ { if (!($1 in total)) keys[++n] = $1; total[$1] += $2 }
     $1 ~ /[.]/ { per_target = per_target $0 "\n" }
     END { for (k = 1; k <= n; k++) print keys[k], total[keys[k]]; printf "%s", per_target }' \
    "${part_summaries[@]}" </dev/null >"$summary"
fuzzed=$(date +%s)

# The corpus's suites sit in $scratch/suites/ beside links to kernels/ and tests/, so that their
# ../kernels/... and ../tests/kernels/... resolve as in the repository; runs start in $scratch, so
# that reports, compile caches and anything a defective suite makes the tool write stay there.
mkdir -p "$scratch/suites" "$scratch/logs" "$scratch/out"
ln -s "$repo/kernels" "$scratch/kernels"
ln -s "$repo/tests" "$scratch/tests"
ln -s "$repo/baselines" "$scratch/baselines"
cp tests/fuzz/corpus/suite/*.yaml "$scratch/suites/"
harness="$repo/$build/harness"

# tool NAME ARGS...: one run of the sanitized tool in $scratch, in the background (as many at once as
# there are cores); judge_tools judges each by its exit status and stderr once all have ended.
# A run past 20 s gets SIGSEGV, on which AddressSanitizer prints where it was (timeout exits 124).
mkdir -p "$scratch/status"
tool_jobs=0
tool() {
    local name=$1
    shift
    if ((tool_jobs >= jobs)); then
        wait -n || true
        tool_jobs=$((tool_jobs - 1))
    fi
    (
        set +e
        (cd "$scratch" && ASAN_OPTIONS="$tool_asan_options" timeout -k 10 -s SEGV 20 "$harness" "$@") \
            >"$scratch/logs/$name.log" 2>&1
        printf '%s\n%s\n' "$?" "$*" >"$scratch/status/$name"
    ) &
    tool_jobs=$((tool_jobs + 1))
}
tool_runs=0 unexpected_exits=0 internal_errors=0 tool_sanitizer_reports=0 tool_hangs=0
judge_tools() {
    local file name log status command problems
    wait
    for file in "$scratch"/status/*; do
        name=$(basename "$file") log="$scratch/logs/$(basename "$file").log" problems=""
        { read -r status && read -r command; } <"$file"
        tool_runs=$((tool_runs + 1))
        case $status in
        0 | 1 | 2 | 3) ;;
        124 | 137) tool_hangs=$((tool_hangs + 1)) problems="ran longer than 20 s" ;;
        *) unexpected_exits=$((unexpected_exits + 1)) problems="exit status $status" ;;
        esac
        if [ "$status" -ne 124 ] && [ "$status" -ne 137 ] &&
            grep -qE "==[0-9]+==(ERROR: )?[A-Za-z]+Sanitizer|runtime error:" "$log"; then
            tool_sanitizer_reports=$((tool_sanitizer_reports + 1)) problems="$problems${problems:+, }sanitizer report"
        fi
        if grep -q "internal error" "$log"; then
            internal_errors=$((internal_errors + 1)) problems="$problems${problems:+, }internal error"
        fi
        if [ -n "$problems" ]; then
            echo "fuzz: harness $command ($name): $problems; the first lines of $log:"
            sed -n '1,25p' "$log" | sed 's/^/    /'
        fi
    done
}

for file in "$scratch"/suites/*.yaml; do
    name=$(basename "$file" .yaml)
    tool "check-$name" check "suites/$name.yaml"
    tool "list-$name" list "suites/$name.yaml"
    tool "run-$name" run --static --no-cache --out "out/run-$name" "suites/$name.yaml"
done
for file in tests/fuzz/corpus/results/*.json; do
    name=$(basename "$file" .json)
    tool "report-$name" report "$repo/$file" -o "out/report-$name.html"
done
for file in tests/fuzz/corpus/waivers/*.yaml; do
    name=$(basename "$file" .yaml)
    tool "waivers-$name" run --static --cache-dir cache --waivers "$repo/$file" --out "out/waivers-$name" \
        suites/minimal.yaml
done
# Modules as `harness scaffold` takes them: listed, and a skeleton written; PTX through the JIT
# linker, in the compiler process as every compilation.
for file in tests/fuzz/corpus/module/*; do
    name=$(basename "$file")
    tool "scaffold-list-$name" scaffold --list "$repo/$file"
    tool "scaffold-$name" scaffold --force -o "out/skeleton-$name.yaml" "$repo/$file"
done
# Each cliffs file of the corpus as its suite's committed one: the static tier of the suite against it.
for file in tests/fuzz/corpus/cliffs/*/*.cliffs.csv tests/fuzz/corpus/cliffs/*/*/*.cliffs.csv; do
    [ -f "$file" ] || continue
    suite=$(basename "$(dirname "$file")")
    [ -f "suites/$suite.yaml" ] || continue
    name=cliffs-$(echo "${file#tests/fuzz/corpus/cliffs/}" | tr '/' '-')
    mkdir -p "$scratch/$name"
    cp -r "baselines/$suite" "$scratch/$name/"
    cp "$file" "$scratch/$name/$suite/"
    tool "$name" run --static --cache-dir cache --baseline-dir "$name" --out "out/$name" "$repo/suites/$suite.yaml"
done
judge_tools
checked=$(date +%s)

value() { awk -v key="$1" '$1 == key { print $2 }' "$summary" 2>/dev/null || true; }
cat <<EOF

fuzz: summary
  checked by                   $checks
  fuzz inputs tried            $(value inputs)
  distinct findings            $(value findings)
  escaped exceptions           $(value exception) inputs
  accepted inputs that break a rule  $(value rule) inputs
  crashes                      $(value crash)
  sanitizer reports            $(value sanitizer) in the fuzzer, $tool_sanitizer_reports in the tool
  hangs                        $(value hang) in the fuzzer, $tool_hangs in the tool
  memory blow-ups              $(value memory)
  tool runs                    $tool_runs: $unexpected_exits unexpected exits, $internal_errors internal errors
  seconds                      build $((built - started)), fuzz $((fuzzed - built)), tool $((checked - fuzzed))
  findings folder              $findings
EOF

if [ "$fuzz_status" -ne 0 ] || [ $((unexpected_exits + internal_errors + tool_sanitizer_reports + tool_hangs)) -ne 0 ]; then
    echo "fuzz: FAILED (harness_fuzz exited $fuzz_status; see above, and $findings/*.txt)" >&2
    exit 1
fi
echo "fuzz: passed"
