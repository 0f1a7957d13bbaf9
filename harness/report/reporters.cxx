#include "harness/report/reporters.hxx"
#include "harness/core/atomic_file.hxx"

#include <fmt/format.h>
#include <fmt/ostream.h>

namespace harness::report {

std::optional<double> shown_figure(const CaseResult& r, const MetricInfo& m, const ReportPlace& place,
                                   std::string_view label)
{
    const auto figure = [&](std::string_view name) {
        return r.metric(label.empty() ? std::string(name) : launch_metric_name(name, label));
    };
    auto value = figure(m.name);
    if (value && place.with_companion) *value += figure(m.roles.companion).value_or(0);
    return value;
}

namespace {

/// A reporter that writes one file of the output folder, `name`, with what `render` makes of the
/// run, and says so on the console.
decltype(ReporterInfo::write) writes_file(const char* name, std::string (*render)(const RunReport&))
{
    return [name, render](const RunReport& r, const std::filesystem::path& dir, std::ostream& console) {
        write_file_atomically(dir / name, render(r));
        fmt::print(console, "wrote {}\n", (dir / name).string());
    };
}

/// sass-<arch>.gz: the run's normalised SASS, for `harness sass-diff`; and sass_diff.txt: every
/// failing case's diff against its baseline's SASS, where one moved.
void write_sass_files(const RunReport& r, const std::filesystem::path& dir, std::ostream& console)
{
    for (const auto& [arch, code] : r.sass_code)
        if (!code.cases.empty())
            write_file_atomically(dir / fmt::format("sass-{}.gz", arch), gzip_text(sass_code_text(code)));
    std::string diffs;
    for (const auto& c : r.results)
        if (!c.sass_diff.empty())
            diffs += fmt::format("=== {} {} {} ===\n{}\n", c.variant, c.params_text, c.arch, c.sass_diff);
    if (diffs.empty()) {
        std::error_code ec;
        std::filesystem::remove(dir / "sass_diff.txt", ec); // an earlier run's
        return;
    }
    write_file_atomically(dir / "sass_diff.txt", diffs);
    fmt::print(console, "wrote {}\n", (dir / "sass_diff.txt").string());
}

const ReporterInfo reporters[] = {
    {"console", "a table of every case on standard output",
     [](const RunReport& r, const std::filesystem::path&, std::ostream& console) { write_console_table(r, console); }},
    {"csv", "results.csv: one row per case and metric (long form)", writes_file("results.csv", results_csv)},
    {"json", "results.json: the whole run, versioned; `harness report` and `harness merge` read it",
     writes_file("results.json", results_json)},
    {"html", "report.html: one self-contained page for reviewers, regressions first, then charts",
     writes_file("report.html", html_report)},
    {"junit", "junit.xml: one testcase per case, regressions as failures (GitLab, Jenkins, GitHub)",
     writes_file("junit.xml", junit_xml)},
    {"markdown", "summary.md: totals and regressions; appended to $GITHUB_STEP_SUMMARY when set",
     [](const RunReport& r, const std::filesystem::path& dir, std::ostream& console) {
         const std::string summary = markdown_summary(r);
         write_file_atomically(dir / "summary.md", summary);
         fmt::print(console, "wrote {}{}\n", (dir / "summary.md").string(),
                    append_to_step_summary(summary) ? " (and the GitHub step summary)" : "");
     }},
    {"sass",
     "sass-<arch>.gz: the run's normalised SASS; sass_diff.txt: each failing case's SASS against its "
     "baseline's",
     write_sass_files},
};

} // namespace

std::span<const ReporterInfo> reporter_table()
{
    return reporters;
}

} // namespace harness::report
