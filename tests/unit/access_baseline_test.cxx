// The access baseline: each case's predicted accesses kept beside its figures, matched across edits
// by kernel, buffer, access kind and rank rather than by line, so that a regression of a predicted
// figure names the access whose figure rose against the same access in the baseline (the line it
// is at now, and the baseline's when it moved), not the worst access now, which may be an old one.

#include "harness/compare/access_baseline.hxx"
#include "harness/compare/baseline_update.hxx"
#include "harness/compare/compare_run.hxx"
#include "harness/compile/static_tier.hxx"
#include "harness/core/error.hxx"
#include "harness/core/metrics.hxx"
#include "harness/suite/suite.hxx"
#include "test_files.hxx"
#include "test_paths.hxx"

#include <fstream>
#include <gtest/gtest.h>
#include <sstream>

namespace access_baseline_test {

using namespace harness;
namespace fs = std::filesystem;

namespace {

/// A global access of kernel `k` with `requests` warps touching `sectors` sectors, 4 per warp ideally.
PredictedAccess global(const std::string& access, const std::string& buffer, int order, int line, double requests,
                       double sectors, const std::string& kernel = "k")
{
    PredictedAccess a;
    a.kernel = kernel;
    a.file = "kernels/k.cu";
    a.line = line;
    a.access = access;
    a.buffer = buffer;
    a.order = order;
    a.requests = requests;
    a.sectors = sectors;
    a.ideal_sectors = 4 * requests;
    return a;
}

PredictedAccess shared_load(const std::string& buffer, int order, int line, double requests, double wavefronts)
{
    PredictedAccess a;
    a.kernel = "k";
    a.file = "kernels/k.cu";
    a.line = line;
    a.access = "shared load";
    a.buffer = buffer;
    a.order = order;
    a.requests = requests;
    a.wavefronts = wavefronts;
    a.ideal_wavefronts = requests;
    return a;
}

const PredictedAccess* match_of(const std::vector<compare::AccessMatch>& matches, const PredictedAccess& now)
{
    for (const auto& m : matches)
        if (m.now == &now) return m.before;
    ADD_FAILURE() << "no entry for an access of the current run";
    return nullptr;
}

std::string read(const fs::path& path)
{
    std::ifstream in(path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

} // namespace

// Lines moved by an edit above them: each access matches the one of its buffer and kind with the
// same rank, not the one now at its old line.
TEST(AccessMatching, AMovedLineMatchesByOrder)
{
    const std::vector<PredictedAccess> before = {global("global load", "in", 0, 10, 100, 400),
                                                 global("global load", "in", 1, 12, 100, 400),
                                                 global("global store", "out", 0, 14, 100, 400)};
    // Three lines inserted above: every access is three lines lower, and a load is now at line 12.
    const std::vector<PredictedAccess> now = {global("global store", "out", 0, 17, 100, 400),
                                              global("global load", "in", 1, 15, 100, 400),
                                              global("global load", "in", 0, 13, 100, 400)};
    const auto matches = compare::match_accesses(before, now);
    ASSERT_EQ(matches.size(), 3u);
    EXPECT_EQ(match_of(matches, now[0]), &before[2]);
    EXPECT_EQ(match_of(matches, now[1]), &before[1]);
    EXPECT_EQ(match_of(matches, now[2]), &before[0]);
}

// An access of another buffer (or kind) inserted before the others shifts no rank: the accesses of
// `in` still match as before, and the new one has no match.
TEST(AccessMatching, AnInsertedAccessOfAnotherBufferShiftsNothing)
{
    const std::vector<PredictedAccess> before = {global("global load", "in", 0, 10, 100, 400),
                                                 global("global load", "in", 1, 11, 100, 400)};
    const std::vector<PredictedAccess> now = {
        global("global load", "index", 0, 10, 100, 400), shared_load("tile", 0, 11, 100, 100),
        global("global load", "in", 0, 12, 100, 400), global("global load", "in", 1, 13, 100, 400)};
    const auto matches = compare::match_accesses(before, now);
    EXPECT_EQ(match_of(matches, now[0]), nullptr);
    EXPECT_EQ(match_of(matches, now[1]), nullptr);
    EXPECT_EQ(match_of(matches, now[2]), &before[0]);
    EXPECT_EQ(match_of(matches, now[3]), &before[1]);
    EXPECT_EQ(matches.size(), 4u); // every baseline access matched
}

// Where a kind and buffer gained an access, those that stayed at their line match first; the one
// left over is new, and a baseline access left over is listed without a current one.
TEST(AccessMatching, AddedAndRemovedAccessesOfOneBuffer)
{
    const std::vector<PredictedAccess> before = {global("global load", "in", 0, 10, 100, 400),
                                                 global("global load", "in", 1, 20, 100, 400)};
    const std::vector<PredictedAccess> now = {global("global load", "in", 0, 10, 100, 400),
                                              global("global load", "in", 1, 15, 100, 3200),
                                              global("global load", "in", 2, 20, 100, 400)};
    const auto matches = compare::match_accesses(before, now);
    EXPECT_EQ(match_of(matches, now[0]), &before[0]);
    EXPECT_EQ(match_of(matches, now[1]), nullptr);
    EXPECT_EQ(match_of(matches, now[2]), &before[1]);

    const auto removed = compare::match_accesses(now, before);
    ASSERT_EQ(removed.size(), 3u);
    EXPECT_EQ(removed.back().now, nullptr);
    EXPECT_EQ(removed.back().before, &now[1]);
}

// The access named is the one whose figure rose, not the worst one now: an old uncoalesced load that
// did not change stays unnamed while a store that went from 4 to 32 sectors per request is named,
// at its line now and with the baseline's line.
TEST(AccessRise, NamesTheAccessThatRoseNotTheWorstNow)
{
    const std::vector<PredictedAccess> before = {global("global load", "gather", 0, 8, 1000, 32000),
                                                 global("global store", "out", 0, 21, 1000, 4000)};
    const std::vector<PredictedAccess> now = {global("global load", "gather", 0, 9, 1000, 32000),
                                              global("global store", "out", 0, 23, 1000, 32000)};
    for (const char* figure :
         {metric::predicted_excess_global_sectors, metric::predicted_global_st_sectors_per_request}) {
        const auto rise = compare::risen_access(before, now, figure);
        ASSERT_TRUE(rise) << figure;
        EXPECT_EQ(rise->match.now, &now[1]) << figure;
        EXPECT_EQ(rise->match.before, &before[1]) << figure;
        EXPECT_NE(rise->text.find("kernel k, kernels/k.cu:23 global store out[]: "), std::string::npos) << rise->text;
        EXPECT_NE(rise->text.find("line 21 in the baseline"), std::string::npos) << rise->text;
    }
    const auto per_request = compare::risen_access(before, now, metric::predicted_global_st_sectors_per_request);
    EXPECT_EQ(per_request->from, 4.0);
    EXPECT_EQ(per_request->to, 32.0);
    EXPECT_NE(per_request->text.find(": 4 -> 32 sectors per request, ideal 4 (predicted; line 21 in the baseline)"),
              std::string::npos)
        << per_request->text;
    const auto excess = compare::risen_access(before, now, metric::predicted_excess_global_sectors);
    EXPECT_EQ(excess->from, 0.0);
    EXPECT_EQ(excess->to, 28000.0);
    EXPECT_NE(excess->text.find("4 -> 32 sectors per request, ideal 4, excess 0 -> 28000 sectors"), std::string::npos)
        << excess->text;
    // A load figure looks at loads only: none of them rose.
    EXPECT_FALSE(compare::risen_access(before, now, metric::predicted_global_ld_sectors_per_request));
    // Shared figures look at shared accesses only.
    EXPECT_FALSE(compare::risen_access(before, now, metric::predicted_excess_shared_wavefronts));
}

// A new access without a match in the baseline is named as new, counted from its own ideal.
TEST(AccessRise, ANewAccessIsReportedAsNew)
{
    const std::vector<PredictedAccess> before = {global("global load", "in", 0, 10, 1000, 4000)};
    const std::vector<PredictedAccess> now = {global("global load", "in", 0, 10, 1000, 4000),
                                              global("global load", "index", 0, 11, 1000, 32000)};
    const auto rise = compare::risen_access(before, now, metric::predicted_global_ld_sectors_per_request);
    ASSERT_TRUE(rise);
    EXPECT_EQ(rise->match.now, &now[1]);
    EXPECT_EQ(rise->match.before, nullptr);
    EXPECT_EQ(rise->from, 4.0);
    EXPECT_EQ(rise->to, 32.0);
    EXPECT_NE(rise->text.find("kernels/k.cu:11 global load index[]: new (no match in the baseline): 32 sectors per "
                              "request, ideal 4, excess 28000 sectors (predicted)"),
              std::string::npos)
        << rise->text;
    // A launch's own figure looks at that launch's accesses only.
    EXPECT_FALSE(compare::risen_access(before, now, "predicted_global_ld_sectors_per_request@other"));
}

TEST(AccessBaseline, RowsReadBackAsWrittenAndBadFieldsAreNamed)
{
    compare::AccessBaseline file;
    file.set_identity("transpose", "sm_90.accesses");
    file.cases[{"naive", "N=1000"}] = {global("global store", "out", 0, 16, 32000, 1e6, "transpose_naive"),
                                       shared_load("tile", 0, 12, 64000, 1032000)};
    file.cases[{"naive", "N=1000"}][1].launch = "second";
    const std::string text = compare::access_baseline_text(file);
    EXPECT_NE(text.find("\"naive\",\"N=1000\",\"transpose_naive\",\"\",\"global store\",\"out\",\"0\",\"kernels/k.cu\","
                        "\"16\",\"32000\",\"1000000\",\"128000\""),
              std::string::npos)
        << text;
    const auto back = compare::parse_access_baseline(text, "sm_90.accesses.csv");
    const auto* accesses = back.find("naive", "N=1000");
    ASSERT_NE(accesses, nullptr);
    ASSERT_EQ(accesses->size(), 2u);
    // Rows are kept in the order of what matches them: launch first.
    const PredictedAccess& store = (*accesses)[0];
    EXPECT_EQ(store.kernel, "transpose_naive");
    EXPECT_EQ(store.sectors, 1e6);
    EXPECT_EQ(store.ideal_sectors, 128000.0);
    EXPECT_EQ((*accesses)[1].launch, "second");
    EXPECT_EQ((*accesses)[1].wavefronts, 1032000.0);
    EXPECT_EQ((*accesses)[1].ideal_wavefronts, 64000.0);
    EXPECT_EQ(compare::access_baseline_text(back), text);

    const std::string row = "\"v\",\"N=1\",\"k\",\"\",\"global load\",\"in\",\"0\",\"k.cu\",\"3\",\"1\",\"4\",\"4\"\n";
    compare::parse_access_baseline(text + row, "sm_90.accesses.csv");
    const struct {
        std::string row, field;
    } bad[] = {
        {"\"v\",\"N=1\",\"k\",\"\",\"local load\",\"in\",\"0\",\"k.cu\",\"3\",\"1\",\"4\",\"4\"\n", "access"},
        {"\"v\",\"N=1\",\"k\",\"\",\"global load\",\"in\",\"-1\",\"k.cu\",\"3\",\"1\",\"4\",\"4\"\n", "order"},
        {"\"v\",\"N=1\",\"k\",\"\",\"global load\",\"in\",\"0\",\"k.cu\",\"x\",\"1\",\"4\",\"4\"\n", "line"},
        {"\"v\",\"N=1\",\"k\",\"\",\"global load\",\"in\",\"0\",\"k.cu\",\"3\",\"1\",\"nan\",\"4\"\n", "actual"},
        {"\"v\",\"N=1\",\"k\",\"\",\"global load\",\"in\",\"0\",\"k.cu\",\"3\",\"1\",\"4\",\"-4\"\n", "ideal"},
    };
    for (const auto& b : bad) {
        try {
            compare::parse_access_baseline(text + b.row, "sm_90.accesses.csv");
            ADD_FAILURE() << "accepted " << b.row;
        } catch (const InputError& e) {
            EXPECT_NE(std::string(e.what()).find("sm_90.accesses.csv:"), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find(b.field), std::string::npos) << e.what();
        }
    }
}

// The planted regressions against the committed baselines of the kernels written well: each fails
// naming the planted line and the access there that rose against its baseline access, with both
// values; the transpose's store moved from line 23 to 21, which the message says.
TEST(AccessBaseline, PlantedRegressionsNameTheAccessThatRose)
{
    const auto s = suite::load_suite(repo_root() / "tests" / "suites" / "planted_accesses.yaml");
    RunReport report;
    report.suite = s.name;
    report.mode = RunMode::static_tier;
    report.results = compile::run_static_tier(s, {"sm_90"}, nullptr);
    compare::CompareOptions options;
    options.baseline_dir = repo_root() / "tests" / "baselines";
    compare::compare_run(report, s, options);
    const auto verdict = [&](const std::string& variant, const std::string& figure) -> const MetricVerdict* {
        for (const auto& r : report.results)
            if (r.variant == variant)
                for (const auto& v : r.verdicts)
                    if (v.metric == figure) return &v;
        return nullptr;
    };
    const MetricVerdict* store = verdict("transpose", metric::predicted_global_st_sectors_per_request);
    ASSERT_NE(store, nullptr);
    EXPECT_EQ(store->verdict, Verdict::regressed);
    EXPECT_EQ(store->location, "kernels/planted_accesses.cu:21");
    EXPECT_NE(store->message.find("access that rose: kernel planted_transpose, kernels/planted_accesses.cu:21 "
                                  "global store out[]: 4 -> 32 sectors per request, ideal 4 (predicted; line 23 in "
                                  "the baseline)"),
              std::string::npos)
        << store->message;
    const struct {
        const char* variant;
        const char* figure;
        const char* location;
    } planted[] = {
        {"aat", metric::predicted_excess_shared_wavefronts, "kernels/planted_accesses.cu:42"},
        {"layout", metric::predicted_excess_global_sectors, "kernels/planted_accesses.cu:55"},
        {"offset", metric::predicted_global_ld_sectors_per_request, "kernels/planted_accesses.cu:67"},
        {"vector", metric::predicted_excess_global_sectors, "kernels/planted_accesses.cu:79"},
        {"reduce", metric::predicted_excess_shared_wavefronts, "kernels/planted_accesses.cu:97"},
    };
    for (const auto& p : planted) {
        const MetricVerdict* v = verdict(p.variant, p.figure);
        ASSERT_NE(v, nullptr) << p.variant;
        EXPECT_EQ(v->verdict, Verdict::regressed) << p.variant;
        EXPECT_EQ(v->location, p.location) << p.variant << ": " << v->message;
        EXPECT_NE(v->message.find("access that rose: "), std::string::npos) << v->message;
    }
}

// `harness baseline update --static` writes the accesses of every case predicted in full beside the
// figures, leaves the file as it is when nothing changed, and leaves out a case not predicted.
TEST(AccessBaseline, UpdateWritesThePredictedAccessesOnce)
{
    const TempDir dir{"harness-access-baseline"};
    const auto s = suite::load_suite(repo_root() / "tests" / "suites" / "benign_accesses.yaml");
    RunReport report;
    report.suite = s.name;
    report.mode = RunMode::static_tier;
    report.results = compile::run_static_tier(s, {"sm_90"}, nullptr);
    const auto first = compare::update_baselines(s, report, dir.path);
    const fs::path path = dir.path / "benign_accesses" / "sm_90.accesses.csv";
    ASSERT_TRUE(fs::exists(path));
    EXPECT_NE(std::find(first.written.begin(), first.written.end(), path.string()), first.written.end());
    const auto file = compare::read_access_baseline(path);
    ASSERT_TRUE(file);
    const auto* renamed = file->find("renamed", "N=1048576");
    ASSERT_NE(renamed, nullptr);
    EXPECT_EQ(renamed->size(), 2u);                           // a load of in[] and a store to out[]
    EXPECT_EQ(file->find("gather", "N=1048576"), nullptr);    // not predicted
    EXPECT_EQ(file->find("histogram", "N=1048576"), nullptr); // not predicted
    const std::string text = read(path);
    const auto again = compare::update_baselines(s, report, dir.path);
    EXPECT_NE(std::find(again.unchanged.begin(), again.unchanged.end(), path.string()), again.unchanged.end());
    EXPECT_EQ(read(path), text);
}

} // namespace access_baseline_test
