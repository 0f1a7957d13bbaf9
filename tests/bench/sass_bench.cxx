// What the SASS tier costs the static tier, and what its normalised SASS weighs.
//
// For every suite given (default: suites/*.yaml), the static tier for sm_90 without the SASS tier
// (no disassembly, no sass_* figures) and with it (nvdisasm run on each cubin, counted, normalised),
// cold (an empty compile cache) and warm (the cache the cold run filled: the counts and code read
// back from it), best of REPEATS warm runs. The predicted access figures are left out of both, so
// that the difference is the SASS tier's alone. Then the normalised SASS the baseline keeps for the
// suite (baselines/<suite>/sm_90.sass.gz): cases, distinct kernels, instructions, bytes as text and
// gzip-compressed.
//
//   sass_bench [--repeats N] [SUITE.yaml ...]     (run from the repository root, nvdisasm installed)

#include "harness/compile/sass_disassembly.hxx"
#include "harness/compile/static_tier.hxx"
#include "harness/core/sass_code.hxx"
#include "harness/core/stopwatch.hxx"
#include "harness/suite/suite.hxx"
#include "harness/suite/sweep.hxx"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fmt/format.h>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace harness;

namespace {

double seconds_of(const suite::Suite& s, const compile::CompileCache& cache, bool sass,
                  std::map<std::string, SassCodeFile>* code = nullptr)
{
    const auto start = std::chrono::steady_clock::now();
    (void)compile::run_static_tier(s, suite::expand_cases(s), {"sm_90"}, &cache, false, code, sass);
    return seconds_since(start);
}

} // namespace

int main(int argc, char** argv)
{
    int repeats = 3;
    std::vector<fs::path> files;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--repeats" && i + 1 < argc)
            repeats = std::max(1, std::atoi(argv[++i]));
        else
            files.emplace_back(arg);
    }
    if (compile::find_nvdisasm().program.empty()) {
        fmt::print(stderr, "sass_bench: {}\n", compile::find_nvdisasm().not_found_reason);
        return 3;
    }
    if (files.empty()) {
        for (const auto& e : fs::directory_iterator("suites"))
            if (e.path().extension() == ".yaml") files.push_back(e.path());
        std::sort(files.begin(), files.end());
    }
    const fs::path scratch = fs::temp_directory_path() / fmt::format("sass_bench.{}", ::getpid());
    fmt::print("static tier, sm_90, no predictions, seconds: cold (empty compile cache) and warm (best of {}); "
               "nvdisasm {}\n",
               repeats, compile::find_nvdisasm().version);
    fmt::print("{:<16} {:>6} {:>12} {:>12} {:>12} {:>12} | {:>8} {:>8} {:>10} {:>11} {:>9}\n", "suite", "cases",
               "cold without", "cold with", "warm without", "warm with", "kernels", "distinct", "instrs", "text bytes",
               "gz bytes");
    double sums[4] = {};
    std::size_t cases = 0, kernels = 0, instructions = 0, text_bytes = 0, gz_bytes = 0;
    for (const auto& f : files) {
        const suite::Suite s = suite::load_suite(f);
        double t[4];
        std::map<std::string, SassCodeFile> code;
        for (int with = 0; with < 2; ++with) {
            const compile::CompileCache cache(scratch / fmt::format("{}-{}", s.name, with));
            t[with] = seconds_of(s, cache, with == 1, with == 1 ? &code : nullptr);
            t[2 + with] = 1e30;
            for (int k = 0; k < repeats; ++k) t[2 + with] = std::min(t[2 + with], seconds_of(s, cache, with == 1));
        }
        const SassCodeFile& file = code["sm_90"];
        std::size_t launched = 0, count = 0;
        for (const auto& [key, sides] : file.cases) launched += sides.first.kernels.size();
        for (const auto& [id, k] : file.kernels) count += k.instructions.size();
        const std::string text = sass_code_text(file);
        const std::string packed = gzip_text(text);
        fmt::print("{:<16} {:>6} {:>12.3f} {:>12.3f} {:>12.3f} {:>12.3f} | {:>8} {:>8} {:>10} {:>11} {:>9}\n", s.name,
                   file.cases.size(), t[0], t[1], t[2], t[3], launched, file.kernels.size(), count, text.size(),
                   packed.size());
        for (int i = 0; i < 4; ++i) sums[i] += t[i];
        cases += file.cases.size();
        kernels += file.kernels.size();
        instructions += count;
        text_bytes += text.size();
        gz_bytes += packed.size();
        std::error_code ec;
        fs::remove_all(scratch, ec);
    }
    fmt::print("{:<16} {:>6} {:>12.3f} {:>12.3f} {:>12.3f} {:>12.3f} | {:>8} {:>8} {:>10} {:>11} {:>9}\n", "all", cases,
               sums[0], sums[1], sums[2], sums[3], "", kernels, instructions, text_bytes, gz_bytes);
    fmt::print("the SASS tier: cold +{:.3f} s (x{:.2f}), warm +{:.3f} s (x{:.2f}); normalised SASS of sm_90: "
               "{:.1f} KiB as text, {:.1f} KiB compressed\n",
               sums[1] - sums[0], sums[1] / sums[0], sums[3] - sums[2], sums[3] / sums[2], text_bytes / 1024.0,
               gz_bytes / 1024.0);
    return 0;
}
