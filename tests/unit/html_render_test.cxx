// Renders the HTML report of the fixtures in headless Chromium: the page's script must report no
// errors and every chart must have marks on screen; a screenshot is taken. The planted SASS
// regressions' report (tests/suites/planted_sass.yaml, run in the static tier) must show each
// case's SASS diff under its failing SASS verdict, collapsed until opened, its first hunk at the
// verdict's line with the instructions that changed there. Skips, saying why, when no Chromium
// (ci/install-deps.sh installs it) or, for the planted run, no nvdisasm is installed.
//
// The screenshots stay in $HARNESS_TEST_OUT (default: <temp>/harness-html-render) for a look.

#include "harness/compile/sass_disassembly.hxx"
#include "harness/core/atomic_file.hxx"
#include "harness/report/reporters.hxx"
#include "planted_sass_run.hxx"
#include "test_paths.hxx"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <gtest/gtest.h>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>

namespace html_render_test {

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

namespace {

/// Appended to a report page: for each SASS diff under a verdict, what the browser shows of it
/// (collapsed: its instructions not rendered; opened: rendered) and the verdict row it sits in,
/// written into the page as JSON for the dumped DOM.
constexpr const char* sass_diff_probe = R"(<script>
(function () {
  var found = [];
  document.querySelectorAll('details.sass-diff').forEach(function (d) {
    var pre = d.querySelector('pre');
    var row = d.closest('tbody') ? d.closest('tbody').querySelector('tr') : null;
    var metric = row ? row.querySelector('.metric') : null;
    var source = row ? row.querySelector('td:last-child code') : null;
    var verdict = d.closest('tr.detail') ? d.closest('tr.detail').textContent : '';
    // Whether the instructions are rendered: laid out, and not hidden by a closed <details>.
    var visible = function () {
      return pre.getClientRects().length > 0 && (!pre.checkVisibility || pre.checkVisibility());
    };
    var was_open = d.open, was_visible = visible();
    d.open = true;
    found.push({metric: metric ? metric.textContent : '', at: source ? source.textContent : '',
                verdict: verdict.slice(0, 400), collapsed: !was_open && !was_visible,
                shown: visible() && pre.offsetHeight > 0, text: pre.innerText});
  });
  var out = document.createElement('pre');
  out.id = 'sass-diff-probe';
  out.textContent = JSON.stringify(found);
  document.body.appendChild(out);
})();
</script>)";

/// `text` with the entities a DOM dump writes in text (&amp; &lt; &gt; &quot; &#39;) read back.
std::string unescape_html(const std::string& text)
{
    std::string out;
    for (std::size_t i = 0; i < text.size();) {
        bool replaced = false;
        for (const auto& [entity, c] : std::initializer_list<std::pair<std::string_view, char>>{
                 {"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&#39;", '\''}})
            if (std::string_view(text).substr(i).starts_with(entity)) {
                out += c;
                i += entity.size();
                replaced = true;
                break;
            }
        if (!replaced) out += text[i++];
    }
    return out;
}

} // namespace

TEST(HtmlRender, PlantedSassRegressionsShowTheirHunkCollapsedUnderTheVerdict)
{
    const std::string chromium = find_chromium();
    if (chromium.empty())
        GTEST_SKIP() << "no chromium on PATH (ci/install-deps.sh installs it): the report was not rendered";
    if (compile::find_nvdisasm().program.empty()) GTEST_SKIP() << compile::find_nvdisasm().not_found_reason;
    const PlantedSassRun planted;
    ASSERT_EQ(planted.code, 1) << planted.console;
    std::string page = read_file(planted.reports() / "report.html");
    const auto body_end = page.rfind("</body>");
    ASSERT_NE(body_end, std::string::npos);
    page.insert(body_end, sass_diff_probe);
    const fs::path probed = output_dir() / "planted_sass.html";
    write_file_atomically(probed, page);

    const auto [dom, status] =
        run("timeout 120 " + chromium + browser_flags() + "--dump-dom 'file://" + probed.string() + "' 2>/dev/null");
    ASSERT_EQ(status, 0) << "chromium --dump-dom failed";
    std::smatch report_status;
    ASSERT_TRUE(std::regex_search(dom, report_status, std::regex("data-report-status=\"([^\"]*)\"")));
    EXPECT_EQ(report_status[1], "ok") << "the page's script reported a problem";
    const auto start = dom.find("<pre id=\"sass-diff-probe\">");
    ASSERT_NE(start, std::string::npos) << "the probe did not run";
    const auto text_start = dom.find('>', start) + 1;
    const auto probe =
        nlohmann::json::parse(unescape_html(dom.substr(text_start, dom.find("</pre>", text_start) - text_start)));
    ASSERT_EQ(probe.size(), planted_sass_regressions().size()) << probe.dump(1).substr(0, 2000);
    for (const auto& p : planted_sass_regressions()) {
        SCOPED_TRACE(p.variant);
        const auto shown = std::find_if(probe.begin(), probe.end(),
                                        [&](const nlohmann::json& d) { return d.value("metric", "") == p.metric; });
        ASSERT_NE(shown, probe.end()) << "no SASS diff under the " << p.metric << " verdict";
        // Under the failing SASS verdict, its source cell naming the line, the message both forms.
        EXPECT_EQ(shown->value("at", ""), p.location);
        EXPECT_NE(shown->value("verdict", "").find(p.message.substr(p.message.find(": ") + 2, 40)), std::string::npos)
            << shown->value("verdict", "");
        // Collapsed until opened; opened, its first hunk is the verdict's line, its changes there.
        EXPECT_TRUE(shown->value("collapsed", false));
        EXPECT_TRUE(shown->value("shown", false));
        const std::string text = shown->value("text", "");
        EXPECT_EQ(text.find("@@ " + p.kernel + " " + p.location + " "), 0u) << text.substr(0, 300);
        const std::string first_hunk = text.substr(0, text.find("\n@@"));
        for (const auto& line : p.hunk)
            EXPECT_NE(first_hunk.find("\n" + line), std::string::npos) << line << "\n" << first_hunk.substr(0, 2000);
    }
    const fs::path png = output_dir() / "planted_sass.png";
    const auto [shot_log, shot_status] =
        run("timeout 120 " + chromium + browser_flags() + "--screenshot='" + png.string() +
            "' --window-size=1400,2000 'file://" + (planted.reports() / "report.html").string() + "' 2>&1");
    ASSERT_EQ(shot_status, 0) << shot_log;
    std::printf("screenshot: %s\n", png.string().c_str());
}

} // namespace html_render_test
