// The static tier's predicted access figures against the GPU's, and what predicting them costs.
//
// Agreement: for every case of every suite given (default: suites/*.yaml), the predicted kernel
// figures for sm_90 (compile/predicted_accesses.hxx) against the figures the GPU measured, as
// committed in baselines/<suite>/sm_90.csv (rows of source "gpu"): global load and store sectors
// per request, excess global sectors, excess shared wavefronts. Prints how many cases are fully
// predicted, how many of those equal the GPU's figures, each that differs with both values, and
// why the others are not predicted (the first reason of each case, grouped).
//
// Time: the static tier of every suite with and without the predictions, cold (an empty compile
// cache) and warm (the cache the cold run filled), best of REPEATS warm runs.
//
//   prediction_bench [--time] [--repeats N] [SUITE.yaml ...]     (run from the repository root)

#include "harness/compare/baseline_file.hxx"
#include "harness/compile/static_tier.hxx"
#include "harness/core/metrics.hxx"
#include "harness/core/stopwatch.hxx"
#include "harness/suite/suite.hxx"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <map>
#include <optional>
#include <string>
#include <unistd.h>
#include <vector>

namespace fs = std::filesystem;
using namespace harness;

namespace {

struct Pair {
    const char* predicted;
    const char* measured;
};

constexpr Pair compared[] = {
    {metric::predicted_global_ld_sectors_per_request, metric::global_ld_sectors_per_request},
    {metric::predicted_global_st_sectors_per_request, metric::global_st_sectors_per_request},
    {metric::predicted_excess_global_sectors, metric::excess_global_sectors},
    {metric::predicted_excess_shared_wavefronts, metric::excess_shared_wavefronts},
};

/// Equal as the gate would see them: counts to the unit, ratios to 1e-4 (the baseline keeps 9 digits).
bool same(double predicted, double measured)
{
    return std::abs(predicted - measured) <= std::max(0.5e-4 * std::abs(measured), 1e-6);
}

bool same_count(double predicted, double measured)
{
    return std::abs(predicted - measured) < 0.5;
}

struct Tally {
    std::size_t cases = 0, predicted = 0, equal = 0, differ = 0, no_gpu = 0;
    std::map<std::string, std::size_t> not_predicted; // first reason, without its kernel and line
    std::vector<std::string> differences;
};

/// The kind of reason, for grouping: what follows the last ": " of the access model's message.
std::string reason_kind(const std::string& reason)
{
    const auto at = reason.rfind(": ");
    std::string kind = at == std::string::npos ? reason : reason.substr(at + 2);
    // "its address depends on ld.global.nc.u32 at x.cu:5": the instruction, not the place.
    if (const auto where = kind.find(" at "); where != std::string::npos) kind = kind.substr(0, where);
    return kind;
}

void agreement(const suite::Suite& s, const std::vector<CaseResult>& results, Tally& t)
{
    const fs::path path = fs::path("baselines") / s.name / "sm_90.csv";
    std::optional<compare::BaselineFile> baseline;
    if (fs::exists(path)) baseline = compare::read_baseline(path);
    for (const auto& r : results) {
        if (r.status != CaseStatus::passed) continue;
        ++t.cases;
        if (!r.not_predicted.empty() || !r.metric(metric::predicted_excess_global_sectors)) {
            ++t.not_predicted[r.not_predicted.empty() ? "no prediction" : reason_kind(r.not_predicted.front())];
            continue;
        }
        ++t.predicted;
        std::vector<std::string> differs;
        std::size_t measured = 0;
        for (const auto& p : compared) {
            const compare::BaselineRow* row = baseline ? baseline->find(r.variant, r.params_text, p.measured) : nullptr;
            if (!row || row->source != "gpu") continue;
            ++measured;
            const auto value = r.metric(p.predicted);
            const bool count = std::string_view(p.measured).starts_with("excess");
            if (!value || !(count ? same_count(*value, row->value) : same(*value, row->value)))
                differs.push_back(fmt::format("{} predicted {} measured {:.9g}", p.measured,
                                              value ? fmt::format("{:.9g}", *value) : "none", row->value));
        }
        if (measured == 0) {
            ++t.no_gpu;
            continue;
        }
        if (differs.empty()) {
            ++t.equal;
            continue;
        }
        ++t.differ;
        std::string line = fmt::format("{} {} {}:", s.name, r.variant, r.params_text);
        for (const auto& d : differs) line += " " + d + ";";
        t.differences.push_back(line);
    }
}

double seconds_of(const suite::Suite& s, const compile::CompileCache* cache, bool predict)
{
    const auto start = std::chrono::steady_clock::now();
    (void)compile::run_static_tier(s, suite::expand_cases(s), {"sm_90"}, cache, predict);
    return seconds_since(start);
}

} // namespace

