// Sharded runs (`harness run --shard i/N`) and their merge (`harness merge`): how a suite's points
// are split, a committed suite's static tier that, split and merged, gates and reports exactly as
// one run does, and the merges that are refused.

#include "harness/cli/commands.hxx"
#include "harness/cli/exit_codes.hxx"
#include "harness/core/error.hxx"
#include "harness/pipeline/shard.hxx"
#include "harness/report/merge.hxx"
#include "harness/suite/sweep.hxx"
#include "test_files.hxx"
#include "test_paths.hxx"
#include "tool_output.hxx"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <map>
#include <regex>
#include <set>

namespace shard_test {

using namespace harness;
namespace fs = std::filesystem;

namespace {

fs::path gemm_suite()
{
    return repo_root() / "suites" / "gemm.yaml";
}

using ToolRun = ToolOutput;

/// The tool on `args`, with what it printed.
ToolRun tool(const std::vector<std::string>& args)
{
    return run_tool_captured(args);
}

/// `harness run --static` of gemm.yaml into `out`, with `extra` options.
ToolRun run_static(const fs::path& out, std::vector<std::string> extra = {})
{
    std::vector<std::string> args = {"run", "--static", gemm_suite().string(), "--out", out.string()};
    if (std::find(extra.begin(), extra.end(), "--ci") == extra.end()) args.push_back("--no-ci");
    args.insert(args.end(), extra.begin(), extra.end());
    return tool(args);
}

/// A report's text with its timestamps and the folders it was written to replaced by placeholders.
std::string normalized(const fs::path& file, const fs::path& folder)
{
    std::string text = read_file(file);
    text = std::regex_replace(text, std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)"), "<timestamp>");
    for (std::size_t at; (at = text.find(folder.string())) != std::string::npos;)
        text.replace(at, folder.string().size(), "<out>");
    return text;
}

/// "" when equal, else the first line that differs in each.
std::string first_difference(const std::string& a, const std::string& b)
{
    if (a == b) return "";
    std::size_t line = 1, start = 0;
    for (std::size_t i = 0; i < std::min(a.size(), b.size()) && a[i] == b[i]; ++i)
        if (a[i] == '\n') {
            ++line;
            start = i + 1;
        }
    const auto rest = [&](const std::string& s) { return s.substr(start, s.find('\n', start) - start); };
    return fmt::format("line {}: '{}' vs '{}'", line, rest(a), rest(b));
}

std::map<std::string, double> metric_map(const CaseResult& r)
{
    std::map<std::string, double> m;
    for (const auto& v : r.metrics) m[v.name] = v.value;
    return m;
}

/// Every case of `merged` equals the same case of `whole`, in the same order: status, every
/// figure exactly, every verdict; and the run-level totals and gate counts are the same.
void expect_same_results(const RunReport& whole, const RunReport& merged, const std::string& what)
{
    ASSERT_EQ(merged.results.size(), whole.results.size()) << what;
    for (std::size_t i = 0; i < whole.results.size(); ++i) {
        const CaseResult& a = whole.results[i];
        const CaseResult& b = merged.results[i];
        const std::string at = fmt::format("{}: case {} ({} {} {})", what, i, a.variant, a.params_text, a.arch);
        EXPECT_EQ(b.variant, a.variant) << at;
        EXPECT_EQ(b.params_text, a.params_text) << at;
        EXPECT_EQ(b.arch, a.arch) << at;
        EXPECT_EQ(b.point, a.point) << at;
        EXPECT_EQ(b.status, a.status) << at;
        EXPECT_EQ(b.message, a.message) << at;
        EXPECT_EQ(b.occupancy_limiter, a.occupancy_limiter) << at;
        EXPECT_EQ(metric_map(b), metric_map(a)) << at;
        ASSERT_EQ(b.verdicts.size(), a.verdicts.size()) << at;
        for (std::size_t k = 0; k < a.verdicts.size(); ++k) {
            EXPECT_EQ(b.verdicts[k].metric, a.verdicts[k].metric) << at;
            EXPECT_EQ(b.verdicts[k].verdict, a.verdicts[k].verdict) << at << " " << a.verdicts[k].metric;
            EXPECT_EQ(b.verdicts[k].baseline, a.verdicts[k].baseline) << at << " " << a.verdicts[k].metric;
            EXPECT_EQ(b.verdicts[k].value, a.verdicts[k].value) << at << " " << a.verdicts[k].metric;
            EXPECT_EQ(b.verdicts[k].rule, a.verdicts[k].rule) << at << " " << a.verdicts[k].metric;
            EXPECT_EQ(b.verdicts[k].message, a.verdicts[k].message) << at << " " << a.verdicts[k].metric;
        }
    }
    const Totals ta = totals(whole), tb = totals(merged);
    EXPECT_EQ(std::tie(tb.passed, tb.failed, tb.regressed, tb.skipped, tb.improved, tb.waived),
              std::tie(ta.passed, ta.failed, ta.regressed, ta.skipped, ta.improved, ta.waived))
        << what;
    const GateCounts ga = gate_counts(whole), gb = gate_counts(merged);
    EXPECT_EQ(std::tie(gb.compared, gb.expected, gb.reported, gb.not_gated),
              std::tie(ga.compared, ga.expected, ga.reported, ga.not_gated))
        << what;
    EXPECT_GT(ga.compared, 0u) << what << ": the run gated nothing, so the comparison proves little";
}

/// A synthetic shard of a static run: `cases` are (params, point) of variant "a".
RunReport shard_of(std::size_t index, std::size_t count, const std::vector<std::pair<std::string, std::size_t>>& cases)
{
    RunReport rep;
    rep.suite = "toy";
    rep.mode = RunMode::static_tier;
    rep.arch = "sm_80,sm_90";
    rep.timestamp = "2026-01-0" + std::to_string(index) + "T00:00:00Z";
    rep.shard = {count, {index}, "0123456789abcdef"};
    for (const char* arch : {"sm_80", "sm_90"})
        for (const auto& [params, point] : cases) {
            CaseResult r;
            r.suite = "toy";
            r.variant = "a";
            r.arch = arch;
            r.params_text = params;
            r.point = point;
            r.status = CaseStatus::passed;
            rep.results.push_back(r);
        }
    return rep;
}

std::string merge_error(const std::vector<RunReport>& reports, const report::MergeOptions& options = {})
{
    std::vector<std::string> names;
    for (std::size_t i = 0; i < reports.size(); ++i) names.push_back("s" + std::to_string(i + 1) + ".json");
    try {
        report::merge_reports(reports, names, options);
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::bad_input);
        return e.what();
    }
    return "";
}

} // namespace

