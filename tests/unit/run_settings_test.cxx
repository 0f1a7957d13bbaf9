// One suite's settings: resolved once from the command line and the suite, named once in the
// settings table, and kept per suite when several suites share a GPU run's workers. No GPU needed.

#include "harness/cli/commands.hxx"
#include "harness/core/error.hxx"
#include "harness/pipeline/gpu_run.hxx"
#include "harness/pipeline/static_run.hxx"
#include "harness/run/run_settings.hxx"
#include "harness/suite/suite.hxx"
#include "test_paths.hxx"

#include <gtest/gtest.h>
#include <set>
#include <string>
#include <vector>

namespace run_settings_test {

using namespace harness;

namespace {

suite::Suite timed_suite()
{
    auto s = suite::load_suite(repo_root() / "suites" / "memory_copy.yaml");
    s.timing.timeout_s = 12.0;
    s.timing.budget_s = 0.25;
    s.archs = {"sm_80", "sm_90"};
    return s;
}

/// `harness run --help` as the command prints it.
std::string run_help()
{
    testing::internal::CaptureStdout();
    cli::dispatch({"run", "--help"});
    return testing::internal::GetCapturedStdout();
}

} // namespace

TEST(RunSettings, TheSuiteGivesWhatTheCommandLineLeavesToIt)
{
    const auto s = timed_suite();
    const run::RunSettings resolved = run::resolve_settings(run::RunSettings{}, s);
    EXPECT_EQ(resolved.timeout_s, 12.0);
    EXPECT_EQ(resolved.budget_s, 0.25);
    EXPECT_EQ(resolved.archs, (std::vector<std::string>{"sm_80", "sm_90"}));

    run::RunSettings given;
    given.timeout_s = 3.0;
    given.budget_s = 0.5;
    given.archs = {"sm_75"};
    const run::RunSettings overridden = run::resolve_settings(given, s);
    EXPECT_EQ(overridden.timeout_s, 3.0);
    EXPECT_EQ(overridden.budget_s, 0.5);
    EXPECT_EQ(overridden.archs, (std::vector<std::string>{"sm_75"}));

    // Resolving again changes nothing, so a layer handed resolved settings may resolve them too.
    const run::RunSettings again = run::resolve_settings(resolved, s);
    EXPECT_EQ(again.timeout_s, resolved.timeout_s);
    EXPECT_EQ(again.budget_s, resolved.budget_s);
    EXPECT_EQ(again.archs, resolved.archs);
}

// The pipeline takes settings resolved for the suite and never falls back to the suite's values
// itself: settings that were not resolved stop the run before anything compiles.
TEST(RunSettings, ThePipelineRunsOnlyResolvedSettings)
{
    const auto s = timed_suite();
    run::RunSettings given;
    given.static_only = true;
    EXPECT_THROW(pipeline::run_suite_static(s, given, nullptr), Error);
    EXPECT_NO_THROW(run::check_resolved(run::resolve_settings(given, s), s));
}

TEST(RunSettings, TheTableNamesEachSettingOnceAndItsFlagsAreRunOptions)
{
    const std::string help = run_help();
    ASSERT_NE(help.find("Usage: harness run"), std::string::npos) << help;
    std::set<std::string> names;
    for (const auto& row : run::setting_table()) {
        EXPECT_TRUE(names.insert(std::string(row.name)).second) << row.name << " is named twice";
        EXPECT_FALSE(row.meaning.empty()) << row.name;
        std::string flags(row.flag);
        for (std::size_t start = 0; start < flags.size();) {
            const auto comma = flags.find(", ", start);
            const std::string flag =
                flags.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
            EXPECT_NE(help.find(flag), std::string::npos) << row.name << ": `harness run` has no " << flag;
            start = comma == std::string::npos ? flags.size() : comma + 2;
        }
    }
    EXPECT_EQ(names.size(), 22u) << "a field of RunSettings without its row, or a row without its field";
}

// A GPU run's workers serve several suites; a suite that asks to be measured otherwise than the
// first one (hot, CUDA events, no counters, verification alone) keeps its own settings: it gets
// workers of its own.
TEST(RunSettings, ALaterSuiteKeepsHowItsCasesAreMeasured)
{
    run::RunSettings plain;
    plain.timeout_s = 30.0;
    plain.budget_s = 1.0;
    for (const auto& [what, change] : std::vector<std::pair<std::string, void (*)(run::RunSettings&)>>{
             {"hot", [](run::RunSettings& s) { s.hot = true; }},
             {"events", [](run::RunSettings& s) { s.time_source = run::TimeSource::events; }},
             {"no counters", [](run::RunSettings& s) { s.profile = false; }},
             {"verify only", [](run::RunSettings& s) { s.verify_only = true; }},
             {"external profiler", [](run::RunSettings& s) { s.external_profiler = true; }},
         }) {
        run::RunSettings other = plain;
        change(other);
        const auto groups = pipeline::worker_groups({plain, other, plain}, nullptr);
        EXPECT_EQ(groups, (std::vector<std::vector<std::size_t>>{{0, 2}, {1}})) << what;
        const run::RunOptions second = pipeline::worker_options(other, nullptr);
        EXPECT_FALSE(second == pipeline::worker_options(plain, nullptr)) << what;
    }
    run::RunSettings hot;
    hot.hot = true;
    EXPECT_TRUE(pipeline::worker_options(hot, nullptr).hot);
    run::RunSettings events;
    events.time_source = run::TimeSource::events;
    EXPECT_EQ(pipeline::worker_options(events, nullptr).time_source, run::TimeSource::events);
    run::RunSettings verify;
    verify.verify_only = true;
    EXPECT_FALSE(pipeline::worker_options(verify, nullptr).profile);
}

// What each suite's workers keep apart (its timeout, its budget, its cases) does not split them.
TEST(RunSettings, SuitesThatDifferOnlyInWhatTheirWorkKeepsShareWorkers)
{
    run::RunSettings first;
    first.timeout_s = 30.0;
    first.budget_s = 1.0;
    run::RunSettings second = first;
    second.timeout_s = 2.0;
    second.budget_s = 0.05;
    second.variants = {"copy"};
    second.only_cases = {{"copy", "N=1"}};
    second.resample_rounds = 0;
    second.counter_cache = true; // without a kernel cache there is no counter cache
    EXPECT_EQ(pipeline::worker_groups({first, second}, nullptr), (std::vector<std::vector<std::size_t>>{{0, 1}}));
}

} // namespace run_settings_test
