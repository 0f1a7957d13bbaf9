// The history store at scale: records R runs of C cases with F figures each (default 10,000 runs of
// 25 cases x 40 figures = 1,000 figures per run) into a fresh store, then prints the time to
// record, to build the index from nothing, to bring an up-to-date index up to date, to load every
// run of the suite and to find every series' change points, and the bytes per run.
//
//   history_bench [RUNS] [FOLDER]

#include "harness/core/metrics.hxx"
#include "harness/history/history_store.hxx"
#include "harness/history/suite_history.hxx"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fmt/format.h>
#include <random>
#include <string>
#include <thread>

using namespace harness;
using namespace harness::history;
namespace fs = std::filesystem;

namespace {

double seconds_since(std::chrono::steady_clock::time_point start)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::uintmax_t folder_bytes(const fs::path& dir)
{
    std::uintmax_t bytes = 0;
    for (const auto& e : fs::recursive_directory_iterator(dir))
        if (e.is_regular_file()) bytes += e.file_size();
    return bytes;
}

} // namespace

int main(int argc, char** argv)
{
    const std::size_t runs = argc > 1 ? std::stoul(argv[1]) : 10000;
    const fs::path folder = argc > 2 ? fs::path(argv[2]) : fs::temp_directory_path() / "harness-history-bench";
    constexpr std::size_t cases = 25, figures_per_case = 40, samples = 30;
    fs::remove_all(folder);

    // The figures a GPU run has: time and 39 exact or noisy ones from the metric table.
    std::vector<std::string> names = {metric::time_median};
    for (const auto& m : metric_table())
        if (names.size() < figures_per_case && m.name != metric::time_median) names.emplace_back(m.name);

    std::mt19937 rng(1);
    std::normal_distribution<double> noise(0.0, 0.005);
    const HistoryStore store(folder);
    auto start = std::chrono::steady_clock::now();
    for (std::size_t r = 0; r < runs; ++r) {
        RunRecord rec;
        rec.suite = "bench";
        rec.commit = fmt::format("{:040x}", r / 3 + 1); // three runs per commit
        rec.commit_date = fmt::format("2026-01-01T00:00:00Z+{:08}", r / 3);
        rec.timestamp = rec.commit_date;
        rec.mode = RunMode::gpu;
        rec.arch = "sm_90";
        rec.gpu = "NVIDIA H100 80GB HBM3";
        rec.driver = rec.cuda = "13.0";
        rec.harness_version = "0.1.0";
        rec.results_path = fmt::format("/ci/reports/{}/bench/results.json", r);
        for (std::size_t c = 0; c < cases; ++c) {
            CaseFigures f{fmt::format("variant{}", c % 5),
                          fmt::format("N={}", 1024 << (c / 5)),
                          "sm_90",
                          CaseStatus::passed,
                          {},
                          {}};
            std::vector<double> t(samples);
            for (auto& s : t) s = 100.0 * static_cast<double>(c + 1) * (1.0 + noise(rng));
            f.time = summarize_time(t);
            f.figures.emplace_back(names[0], f.time->median_us);
            for (std::size_t k = 1; k < names.size(); ++k)
                f.figures.emplace_back(names[k], static_cast<double>((c + 1) * 4096 + k * 17));
            rec.cases.push_back(std::move(f));
        }
        store.add(rec);
    }
    const double record_s = seconds_since(start);
    const auto run_bytes = folder_bytes(folder / "runs");

    start = std::chrono::steady_clock::now();
    const auto first = store.refresh_index();
    const double index_s = seconds_since(start);
    start = std::chrono::steady_clock::now();
    const auto again = store.refresh_index();
    const double refresh_s = seconds_since(start);
    start = std::chrono::steady_clock::now();
    const auto loaded = store.load_runs("bench");
    const double load_s = seconds_since(start);
    start = std::chrono::steady_clock::now();
    const auto h = build_suite_history("bench", loaded, CommitOrder({}));
    const double analyse_s = seconds_since(start);
    std::size_t changes = 0;
    for (const auto& s : h.series) changes += s.analysis.change_points.size() + (s.analysis.creep ? 1 : 0);

    fmt::print("history store: {} runs of {} cases x {} figures ({} figures per run), {} threads\n", runs, cases,
               names.size(), cases * names.size(), std::thread::hardware_concurrency());
    fmt::print("  record      {:8.2f} s  ({:.2f} ms per run, each flushed to disk)\n", record_s,
               1e3 * record_s / static_cast<double>(runs));
    fmt::print("  index       {:8.2f} s  ({} files read into a new index)\n", index_s, first.added);
    fmt::print("  re-index    {:8.3f} s  (up to date: {} read)\n", refresh_s, again.added);
    fmt::print("  load        {:8.2f} s  ({} runs, {} figures)\n", load_s, loaded.size(),
               loaded.size() * cases * names.size());
    fmt::print("  analyse     {:8.2f} s  ({} series over {} commits, {} change points or creeps)\n", analyse_s,
               h.series.size(), h.commits.size(), changes);
    fmt::print("  run files   {:8} bytes per run ({:.1f} MB in all)\n", run_bytes / std::max<std::size_t>(runs, 1),
               static_cast<double>(run_bytes) / 1e6);
    fmt::print("  index       {:8} bytes per run ({:.1f} MB)\n",
               fs::file_size(store.index_file()) / std::max<std::size_t>(runs, 1),
               static_cast<double>(fs::file_size(store.index_file())) / 1e6);
    return 0;
}
