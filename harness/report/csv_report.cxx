#include "harness/core/atomic_file.hxx"
#include "harness/core/metrics.hxx"
#include "harness/report/run_report.hxx"

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
    std::string out = csv_row({"suite", "variant", "params", "arch", "metric", "value", "unit", "status"});
    for (const auto& r : report.results) {
        const std::string status = case_status_name(r.status);
        // Metrics in table order, then any the table does not know (none today).
        for (const auto& info : metric_table()) {
            const auto value = r.metric(std::string(info.name));
            if (!value) continue;
            out += csv_row({r.suite, r.variant, r.params_text, r.arch, info.name, fmt::format("{:.9g}", *value), info.unit,
                            status});
        }
        if (r.metrics.empty()) out += csv_row({r.suite, r.variant, r.params_text, r.arch, "", "", "", status});
    }
    return out;
}

} // namespace harness::report
