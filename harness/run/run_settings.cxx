#include "harness/run/run_settings.hxx"

#include "harness/core/error.hxx"

#include <fmt/format.h>

namespace harness::run {

const std::vector<SettingInfo>& setting_table()
{
    static const std::vector<SettingInfo> table = {
        {"device", "--device", "", "0", "the CUDA ordinal of the GPU that runs the cases"},
        {"devices", "--devices", "", "", "several GPUs of the host at once ('all' or '0,1'), one worker each"},
        {"static_only", "--static", "", "off", "the static tier (resources read from the cubins) even with a GPU"},
        {"archs", "--arch", "archs", "", "the architectures the static tier compiles for"},
        {"require_gpu", "--require-gpu, --ci", "", "off", "no usable GPU is an error instead of the static tier"},
        {"require_gpu_because", "", "", "", "which option or mode requires a GPU, for the error's message"},
        {"time_source", "--event-timing", "", "kernels",
         "a timed sample's duration: the kernels' own GPU durations, or CUDA events around the launches"},
        {"hot", "--hot", "", "off", "no L2 flush between timed samples"},
        {"verify_only", "--verify-only", "", "off", "verify outputs and read resources, no timing"},
        {"profile", "--no-profile", "", "on", "collect hardware counters (CUPTI) in a pass of their own"},
        {"external_profiler", "--external-profiler", "", "off",
         "run each case once inside its NVTX range for ncu or nsys; no timing, no counters"},
        {"counter_cache", "--counter-cache", "", "off", "reuse a case's exact counters from <cache>/counters"},
        {"fresh_counters", "--fresh-counters", "", "off", "with counter_cache: measure afresh, refresh the entries"},
        {"timeout_s", "--timeout", "timing.timeout_s", fmt::format("{:g}", suite::TimingSpec{}.timeout_s),
         "seconds before a case (or a scanned point) counts as hung"},
        {"budget_s", "--budget", "timing.budget_s", fmt::format("{:g}", suite::TimingSpec{}.budget_s),
         "seconds of timing per case"},
        {"variants", "--variant", "", "all", "the variants that run (the reference always does)"},
        {"only_cases", "", "", "all",
         "only these cases and their points' references (a second look, bisect, the sides of a cliff)"},
        {"shard", "--shard", "", "all", "one share of the sweep points, split by expected cost"},
        {"baseline_dir", "--baseline-dir", "", "<project>/baselines",
         "whose recorded times balance the shards and the GPUs"},
        {"changed_only", "--changed-only", "", "off",
         "run only the cases whose SASS or inputs moved from their baseline's; carry the others as unchanged"},
        {"resample_rounds", "--resample", "", "2",
         "rounds of more samples for unsure time verdicts; 0 also skips measuring regressions again"},
        {"record_costs", "", "", "on", "keep what each case cost for the next run's schedule (off for second looks)"},
    };
    return table;
}

RunSettings resolve_settings(const RunSettings& given, const suite::Suite& suite)
{
    RunSettings settings = given;
    if (settings.timeout_s <= 0) settings.timeout_s = suite.timing.timeout_s;
    if (settings.budget_s <= 0) settings.budget_s = suite.timing.budget_s;
    if (settings.archs.empty()) settings.archs = suite.archs;
    return settings;
}

void check_resolved(const RunSettings& settings, const suite::Suite& suite)
{
    if (settings.timeout_s <= 0 || settings.budget_s <= 0)
        throw Error(ErrorKind::internal,
                    fmt::format("{}: run settings not resolved for the suite (run::resolve_settings)", suite.name));
}

} // namespace harness::run
