#include "harness/core/atomic_file.hxx"
#include "harness/core/metrics.hxx"
#include "harness/report/reporters.hxx"

#include <csv.h>
#include <fmt/format.h>

namespace harness::report {

std::string csv_field(std::string_view text)
{
    std::string out(csv_write(nullptr, 0, text.data(), text.size()), '\0');
    csv_write(out.data(), out.size(), text.data(), text.size());
    return out;
}

namespace {

std::string csv_row(std::initializer_list<std::string_view> fields)
{
    std::string row;
    for (const auto& f : fields) {
        if (!row.empty()) row += ',';
        row += csv_field(f);
    }
    return row + "\r\n";
}

} // namespace

std::string results_csv(const RunReport& report)
{
    std::string out = csv_row(
        {"suite", "variant", "params", "arch", "metric", "value", "unit", "status", "baseline", "delta", "verdict"});
    for (const auto& r : report.results) {
        const std::string status = case_status_name(r.status);
        // Metrics in table order, then any the table does not know (none today).
        for (const auto& info : metric_table()) {
            const auto value = r.metric(std::string(info.name));
            if (!value) continue;
            // The baseline comes from the baseline comparison; the verdict is the worst of that and any expect rule.
            std::optional<double> baseline;
            std::vector<Verdict> verdicts;
            for (const auto& v : r.verdicts) {
                if (v.metric != info.name) continue;
                if (v.baseline && !v.rule.starts_with("expect")) baseline = v.baseline;
                verdicts.push_back(v.verdict);
            }
            CaseResult only;
            for (const Verdict v : verdicts) {
                MetricVerdict mv;
                mv.verdict = v;
                only.verdicts.push_back(mv);
            }
            const auto worst = worst_verdict(only);
            out +=
                csv_row({r.suite, r.variant, r.params_text, r.arch, info.name, fmt::format("{:.9g}", *value), info.unit,
                         status, baseline ? fmt::format("{:.9g}", *baseline) : "",
                         baseline ? fmt::format("{:.9g}", *value - *baseline) : "", worst ? verdict_name(*worst) : ""});
        }
        if (r.metrics.empty())
            out += csv_row({r.suite, r.variant, r.params_text, r.arch, "", "", "", status, "", "", ""});
    }
    return out;
}

} // namespace harness::report