TEST(ShardSplit, KeepsEveryPointWholeAndPutsTheCostlyPointAlone)
{
    const suite::Suite s = suite::load_suite(gemm_suite());
    const fs::path baselines = repo_root() / "baselines";
    const auto points = suite::sweep_points(s);
    ASSERT_EQ(points.size(), 4u); // N = 256, 1001, 2048, 4096

    // The recorded times make N=4096 the costliest point by far (25.7 ms for naive alone): it
    // fills one shard of two, the other three points the other.
    const auto costs = pipeline::point_costs(s, baselines);
    ASSERT_EQ(costs.size(), 4u);
    EXPECT_GT(costs[3], costs[2]);
    EXPECT_GT(costs[2], costs[0]);
    EXPECT_NEAR(costs[0], 6 * pipeline::case_overhead_s, 0.1); // 6 cases of about 40 us
    const auto two = pipeline::split_points(s, baselines, 2);
    EXPECT_EQ(two.shard_of_point, (std::vector<std::size_t>{2, 2, 2, 1}));

    for (const std::size_t count : {1u, 2u, 3u, 4u, 6u}) {
        const auto split = pipeline::split_points(s, baselines, count);
        std::multiset<std::pair<std::size_t, std::size_t>> seen; // (variant, point)
        for (std::size_t index = 1; index <= count; ++index)
            for (const auto& c : pipeline::shard_cases(s, split, index)) {
                EXPECT_EQ(split.shard_of_point.at(c.point), index) << "a point's cases stay in its shard";
                seen.emplace(c.variant, c.point);
            }
        const auto all = suite::expand_cases(s);
        EXPECT_EQ(seen.size(), all.size()) << count << " shards";
        for (const auto& c : all) EXPECT_EQ(seen.count({c.variant, c.point}), 1u) << count << " shards";
        // The same suite and baselines split the same way every time, and say so.
        EXPECT_EQ(pipeline::split_points(s, baselines, count).fingerprint, split.fingerprint);
        EXPECT_EQ(pipeline::split_points(s, baselines, count).shard_of_point, split.shard_of_point);
    }
    EXPECT_NE(pipeline::split_points(s, baselines, 2).fingerprint, pipeline::split_points(s, baselines, 3).fingerprint);

    // Without recorded times every case costs the same: the points are dealt out in turn.
    TempDir empty{"harness-shard-test"};
    for (const double c : pipeline::point_costs(s, empty.path)) EXPECT_DOUBLE_EQ(c, 6 * pipeline::case_overhead_s);
    const auto blind = pipeline::split_points(s, empty.path, 2);
    EXPECT_EQ(blind.shard_of_point, (std::vector<std::size_t>{1, 2, 1, 2}));
    EXPECT_NE(blind.fingerprint, two.fingerprint);

    EXPECT_THROW(pipeline::split_points(s, baselines, 0), Error);
    EXPECT_THROW(pipeline::split_points(s, baselines, max_shards + 1), Error);
}

