// Change points of a suite's history on synthetic histories shaped like a CI's: HISTORIES
// histories (default 1,000) of 16 commits with 3 runs each, one case whose time (0.2..2 % noise
// between runs), DRAM bytes (a few hundred bytes of noise on 16 MiB) and registers are recorded.
// Clean ones never change; planted ones step at a random commit by 4..10 % of time, or 15..30 % of
// DRAM bytes (above the rule's 2 MiB), or one register. Prints the false change points per 1,000
// clean histories and the recall of the planted steps, by significance alone (PELT against the
// noise) and with the practical floor of the gate's rule for each figure (what
// build_suite_history keeps).
//
//   changepoint_bench [HISTORIES]

#include "../common/history_runs.hxx"
#include "harness/history/change_points.hxx"
#include "harness/history/suite_history.hxx"

#include <algorithm>
#include <array>
#include <fmt/format.h>
#include <random>
#include <string>
#include <vector>

using namespace harness;
using namespace harness::history;

namespace {

constexpr std::size_t commits = 16;

struct Planted {
    std::string metric; ///< "" for a clean history
    std::size_t at = 0;
};

std::vector<RunRecord> history_of(std::mt19937& rng, const Planted& planted)
{
    std::uniform_real_distribution<double> noise_of(0.002, 0.02), time_step(0.04, 0.10), dram_step(0.15, 0.30);
    std::normal_distribution<double> unit(0.0, 1.0);
    const double time_noise = noise_of(rng), time_factor = 1 + time_step(rng), dram_factor = 1 + dram_step(rng);
    const double base_time = std::uniform_real_distribution<double>(20.0, 500.0)(rng);
    std::vector<RunRecord> runs;
    for (std::size_t c = 0; c < commits; ++c) {
        const bool after = !planted.metric.empty() && c >= planted.at;
        for (int k = 0; k < 3; ++k) {
            RunRecord r = test::run_at("bench", c);
            CaseFigures f = test::passed_case("kernel");
            const double run_time = base_time * (after && planted.metric == "time_median" ? time_factor : 1.0) *
                                    (1 + time_noise * unit(rng));
            std::vector<double> samples;
            for (int i = 0; i < 30; ++i) samples.push_back(run_time * (1 + 0.002 * unit(rng)));
            f.time = summarize_time(samples);
            const double dram =
                16777216.0 * (after && planted.metric == "dram_bytes" ? dram_factor : 1.0) + 300.0 * unit(rng);
            const double registers = after && planted.metric == "registers" ? 33.0 : 32.0;
            f.figures = {{"time_median", f.time->median_us}, {"dram_bytes", dram}, {"registers", registers}};
            r.cases.push_back(std::move(f));
            runs.push_back(std::move(r));
        }
    }
    return runs;
}

CommitOrder order_of()
{
    std::vector<std::string> order;
    for (std::size_t c = 0; c < commits; ++c) order.push_back(test::commit_hash(c));
    return CommitOrder(order);
}

/// Change points of every series: [0] by significance alone, [1] as the history keeps them.
std::array<std::vector<std::pair<std::string, std::size_t>>, 2> found(const SuiteHistory& h)
{
    std::array<std::vector<std::pair<std::string, std::size_t>>, 2> out;
    for (const auto& s : h.series) {
        std::vector<double> values, noises;
        for (const auto& p : s.points) {
            values.push_back(p.value);
            noises.push_back(p.noise);
        }
        std::sort(noises.begin(), noises.end());
        const SeriesAnalysis alone = s.stability == Stability::exact
                                         ? analyze_exact(values)
                                         : analyze_noisy(values, noises.empty() ? 0.0 : noises[noises.size() / 2]);
        for (const auto& c : alone.change_points) out[0].emplace_back(s.metric, c.index);
        for (const auto& c : s.analysis.change_points) out[1].emplace_back(s.metric, c.index);
    }
    return out;
}

} // namespace

int main(int argc, char** argv)
{
    const std::size_t histories = argc > 1 ? std::stoul(argv[1]) : 1000;
    std::mt19937 rng(20261128);
    const CommitOrder order = order_of();
    std::array<std::size_t, 2> false_points{};
    for (std::size_t i = 0; i < histories; ++i) {
        const auto f = found(build_suite_history("bench", history_of(rng, {}), order));
        for (std::size_t k = 0; k < 2; ++k) false_points[k] += f[k].size();
    }
    const std::array<const char*, 3> metrics = {"time_median", "dram_bytes", "registers"};
    std::array<std::array<std::size_t, 2>, 3> caught{}, extra{};
    std::uniform_int_distribution<std::size_t> at(3, commits - 3);
    for (std::size_t m = 0; m < metrics.size(); ++m)
        for (std::size_t i = 0; i < histories; ++i) {
            const Planted planted{metrics[m], at(rng)};
            const auto f = found(build_suite_history("bench", history_of(rng, planted), order));
            for (std::size_t k = 0; k < 2; ++k)
                for (const auto& [metric, index] : f[k]) {
                    if (metric == planted.metric && index == planted.at)
                        ++caught[m][k];
                    else
                        ++extra[m][k];
                }
        }
    fmt::print("change points over {} commits x 3 runs, {} histories each (significance alone / with the gate's "
               "rule as a floor):\n",
               commits, histories);
    fmt::print("  false change points per 1,000 clean histories: {:.1f} / {:.1f}\n",
               1e3 * static_cast<double>(false_points[0]) / static_cast<double>(histories),
               1e3 * static_cast<double>(false_points[1]) / static_cast<double>(histories));
    const std::array<const char*, 3> planted_names = {"time +4..10 %", "DRAM bytes +15..30 %", "registers +1"};
    for (std::size_t m = 0; m < metrics.size(); ++m)
        fmt::print("  {:<22} recall {:.3f} / {:.3f}, other change points per 1,000: {:.1f} / {:.1f}\n",
                   planted_names[m], static_cast<double>(caught[m][0]) / static_cast<double>(histories),
                   static_cast<double>(caught[m][1]) / static_cast<double>(histories),
                   1e3 * static_cast<double>(extra[m][0]) / static_cast<double>(histories),
                   1e3 * static_cast<double>(extra[m][1]) / static_cast<double>(histories));
    return 0;
}
