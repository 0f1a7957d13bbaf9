// Renders the HTML report of the fixtures in headless Chromium: the page's script must report no
// errors and every chart must have marks on screen; a screenshot is taken. Skips, saying why,
// when no Chromium is installed (ci/install-deps.sh installs it).
//
// The screenshots stay in $HARNESS_TEST_OUT (default: <temp>/harness-html-render) for a look.

#include "harness/core/atomic_file.hxx"
#include "harness/report/reporters.hxx"
#include "test_paths.hxx"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <gtest/gtest.h>
#include <map>
#include <regex>
#include <set>
#include <string>

using namespace harness;
namespace fs = std::filesystem;

namespace {

/// The Chromium executable on PATH, or "" when there is none.
std::string find_chromium()
{
    const char* path = std::getenv("PATH");
    if (!path) return {};
    const std::string dirs = path;
    for (std::size_t start = 0; start <= dirs.size();) {
        const std::size_t end = std::min(dirs.find(':', start), dirs.size());
        for (const char* name : {"chromium", "chromium-browser", "google-chrome"}) {
            const fs::path candidate = fs::path(dirs.substr(start, end - start)) / name;
            if (!candidate.parent_path().empty() && fs::exists(candidate)) return candidate.string();
        }
        start = end + 1;
    }
    return {};
}

/// Runs a shell command and returns its standard output and exit status.
std::pair<std::string, int> run(const std::string& command)
{
    std::string output;
    FILE* pipe = popen(command.c_str(), "r");
    if (!pipe) return {"popen failed", -1};
    std::array<char, 4096> buffer{};
    while (std::size_t n = std::fread(buffer.data(), 1, buffer.size(), pipe)) output.append(buffer.data(), n);
    return {output, pclose(pipe)};
}

fs::path output_dir()
{
    const char* configured = std::getenv("HARNESS_TEST_OUT");
    const fs::path dir = configured ? fs::path(configured) : fs::temp_directory_path() / "harness-html-render";
    fs::create_directories(dir);
    return dir;
}

std::string browser_flags()
{
    // No sandbox: CI containers run as root; no GPU: the page needs none.
    return " --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --hide-scrollbars --no-first-run"
           " --virtual-time-budget=5000 ";
}

/// The rendered charts' names and their counted marks, from the dumped DOM.
std::map<std::string, int> rendered_charts(const std::string& dom)
{
    std::map<std::string, int> charts;
    const std::regex svg("<svg[^>]*>");
    const std::regex name("data-chart=\"([^\"]+)\"");
    const std::regex marks("data-rendered-marks=\"([0-9]+)\"");
    for (auto it = std::sregex_iterator(dom.begin(), dom.end(), svg); it != std::sregex_iterator(); ++it) {
        const std::string tag = it->str();
        std::smatch n, m;
        if (!std::regex_search(tag, n, name)) continue;
        charts[n[1]] = std::regex_search(tag, m, marks) ? std::stoi(m[1]) : -1;
    }
    return charts;
}

void render_and_check(const char* fixture, const std::set<std::string>& expected_charts)
{
    const std::string chromium = find_chromium();
    if (chromium.empty())
        GTEST_SKIP() << "no chromium on PATH (ci/install-deps.sh installs it): the report was not rendered";

    const fs::path dir = output_dir();
    const std::string stem = fs::path(fixture).stem().string();
    const fs::path page = dir / (stem + ".html");
    const fs::path png = dir / (stem + ".png");
    write_file_atomically(
        page, report::html_report(harness::read_results_json(repo_root() / "tests" / "fixtures" / fixture)));
    fs::remove(png);

    const auto [dom, dom_status] =
        run("timeout 120 " + chromium + browser_flags() + "--dump-dom 'file://" + page.string() + "' 2>/dev/null");
    ASSERT_EQ(dom_status, 0) << "chromium --dump-dom failed";
    std::smatch status;
    ASSERT_TRUE(std::regex_search(dom, status, std::regex("data-report-status=\"([^\"]*)\""))) << dom.substr(0, 400);
    EXPECT_EQ(status[1], "ok") << "the page's script reported a problem";

    const auto charts = rendered_charts(dom);
    for (const auto& name : expected_charts) {
        ASSERT_TRUE(charts.contains(name)) << "chart missing: " << name;
        EXPECT_GT(charts.at(name), 0) << "chart without marks: " << name;
    }
    std::smatch count;
    ASSERT_TRUE(std::regex_search(dom, count, std::regex("data-charts=\"([0-9]+)\"")));
    EXPECT_EQ(std::stoul(count[1]), charts.size());

    const auto [shot_log, shot_status] =
        run("timeout 120 " + chromium + browser_flags() + "--screenshot='" + png.string() +
            "' --window-size=1400,2000 'file://" + page.string() + "' 2>&1");
    ASSERT_EQ(shot_status, 0) << shot_log;
    ASSERT_TRUE(fs::exists(png)) << shot_log;
    EXPECT_GT(fs::file_size(png), 20000u) << "a screenshot this small is a blank page";
    std::printf("screenshot: %s\n", png.string().c_str());
}

} // namespace

TEST(HtmlRender, GpuRunRendersEveryChartWithoutErrors)
{
    render_and_check("gemm_results.json", {"vs-baseline-time_median", "vs-baseline-excess_shared_wavefronts",
                                           "scaling-time_median", "scaling-gflops", "roofline", "occupancy"});
}

TEST(HtmlRender, StaticTierRendersWithoutErrors)
{
    render_and_check("gemm_static_results.json", {"occupancy"});
}