TEST(ShardedRun, StaticShardsMergedAndGatedEqualOneRun)
{
    TempDir dir{"harness-shard-test"};
    const ToolRun whole_run = run_static(dir.path / "whole");
    ASSERT_EQ(whole_run.code, cli::exit_pass) << whole_run.out << whole_run.err;
    const fs::path whole_dir = dir.path / "whole" / "gemm";
    const RunReport whole = read_results_json(whole_dir / "results.json");
    EXPECT_FALSE(whole.shard.sharded());
    ASSERT_EQ(whole.results.size(), 48u); // 6 variants x 4 points x 2 architectures

    // 6 shards of 4 points: two of them hold nothing, and still run, report and merge.
    for (const std::size_t count : {2u, 3u, 6u}) {
        const std::string what = std::to_string(count) + " shards";
        std::vector<std::string> shard_files;
        std::set<std::size_t> points_seen;
        for (std::size_t index = 1; index <= count; ++index) {
            const fs::path out = dir.path / fmt::format("shard-{}-of-{}", index, count);
            const ToolRun shard_run = run_static(out, {"--shard", fmt::format("{}/{}", index, count)});
            ASSERT_EQ(shard_run.code, cli::exit_pass) << shard_run.out << shard_run.err;
            shard_files.push_back((out / "gemm" / "results.json").string());
            const RunReport shard = read_results_json(shard_files.back());
            EXPECT_EQ(shard.shard.count, count);
            EXPECT_EQ(shard.shard.indices, std::vector<std::size_t>{index});
            // Whole points only, each in one shard, and every variant at them.
            std::set<std::size_t> mine;
            for (const auto& r : shard.results) mine.insert(r.point);
            for (const std::size_t p : mine) EXPECT_TRUE(points_seen.insert(p).second) << what << ": point " << p;
            EXPECT_EQ(shard.results.size(), mine.size() * 12) << what;
        }
        EXPECT_EQ(points_seen.size(), 4u) << what;

        // Merged as they are: the same cases, figures and verdicts as the whole run.
        std::vector<std::string> plain = {"merge"};
        plain.insert(plain.end(), shard_files.rbegin(), shard_files.rend()); // any order
        const fs::path plain_file = dir.path / fmt::format("plain-{}.json", count);
        plain.insert(plain.end(), {"-o", plain_file.string()});
        const ToolRun plain_merge = tool(plain);
        ASSERT_EQ(plain_merge.code, cli::exit_pass) << plain_merge.out << plain_merge.err;
        expect_same_results(whole, read_results_json(plain_file), what + ", merged");

        // Merged and gated: every report as the whole run wrote it.
        const fs::path merged_dir = dir.path / fmt::format("merged-{}", count) / "gemm";
        std::vector<std::string> gated = {"merge"};
        gated.insert(gated.end(), shard_files.begin(), shard_files.end());
        gated.insert(gated.end(), {"-o", (merged_dir / "results.json").string(), "--gate", "--no-ci"});
        const ToolRun gated_merge = tool(gated);
        ASSERT_EQ(gated_merge.code, whole_run.code) << gated_merge.out << gated_merge.err;
        const RunReport merged = read_results_json(merged_dir / "results.json");
        EXPECT_FALSE(merged.shard.sharded()) << what << ": every shard merged is a whole run";
        expect_same_results(whole, merged, what + ", merged and gated");
        EXPECT_EQ(merged.baseline_files, whole.baseline_files) << what;
        EXPECT_EQ(merged.notes, whole.notes) << what;
        EXPECT_EQ(merged.comparison_notes, whole.comparison_notes) << what;
        for (const char* file : {"results.csv", "junit.xml", "summary.md", "report.html", "results.json"})
            EXPECT_EQ(first_difference(normalized(merged_dir / file, merged_dir.parent_path()),
                                       normalized(whole_dir / file, whole_dir.parent_path())),
                      "")
                << what << ": " << file;
        // The console says the same too, once the lines naming the files written are left out.
        const auto verdict_lines = [](const std::string& console) {
            return std::regex_replace(console, std::regex("wrote [^\n]*\n"), "");
        };
        EXPECT_EQ(first_difference(verdict_lines(gated_merge.out), verdict_lines(whole_run.out)), "") << what;
    }
}