int main(int argc, char** argv)
{
    bool time = false;
    int repeats = 3;
    std::vector<fs::path> files;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--time")
            time = true;
        else if (arg == "--repeats" && i + 1 < argc)
            repeats = std::max(1, std::atoi(argv[++i]));
        else
            files.emplace_back(arg);
    }
    if (files.empty()) {
        for (const auto& e : fs::directory_iterator("suites"))
            if (e.path().extension() == ".yaml") files.push_back(e.path());
        std::sort(files.begin(), files.end());
    }
    std::vector<suite::Suite> suites;
    for (const auto& f : files) suites.push_back(suite::load_suite(f));

    const fs::path scratch = fs::temp_directory_path() / fmt::format("prediction_bench.{}", ::getpid());
    fs::create_directories(scratch);
    Tally t;
    fmt::print("{:<16} {:>6} {:>10} {:>10} {:>10} {:>10}\n", "suite", "cases", "predicted", "equal", "differ",
               "no GPU");
    for (const auto& s : suites) {
        const compile::CompileCache cache(scratch / "agreement");
        Tally one;
        agreement(s, compile::run_static_tier(s, suite::expand_cases(s), {"sm_90"}, &cache), one);
        fmt::print("{:<16} {:>6} {:>10} {:>10} {:>10} {:>10}\n", s.name, one.cases, one.predicted, one.equal,
                   one.differ, one.no_gpu);
        t.cases += one.cases;
        t.predicted += one.predicted;
        t.equal += one.equal;
        t.differ += one.differ;
        t.no_gpu += one.no_gpu;
        for (const auto& [why, n] : one.not_predicted) t.not_predicted[why] += n;
        t.differences.insert(t.differences.end(), one.differences.begin(), one.differences.end());
    }
    const auto pct = [](std::size_t a, std::size_t b) { return b == 0 ? 0.0 : 100.0 * a / b; };
    fmt::print("{:<16} {:>6} {:>10} {:>10} {:>10} {:>10}\n", "all", t.cases, t.predicted, t.equal, t.differ, t.no_gpu);
    fmt::print("fully predicted: {} of {} cases ({:.1f} %, goal 60 %); equal to the GPU's sm_90 figures: {} of {} "
               "compared ({:.1f} %, goal 90 %)\n",
               t.predicted, t.cases, pct(t.predicted, t.cases), t.equal, t.equal + t.differ,
               pct(t.equal, t.equal + t.differ));
    if (!t.differences.empty()) fmt::print("\ndiffer:\n");
    for (const auto& d : t.differences) fmt::print("  {}\n", d);
    if (!t.not_predicted.empty()) fmt::print("\nnot predicted, by first reason:\n");
    for (const auto& [why, n] : t.not_predicted) fmt::print("  {:>5}  {}\n", n, why);

    if (time) {
        fmt::print("\nstatic tier, sm_90, seconds: cold (empty compile cache) and warm (best of {})\n", repeats);
        fmt::print("{:<16} {:>12} {:>12} {:>12} {:>12}\n", "suite", "cold without", "cold with", "warm without",
                   "warm with");
        double sums[4] = {};
        for (const auto& s : suites) {
            double f[4];
            for (int with = 0; with < 2; ++with) {
                const fs::path dir = scratch / fmt::format("{}-{}", s.name, with);
                const compile::CompileCache cache(dir);
                f[with] = seconds_of(s, &cache, with == 1);
                f[2 + with] = 1e30;
                for (int k = 0; k < repeats; ++k) f[2 + with] = std::min(f[2 + with], seconds_of(s, &cache, with == 1));
            }
            fmt::print("{:<16} {:>12.3f} {:>12.3f} {:>12.3f} {:>12.3f}\n", s.name, f[0], f[1], f[2], f[3]);
            for (int i = 0; i < 4; ++i) sums[i] += f[i];
        }
        fmt::print("{:<16} {:>12.3f} {:>12.3f} {:>12.3f} {:>12.3f}\n", "all", sums[0], sums[1], sums[2], sums[3]);
        fmt::print("the analysis: cold x{:.2f} (goal at most x2), warm +{:.3f} s\n", sums[1] / sums[0],
                   sums[3] - sums[2]);
    }
    std::error_code ec;
    fs::remove_all(scratch, ec);
    return 0;
}
