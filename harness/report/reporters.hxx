#pragma once
// The reporters: one row each in an explicit table, each reading a RunReport (core/run_report.hxx).

#include "harness/core/metrics.hxx"
#include "harness/core/run_report.hxx"

#include <filesystem>
#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace harness::report {

/// A reporter writes a report into a folder (or to the console).
struct ReporterInfo {
    const char* name;
    const char* description;
    std::function<void(const RunReport&, const std::filesystem::path& out_dir, std::ostream& console)> write;
};

/// All reporters, by name.
std::span<const ReporterInfo> reporter_table();

/// The console table printed at the end of a run.
void write_console_table(const RunReport& report, std::ostream& out);

/// The verdicts section of the console output: regressions first, with their messages, then totals.
void write_console_verdicts(const RunReport& report, std::ostream& out);

/// A case's predicted access figures in one line, labelled as predicted, or "not predicted: <reason>";
/// "" when the case has no prediction (predicted_report.cxx).
std::string predicted_summary_text(const CaseResult& r);

/// The console's section of predicted access figures: per case its totals or why not, and its worst lines.
void write_console_predictions(const RunReport& report, std::ostream& out);

/// The HTML page's section of predicted accesses, worst lines first; "" when no case has a prediction.
std::string predicted_accesses_section(const RunReport& report);

/// junit.xml: one <testcase> per case (classname = suite, name = "variant params").
std::string junit_xml(const RunReport& report);

/// "kernel transpose_naive in kernels/transpose/transpose.cu", "kernels row_mean, row_rstd and
/// normalize in kernels/layernorm/layernorm.cu": what a failed case ran, for its failure; "" when
/// the result does not say (a built-in library call names itself).
std::string kernels_text(const CaseResult& r);

/// A case's figure as a report shows it at `place` (MetricRoles::html or ::console): the metric,
/// plus its companion where the place says so (static and dynamic shared memory as one); of one
/// launch when `label` names it.
std::optional<double> shown_figure(const CaseResult& r, const MetricInfo& m, const ReportPlace& place,
                                   std::string_view label = {});

/// summary.md: totals and the regressions, in GitHub-flavoured Markdown, at most `max_bytes`.
std::string markdown_summary(const RunReport& report, std::size_t max_bytes = 1024 * 1024);

/// Appends `text` to the file named by $GITHUB_STEP_SUMMARY when that is set; true if it did.
bool append_to_step_summary(const std::string& text);

/// results.csv in long form: suite, variant, params, arch, metric, value, unit, status, baseline,
/// delta, verdict (plus status rows, and a row of metric "cliff" per cliff of the cliff maps).
std::string results_csv(const RunReport& report);

/// A CSV field, quoted as RFC 4180 requires.
std::string csv_field(std::string_view text);

/// report.html: one self-contained page (inline style, SVG charts drawn here, a small sorting script),
/// regressions first; it loads nothing from the network.
std::string html_report(const RunReport& report);

} // namespace harness::report