TEST(ShardedRun, AShardGatesOnlyItsOwnCasesInCiMode)
{
    TempDir dir{"harness-shard-test"};
    const ToolRun shard_run = run_static(dir.path / "shard", {"--shard", "2/2", "--ci"});
    EXPECT_EQ(shard_run.code, cli::exit_pass) << shard_run.out << shard_run.err;
    const RunReport shard = read_results_json(dir.path / "shard" / "gemm" / "results.json");
    ASSERT_EQ(shard.results.size(), 36u); // N = 256, 1001 and 2048: 3 points x 6 variants x 2 architectures
    EXPECT_NE(shard_run.out.find("gemm: 30 passed, 0 failed, 0 regressed, 0 not gated, 6 skipped"), std::string::npos)
        << shard_run.out;
    EXPECT_TRUE(shard.comparison_notes.empty());
    // Its reports say that they hold one shard.
    EXPECT_NE(shard_run.out.find("(static tier on sm_80,sm_90, shard 2/2)"), std::string::npos) << shard_run.out;
    EXPECT_NE(read_file(dir.path / "shard" / "gemm" / "summary.md").find(", shard 2/2 of the sweep points"),
              std::string::npos);
    EXPECT_NE(read_file(dir.path / "shard" / "gemm" / "junit.xml").find(R"(<property name="shard" value="2/2"/>)"),
              std::string::npos);

    // Its cases are judged as in a whole run, and the baseline rows of the other shard's point
    // are no concern of its: nothing is missing, nothing fails as not gated.
    ASSERT_EQ(run_static(dir.path / "whole", {"--ci"}).code, cli::exit_pass);
    const RunReport whole = read_results_json(dir.path / "whole" / "gemm" / "results.json");
    RunReport same_cases = whole;
    std::erase_if(same_cases.results, [](const CaseResult& r) { return r.params_text == "N=4096"; });
    expect_same_results(same_cases, shard, "shard 2/2 in CI mode");
    for (const auto& r : shard.results)
        for (const auto& v : r.verdicts) EXPECT_NE(v.verdict, Verdict::not_gated) << r.variant << " " << v.metric;
}

