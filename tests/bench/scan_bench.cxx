// The GPU scan against full cases: a kernel of about 10 us (one wave of blocks whose warps each
// sleep ten times for about a microsecond) scanned at POINTS points (default 4,096) of an axis it
// ignores, so every point costs the same, and the same kernel run as full cases (verified, timed, profiled) at CASES
// points (default 4) by the GPU run. Prints points per second of each. Needs a GPU; says so without one. Run it from
// the repository root: the suite names its kernel relative to suites/.
//
//   scan_bench [POINTS] [CASES]

#include "harness/compile/compile_suite.hxx"
#include "harness/core/stopwatch.hxx"
#include "harness/pipeline/gpu_scan.hxx"
#include "harness/pipeline/run_suite.hxx"
#include "harness/run/gpu_session.hxx"

#include <chrono>
#include <cstdlib>
#include <exception>
#include <fmt/format.h>
#include <string>

using namespace harness;

namespace {

/// A suite of the ~10 us kernel along X, which it ignores: `values` is the YAML of X's values.
suite::Suite bench_suite(const std::string& values)
{
    return suite::parse_suite(fmt::format(R"(
suite: scan_bench
params:
  X: {}
reference: waves
tolerance: {{rel: 0, abs: 0}}
buffers:
  out: {{type: i32, count: 132, init: zeros, role: out}}
variants:
  waves:
    source: ../kernels/cliffs/waves_fixed_block.cu
    entry: waves_fixed_block
    block: [256]
    grid: [132]
    args: [out, {{i32: 10}}]
)",
                                          values),
                              std::filesystem::current_path() / "suites" / "scan_bench.yaml");
}

} // namespace

int main(int argc, char** argv)
{
    const int points = argc > 1 ? std::atoi(argv[1]) : 4096;
    const int cases = argc > 2 ? std::atoi(argv[2]) : 4;
    std::string why;
    const auto device = run::probe_device(0, &why);
    if (!device) {
        fmt::print("scan_bench: no GPU ({}); nothing measured\n", why);
        return 0;
    }
    try {
        const auto scanned = bench_suite(fmt::format("{{scan: [1, {}]}}", points));
        const auto modules = compile::compile_suite(scanned, device->arch, nullptr);
        std::vector<std::string> notes;
        const auto start = std::chrono::steady_clock::now();
        const auto maps =
            pipeline::scan_suite_gpu(scanned, modules, *device, run::resolve_settings({}, scanned), notes);
        const double scan_s = seconds_since(start);
        const std::size_t measured = maps.empty() ? 0 : maps.front().x.size();
        double median_us = 0;
        if (!maps.empty() && !maps.front().values.empty()) {
            auto v = maps.front().values;
            std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
            median_us = v[v.size() / 2];
        }
        fmt::print("GPU scan: {} points in {:.2f} s: {:.0f} points/s (kernel {:.2f} us at the median point, {} "
                   "cliffs)\n",
                   measured, scan_s, measured / scan_s, median_us, maps.empty() ? 0 : maps.front().cliffs.size());
        for (const auto& n : notes) fmt::print("  {}\n", n);

        std::string list = "[";
        for (int i = 1; i <= cases; ++i) list += fmt::format("{}{}", i > 1 ? ", " : "", i);
        const auto full = bench_suite(list + "]");
        const auto case_start = std::chrono::steady_clock::now();
        const auto report = pipeline::run_suite_gpu(full, *device, run::resolve_settings({}, full), nullptr);
        const double case_s = seconds_since(case_start);
        fmt::print("full cases (compile, verify, time, profile): {} points in {:.2f} s: {:.2f} points/s\n",
                   report.results.size(), case_s, report.results.size() / case_s);
        if (measured > 0 && !report.results.empty())
            fmt::print("the scan is {:.0f}x faster per point\n",
                       (measured / scan_s) / (static_cast<double>(report.results.size()) / case_s));
    } catch (const std::exception& e) {
        fmt::print(stderr, "scan_bench: {}\n", e.what());
        return 1;
    }
    return 0;
}
