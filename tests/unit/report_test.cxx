#include "harness/report/reporters.hxx"

#include <csv.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sstream>

namespace report_test {

using namespace harness;

namespace {

harness::RunReport sample_report()
{
    harness::RunReport rep;
    rep.suite = "gemm";
    rep.mode = RunMode::gpu;
    rep.device_name = "NVIDIA H100";
    CaseResult ok;
    ok.suite = "gemm";
    ok.variant = "tiled16";
    ok.params_text = "N=1000";
    ok.arch = "sm_90";
    ok.status = CaseStatus::passed;
    ok.set_metric("time_median", 123.5);
    ok.set_metric("registers", 32);
    ok.set_metric("theoretical_occupancy", 1.0);
    ok.occupancy_limiter = OccupancyLimiter::warps;
    CaseResult bad = ok;
    bad.variant = "broken, \"quoted\"";
    bad.status = CaseStatus::fault;
    bad.metrics.clear();
    bad.message = "kernel fault: CUDA_ERROR_ILLEGAL_ADDRESS";
    rep.results = {ok, bad};
    return rep;
}

/// Parses CSV text with libcsv into rows of fields.
std::vector<std::vector<std::string>> parse_csv(const std::string& text)
{
    struct State {
        std::vector<std::vector<std::string>> rows{{}};
    } state;
    csv_parser p;
    csv_init(&p, CSV_STRICT | CSV_STRICT_FINI);
    csv_parse(
        &p, text.data(), text.size(),
        [](void* s, size_t n, void* data) {
            static_cast<State*>(data)->rows.back().emplace_back(static_cast<char*>(s), n);
        },
        [](int, void* data) { static_cast<State*>(data)->rows.emplace_back(); }, &state);
    csv_fini(&p, nullptr, nullptr, &state);
    csv_free(&p);
    state.rows.pop_back();
    return state.rows;
}

} // namespace

TEST(Report, CsvIsLongFormAndRoundTrips)
{
    const auto rows = parse_csv(report::results_csv(sample_report()));
    ASSERT_EQ(rows.size(), 1u + 3u + 1u);
    EXPECT_EQ(rows[0], (std::vector<std::string>{"suite", "variant", "params", "arch", "metric", "value", "unit",
                                                 "status", "baseline", "delta", "verdict"}));
    EXPECT_EQ(rows[1], (std::vector<std::string>{"gemm", "tiled16", "N=1000", "sm_90", "time_median", "123.5", "us",
                                                 "passed", "", "", ""}));
    EXPECT_EQ(rows[2][4], "registers");
    EXPECT_EQ(rows[2][6], "regs/thread");
    EXPECT_EQ(rows[4][1], "broken, \"quoted\"");
    EXPECT_EQ(rows[4][7], "fault");
}

TEST(Report, ConsoleTableShowsEveryCaseAndFailureMessages)
{
    std::ostringstream out;
    report::write_console_table(sample_report(), out);
    const std::string text = out.str();
    EXPECT_NE(text.find("tiled16"), std::string::npos);
    EXPECT_NE(text.find("123.50 us"), std::string::npos);
    EXPECT_NE(text.find("100%"), std::string::npos);
    EXPECT_NE(text.find("kernel fault: CUDA_ERROR_ILLEGAL_ADDRESS"), std::string::npos);
    EXPECT_NE(text.find("gemm: 1 passed, 1 failed, 0 regressed, 0 not gated, 0 skipped"), std::string::npos) << text;
}

TEST(Report, ConsoleStatusColumnShowsWholeWords)
{
    for (const auto mode : {RunMode::gpu, RunMode::static_tier}) {
        auto rep = sample_report();
        rep.mode = mode;
        for (const auto status : {CaseStatus::compile_error, CaseStatus::failed_verification}) {
            CaseResult r = rep.results[1];
            r.variant = std::string("case_") + case_status_name(status);
            r.status = status;
            rep.results.push_back(r);
        }
        std::ostringstream out;
        report::write_console_table(rep, out);
        std::istringstream lines(out.str());
        std::size_t rows = 0;
        for (std::string line; std::getline(lines, line);) {
            if (!line.starts_with("case_")) continue;
            ++rows;
            const std::string status = line.substr(5, line.find(' ') - 5);
            // The row's status column holds the word in full, once, after the variant.
            EXPECT_NE(line.find(" " + status + " "), std::string::npos) << mode_name(mode) << ": " << line;
        }
        EXPECT_EQ(rows, 2u) << out.str();
        // Every row's status starts under the header's "status".
        const std::string text = out.str();
        const auto header_end = text.find('\n');
        const auto status_at = text.substr(0, header_end).find("status");
        std::istringstream again(text);
        for (std::string line; std::getline(again, line);) {
            if (line.starts_with("case_") || line.starts_with("tiled16")) {
                EXPECT_NE(line.substr(status_at, 1), " ") << mode_name(mode) << ": " << line;
            }
        }
    }
}

TEST(Report, CaseResultSurvivesJson)
{
    const auto rep = sample_report();
    const nlohmann::json j = rep.results[0];
    const auto back = j.get<CaseResult>();
    EXPECT_EQ(back.variant, "tiled16");
    EXPECT_EQ(back.status, CaseStatus::passed);
    EXPECT_EQ(back.metric("registers"), 32.0);
    EXPECT_EQ(occupancy_limiter_text(back.occupancy_limiter), "warps");
    EXPECT_THROW(nlohmann::json::parse(R"({"status":"exploded"})").get<CaseResult>(), std::exception);
}

// Where a case's time went survives results.json (merged shards add it up from there), and only
// the parts that were measured are written.
TEST(Report, CaseCostSurvivesJson)
{
    CaseResult r;
    r.cost.timing = 0.4;
    r.cost.timing_parts = {.setup = 0.15, .samples = 0.1, .teardown = 0.05, .passes = 7, .enables = 1, .retaken = 2};
    r.cost.profile.setup = 0.02;
    r.cost.profile.sass = 1.5;
    r.cost.profile.range_passes = 5;
    r.cost.profile.enables = 1;
    r.cost.profile.batches = 1;
    r.cost.profile.batched = 3;
    r.cost.profile.unbatched = 2;
    const nlohmann::json j = r;
    EXPECT_EQ(j["cost"]["timing"]["passes"], 7);
    const auto back = j.get<CaseResult>();
    EXPECT_DOUBLE_EQ(back.cost.timing_parts.setup, 0.15);
    EXPECT_DOUBLE_EQ(back.cost.timing_parts.total(), 0.3);
    EXPECT_EQ(back.cost.timing_parts.enables, 1u);
    EXPECT_EQ(back.cost.timing_parts.retaken, 2u);
    EXPECT_EQ(back.cost.profile.enables, 1u);
    EXPECT_EQ(back.cost.profile.batches, 1u);
    EXPECT_EQ(back.cost.profile.batched, 3u);
    EXPECT_EQ(back.cost.profile.unbatched, 2u);
    EXPECT_DOUBLE_EQ(back.cost.total(), 0.4 + 0.02 + 1.5);
    CaseCost sum = back.cost;
    sum += back.cost;
    EXPECT_EQ(sum.timing_parts.passes, 14u);
    EXPECT_EQ(sum.profile.batched, 6u);
    // Timed with CUDA events: no profiler passes, nothing written for them.
    CaseResult events;
    events.cost.timing = 0.2;
    EXPECT_FALSE(nlohmann::json(events)["cost"].contains("timing"));
}

TEST(Report, StaticTableShowsUnmeasuredSpillsAsUnmeasured)
{
    auto rep = sample_report();
    rep.mode = RunMode::static_tier;
    rep.results.resize(1);
    // A kernel of a module built by nvcc: registers known, spills not (no ptxas report).
    rep.results[0].variant = "from_module";
    CaseResult compiled = rep.results[0];
    compiled.variant = "from_source";
    compiled.set_metric("spill_store_bytes", 8);
    compiled.set_metric("spill_load_bytes", 4);
    CaseResult clean = rep.results[0];
    clean.variant = "no_spills";
    clean.set_metric("spill_store_bytes", 0);
    clean.set_metric("spill_load_bytes", 0);
    rep.results.push_back(compiled);
    rep.results.push_back(clean);
    std::ostringstream out;
    report::write_console_table(rep, out);
    const std::string text = out.str();
    const auto header = text.substr(0, text.find('\n'));
    const auto spill_end = header.find("spill") + 5;
    // The spill column of each row: right-aligned under its header.
    const auto spill_of = [&](const std::string& variant) {
        const auto at = text.find("\n" + variant + " ");
        EXPECT_NE(at, std::string::npos) << text;
        const std::string line = text.substr(at + 1, text.find('\n', at + 1) - at - 1);
        const auto start = line.find_last_of(' ', spill_end - 1) + 1;
        return line.substr(start, spill_end - start);
    };
    EXPECT_EQ(spill_of("from_module"), "-") << text;
    EXPECT_EQ(spill_of("from_source"), "12") << text;
    EXPECT_EQ(spill_of("no_spills"), "0") << text;
}

TEST(Report, ConsoleVerdictLinesNameTheirFigureOnce)
{
    auto rep = sample_report();
    rep.mode = RunMode::static_tier;
    CaseResult& r = rep.results[0];
    const auto verdict = [](const char* metric, Verdict kind, const char* rule, const char* message) {
        MetricVerdict v;
        v.metric = metric;
        v.verdict = kind;
        v.rule = rule;
        v.message = message;
        return v;
    };
    // Messages that begin with their figure's name, each as its producer writes it for every report.
    r.verdicts = {verdict("sass_instructions", Verdict::not_measured, "measured",
                          "sass_instructions: SASS figures not measured (CI mode: the gate fails): nvdisasm not found"),
                  verdict("registers", Verdict::drifted, "report",
                          "registers 32 regs/thread -> 40 regs/thread (+25.0 %): reported, not gated"),
                  // One that does not: the figure goes before it.
                  verdict("sass_global_ld_128", Verdict::regressed, "sass",
                          "k: k.cu:41: global loads 128-bit -> 32-bit (1 -> 4 instructions)"),
                  // One message of two figures: both named before it.
                  verdict("blocks_per_sm", Verdict::regressed, "exact", "occupancy cliff: registers 32 -> 40"),
                  verdict("theoretical_occupancy", Verdict::regressed, "exact", "occupancy cliff: registers 32 -> 40")};
    std::ostringstream out;
    report::write_console_verdicts(rep, out);
    const std::string text = out.str();
    EXPECT_NE(text.find("  tiled16 N=1000 [sm_90] sass_instructions: SASS figures not measured (CI mode: the gate "
                        "fails): nvdisasm not found (rule measured)\n"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("  tiled16 N=1000 [sm_90] registers 32 regs/thread -> 40 regs/thread (+25.0 %): reported, not "
                        "gated (rule report)\n"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("  tiled16 N=1000 [sm_90] sass_global_ld_128: k: k.cu:41: global loads 128-bit -> 32-bit (1 "
                        "-> 4 instructions) (rule sass)\n"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("  tiled16 N=1000 [sm_90] blocks_per_sm, theoretical_occupancy: occupancy cliff: registers 32 "
                        "-> 40 (rule exact)\n"),
              std::string::npos)
        << text;
    EXPECT_EQ(text.find("sass_instructions: sass_instructions"), std::string::npos) << text;
    EXPECT_EQ(text.find("registers: registers"), std::string::npos) << text;
}

} // namespace report_test