TEST(ShardedRun, ShardOptionMustNameAShareOfTheSuite)
{
    TempDir dir{"harness-shard-test"};
    for (const char* bad : {"0/2", "3/2", "2", "1/0", "a/b", "1/2/3", "-1/2", "1/10001"}) {
        const ToolRun r = run_static(dir.path, {"--shard", bad});
        EXPECT_EQ(r.code, cli::exit_bad_input) << bad;
        EXPECT_NE(r.err.find("--shard"), std::string::npos) << bad << ": " << r.err;
        EXPECT_NE(r.err.find("i/N"), std::string::npos) << bad << ": " << r.err;
    }
    EXPECT_FALSE(fs::exists(dir.path / "gemm")) << "nothing ran";
}

TEST(MergeShards, RestoresTheOrderOfOneRunAndRecordsAPartialMerge)
{
    const RunReport first = shard_of(1, 3, {{"N=2", 1}, {"N=4", 3}});
    const RunReport second = shard_of(2, 3, {{"N=1", 0}});
    const RunReport third = shard_of(3, 3, {{"N=3", 2}});
    const RunReport merged = report::merge_reports({third, first, second}, {"c.json", "a.json", "b.json"});
    EXPECT_FALSE(merged.shard.sharded());
    std::vector<std::string> order;
    for (const auto& r : merged.results) order.push_back(r.arch + " " + r.params_text);
    EXPECT_EQ(order, (std::vector<std::string>{"sm_80 N=1", "sm_80 N=2", "sm_80 N=3", "sm_80 N=4", "sm_90 N=1",
                                               "sm_90 N=2", "sm_90 N=3", "sm_90 N=4"}));
    EXPECT_EQ(merged.arch, "sm_80,sm_90");
    EXPECT_EQ(merged.timestamp, "2026-01-01T00:00:00Z"); // the earliest shard's

    // Two of three, when asked: the result says which it holds, and merges with the third later.
    const std::string missing = merge_error({first, third});
    EXPECT_NE(missing.find("shard 2 of 3 is missing from s1.json, s2.json"), std::string::npos) << missing;
    EXPECT_NE(missing.find("--allow-missing"), std::string::npos) << missing;
    EXPECT_NE(merge_error({first}).find("shards 2, 3 of 3 are missing"), std::string::npos) << merge_error({first});
    const RunReport partial =
        report::merge_reports({first, third}, {"a.json", "c.json"}, {.allow_missing_shards = true});
    EXPECT_EQ(partial.shard.count, 3u);
    EXPECT_EQ(partial.shard.indices, (std::vector<std::size_t>{1, 3}));
    EXPECT_EQ(partial.shard.text(), "1,3/3");
    EXPECT_EQ(partial.results.size(), 6u);
    const RunReport completed = report::merge_reports({partial, second}, {"ac.json", "b.json"});
    EXPECT_FALSE(completed.shard.sharded());
    EXPECT_EQ(completed.results.size(), merged.results.size());
    EXPECT_EQ(merge_error({partial, first}).find("shard 1/3 is in both s1.json and s2.json"), 0u)
        << merge_error({partial, first});
}

