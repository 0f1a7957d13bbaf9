// The static tier's predicted access figures as the console and the HTML page show them: per case
// its predicted totals or why they are not predicted, and its worst accesses, always labelled as
// predicted (compile/predicted_accesses.hxx).

#include "harness/core/metrics.hxx"
#include "harness/report/html_parts.hxx"
#include "harness/report/html_text.hxx"
#include "harness/report/reporters.hxx"

#include <fmt/format.h>
#include <fmt/ostream.h>

namespace harness::report {

namespace {

/// Accesses shown per case: the worst, and only those with an excess.
constexpr std::size_t worst_shown = 3;

bool has_prediction(const CaseResult& r)
{
    return !r.not_predicted.empty() || r.metric(metric::predicted_excess_global_sectors).has_value();
}

std::string figure(const CaseResult& r, const char* name, const char* format)
{
    const auto v = r.metric(name);
    return v ? fmt::format(fmt::runtime(format), *v) : "-";
}

} // namespace

std::string predicted_summary_text(const CaseResult& r)
{
    if (!r.not_predicted.empty())
        return fmt::format("not predicted: {}{}", r.not_predicted.front(),
                           r.not_predicted.size() > 1 ? fmt::format(" (and {} more)", r.not_predicted.size() - 1)
                                                      : std::string());
    if (!r.metric(metric::predicted_excess_global_sectors)) return "";
    return fmt::format("ld {} sectors/request, st {}, excess sectors {}, excess wavefronts {} (predicted)",
                       figure(r, metric::predicted_global_ld_sectors_per_request, "{:.4g}"),
                       figure(r, metric::predicted_global_st_sectors_per_request, "{:.4g}"),
                       figure(r, metric::predicted_excess_global_sectors, "{:.0f}"),
                       figure(r, metric::predicted_excess_shared_wavefronts, "{:.0f}"));
}

void write_console_predictions(const RunReport& report, std::ostream& out)
{
    std::size_t predicted = 0, not_predicted = 0;
    for (const auto& r : report.results) {
        if (!r.not_predicted.empty())
            ++not_predicted;
        else if (has_prediction(r))
            ++predicted;
    }
    if (predicted + not_predicted == 0) return;
    fmt::print(out,
               "\npredicted accesses (from the kernels' PTX, not measured): {} cases predicted, {} not predicted\n",
               predicted, not_predicted);
    for (const auto& r : report.results) {
        if (!has_prediction(r)) continue;
        fmt::print(out, "  {} {} [{}]: {}\n", r.variant, r.params_text, r.arch, predicted_summary_text(r));
        std::size_t shown = 0;
        for (const auto& a : r.predicted_accesses) {
            if (shown == worst_shown || a.excess() <= 0) break;
            fmt::print(out, "    {}\n", a.text());
            ++shown;
        }
    }
}

std::string predicted_accesses_section(const RunReport& report)
{
    using html::case_label, html::number_cell, html::text_cell;
    std::string rows;
    for (const auto& r : report.results) {
        if (!has_prediction(r)) continue;
        if (!r.not_predicted.empty()) {
            rows += fmt::format("<tr>{}<td colspan=\"5\">{}</td></tr>\n", text_cell(case_label(r)),
                                html_escape(predicted_summary_text(r)));
            continue;
        }
        std::size_t shown = 0;
        for (const auto& a : r.predicted_accesses) {
            if (shown == worst_shown || a.excess() <= 0) break;
            ++shown;
            const bool shared = a.is_shared();
            const double per = a.requests > 0 ? (shared ? a.wavefronts : a.sectors) / a.requests : 0.0;
            const double ideal = a.requests > 0 ? (shared ? a.ideal_wavefronts : a.ideal_sectors) / a.requests : 0.0;
            rows += fmt::format("<tr>{}{}<td><code>{}:{}</code></td>{}{}{}</tr>\n", text_cell(case_label(r)),
                                text_cell(a.kernel), html_escape(a.file), a.line,
                                text_cell(a.access + (a.buffer.empty() ? "" : " " + a.buffer + "[]")),
                                number_cell(per, fmt::format("{:.4g} {}", per, shared ? "wavefronts" : "sectors")),
                                number_cell(ideal, fmt::format("{:.4g}", ideal)));
        }
        if (shown == 0)
            rows += fmt::format("<tr>{}<td colspan=\"5\">{}</td></tr>\n", text_cell(case_label(r)),
                                html_escape(predicted_summary_text(r) + "; no access above its ideal"));
    }
    if (rows.empty()) return {};
    return "<section id=\"predicted-accesses\">\n<h2>Predicted accesses</h2>\n<p class=\"note\">Predicted from each "
           "kernel's PTX at the case's launch, not measured: the worst lines per case, sectors (or wavefronts) per "
           "request against the ideal; cases whose accesses are not all predicted say why.</p>\n"
           "<div class=\"scroll\"><table class=\"predicted\"><thead><tr><th>case</th><th>kernel</th><th>line</th>"
           "<th>access</th><th>per request (predicted)</th><th>ideal</th></tr></thead><tbody>\n" +
           rows + "</tbody></table></div>\n</section>\n";
}

} // namespace harness::report