TEST(MergeShards, RefusesShardsThatDoNotAddUpNamingTheFiles)
{
    const RunReport first = shard_of(1, 2, {{"N=1", 0}});
    const RunReport second = shard_of(2, 2, {{"N=2", 1}});

    auto twice = second;
    twice.shard.indices = {1};
    EXPECT_NE(merge_error({first, twice}).find("shard 1/2 is in both s1.json and s2.json"), std::string::npos)
        << merge_error({first, twice});

    auto other_count = second;
    other_count.shard.count = 3;
    EXPECT_NE(merge_error({first, other_count})
                  .find("s1.json (shard 1/2) with s2.json (shard 2/3): different shard "
                        "counts"),
              std::string::npos)
        << merge_error({first, other_count});

    auto other_split = second;
    other_split.shard.split = "fedcba9876543210";
    EXPECT_NE(merge_error({first, other_split})
                  .find("s1.json with s2.json: their suites' points were split "
                        "differently"),
              std::string::npos)
        << merge_error({first, other_split});

    auto whole = second;
    whole.shard = {};
    EXPECT_NE(merge_error({first, whole}).find("s1.json (shard 1/2) with s2.json (a whole run)"), std::string::npos)
        << merge_error({first, whole});

    auto other_suite = second;
    other_suite.suite = "gemm";
    EXPECT_NE(merge_error({first, other_suite}).find("s1.json (suite 'toy') with s2.json (suite 'gemm')"),
              std::string::npos)
        << merge_error({first, other_suite});

    auto gpu_first = first, gpu_second = second;
    for (auto* r : {&gpu_first, &gpu_second}) {
        r->mode = RunMode::gpu;
        r->arch = "sm_90";
        r->device_name = "NVIDIA H100 80GB HBM3";
        std::erase_if(r->results, [](const CaseResult& c) { return c.arch != "sm_90"; });
    }
    EXPECT_EQ(report::merge_reports({gpu_first, gpu_second}, {"a", "b"}).results.size(), 2u);
    gpu_second.device_name = "NVIDIA H200";
    EXPECT_NE(merge_error({gpu_first, gpu_second})
                  .find("s1.json (GPU 'NVIDIA H100 80GB HBM3') with s2.json (GPU "
                        "'NVIDIA H200')"),
              std::string::npos)
        << merge_error({gpu_first, gpu_second});

    auto one_arch = second;
    one_arch.arch = "sm_90";
    std::erase_if(one_arch.results, [](const CaseResult& c) { return c.arch != "sm_90"; });
    EXPECT_NE(merge_error({first, one_arch}).find("s1.json (arch 'sm_80,sm_90') with s2.json (arch 'sm_90')"),
              std::string::npos)
        << merge_error({first, one_arch});

    auto same_case = second;
    same_case.results = first.results;
    EXPECT_NE(merge_error({first, same_case}).find("a N=1 (sm_80) is in both s1.json and s2.json"), std::string::npos)
        << merge_error({first, same_case});
}

TEST(MergeCommand, GateNeedsTheSuiteAndAResultsFolder)
{
    TempDir dir{"harness-shard-test"};
    ASSERT_EQ(run_static(dir.path / "one", {"--shard", "1/2"}).code, cli::exit_pass);
    ASSERT_EQ(run_static(dir.path / "two", {"--shard", "2/2"}).code, cli::exit_pass);
    const std::string one = (dir.path / "one" / "gemm" / "results.json").string();
    const std::string two = (dir.path / "two" / "gemm" / "results.json").string();

    ToolRun r = tool({"merge", one, "-o", (dir.path / "m.json").string()});
    EXPECT_EQ(r.code, cli::exit_bad_input);
    EXPECT_NE(r.err.find("shard 2 of 2 is missing from " + one), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir.path / "m.json"));
    r = tool({"merge", one, "-o", (dir.path / "m.json").string(), "--allow-missing"});
    EXPECT_EQ(r.code, cli::exit_pass) << r.err;
    EXPECT_EQ(read_results_json(dir.path / "m.json").shard.text(), "1/2");

    r = tool({"merge", one, two, "-o", (dir.path / "m.json").string(), "--gate", "--no-ci"});
    EXPECT_EQ(r.code, cli::exit_bad_input);
    EXPECT_NE(r.err.find("give --out <folder>/results.json"), std::string::npos) << r.err;
    r = tool({"merge", one, two, "-o", (dir.path / "m.json").string(), "--strict"});
    EXPECT_EQ(r.code, cli::exit_bad_input);
    EXPECT_NE(r.err.find("--strict requires --gate"), std::string::npos) << r.err;

    // The suite file the results name has moved: --suite gives it.
    RunReport moved = read_results_json(one);
    moved.suite_file = (dir.path / "gone.yaml").string();
    write_file(dir.path / "moved.json", results_json(moved));
    const std::string out = (dir.path / "m" / "results.json").string();
    r = tool({"merge", (dir.path / "moved.json").string(), two, "-o", out, "--gate", "--no-ci"});
    EXPECT_EQ(r.code, cli::exit_bad_input);
    EXPECT_NE(r.err.find("gone.yaml', which is not here: give the suite with --suite"), std::string::npos) << r.err;
    r = tool({"merge", (dir.path / "moved.json").string(), two, "-o", out, "--gate", "--no-ci", "--suite",
              gemm_suite().string()});
    EXPECT_EQ(r.code, cli::exit_pass) << r.out << r.err;
    for (const char* file : {"results.json", "results.csv", "junit.xml", "summary.md", "report.html"})
        EXPECT_TRUE(fs::exists(dir.path / "m" / file)) << file;

    // Another suite's file is refused, by name.
    r = tool({"merge", one, two, "-o", out, "--gate", "--no-ci", "--suite",
              (repo_root() / "suites" / "transpose.yaml").string()});
    EXPECT_EQ(r.code, cli::exit_bad_input);
    EXPECT_NE(r.err.find("is suite 'transpose', but the results are of suite 'gemm'"), std::string::npos) << r.err;
}

// A results file whose verdict says "unsure" with anything but true or false is refused, naming
// the file, and nothing is written.
TEST(MergeCommand, RefusesAMalformedUnsureMark)
{
    TempDir dir{"harness-shard-test"};
    ASSERT_EQ(run_static(dir.path / "one").code, cli::exit_pass);
    RunReport rep = read_results_json(dir.path / "one" / "gemm" / "results.json");
    ASSERT_FALSE(rep.results.empty());
    MetricVerdict v;
    v.metric = "time_median";
    v.unsure = true;
    rep.results[0].verdicts.push_back(v);
    std::string text = results_json(rep);
    const auto at = text.find("\"unsure\": true");
    ASSERT_NE(at, std::string::npos);
    text.replace(at, std::string("\"unsure\": true").size(), "\"unsure\": \"yes\"");
    write_file(dir.path / "bad.json", text);
    const ToolRun r =
        tool({"merge", (dir.path / "bad.json").string(), "-o", (dir.path / "m.json").string(), "--allow-missing"});
    EXPECT_EQ(r.code, cli::exit_bad_input);
    EXPECT_NE(r.err.find((dir.path / "bad.json").string()), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir.path / "m.json"));
}

TEST(ResultsFile, ShardAndPointsRoundTripAndVersionOneFilesStillRead)
{
    TempDir dir{"harness-shard-test"};
    RunReport partial = shard_of(2, 4, {{"N=2", 1}});
    partial.shard.indices = {2, 4};
    partial.comparison_notes = {"no baseline baselines/toy/sm_80.csv"};
    write_file(dir.path / "r.json", results_json(partial));
    const RunReport back = read_results_json(dir.path / "r.json");
    EXPECT_EQ(back.shard.count, 4u);
    EXPECT_EQ(back.shard.indices, (std::vector<std::size_t>{2, 4}));
    EXPECT_EQ(back.shard.split, partial.shard.split);
    EXPECT_EQ(back.comparison_notes, partial.comparison_notes);
    EXPECT_EQ(back.results.at(0).point, 1u);
    EXPECT_NE(read_file(dir.path / "r.json").find("\"schema_version\": " + std::to_string(results_schema_version)),
              std::string::npos);

    // Version 1 (before shards): a whole run.
    const RunReport old = read_results_json(repo_root() / "tests" / "fixtures" / "gemm_results.json");
    EXPECT_FALSE(old.shard.sharded());
    EXPECT_FALSE(old.results.empty());

    for (const auto& [shard, why] :
         std::vector<std::pair<std::string, std::string>>{{R"({"count": 2, "indices": [3]})", "shard '3/2'"},
                                                          {R"({"count": 2, "indices": []})", "shard '/2'"},
                                                          {R"({"count": 3, "indices": [2, 1]})", "shard '2,1/3'"},
                                                          {R"({"count": 20000, "indices": [1]})", "shard '1/20000'"},
                                                          {R"({"count": -1, "indices": [1]})", "shard"}}) {
        std::string text = results_json(shard_of(1, 2, {}));
        text = std::regex_replace(text, std::regex(R"("shard": \{[^}]*\})"), "\"shard\": " + shard);
        write_file(dir.path / "bad.json", text);
        try {
            read_results_json(dir.path / "bad.json");
            ADD_FAILURE() << shard;
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::bad_input);
            EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
        }
    }
}

} // namespace shard_test
