#include "harness/report/run_report.hxx"

#include <fmt/format.h>
#include <fmt/ostream.h>

namespace harness::report {

Totals totals(const RunReport& report, bool fail_on_improvement)
{
    Totals t;
    for (const auto& r : report.results) {
        if (r.status == CaseStatus::skipped) {
            ++t.skipped;
            continue;
        }
        if (case_status_fails(r.status)) {
            ++t.failed;
            continue;
        }
        bool regressed = false, improved = false, waived = false;
        for (const auto& v : r.verdicts) {
            regressed = regressed || verdict_fails(v.verdict, fail_on_improvement);
            improved = improved || v.verdict == Verdict::improved;
            waived = waived || v.verdict == Verdict::waived;
        }
        if (regressed) {
            ++t.regressed;
        } else {
            ++t.passed;
            if (improved) ++t.improved;
            if (waived) ++t.waived;
        }
    }
    return t;
}

namespace {

std::string metric_text(const CaseResult& r, const char* name, const char* format)
{
    const auto v = r.metric(name);
    return v ? fmt::format(fmt::runtime(format), *v) : "-";
}

std::string time_text(const CaseResult& r)
{
    const auto v = r.metric("time_median");
    if (!v) return "-";
    if (*v >= 1e4) return fmt::format("{:.2f} ms", *v / 1e3);
    return fmt::format("{:.2f} us", *v);
}

} // namespace

namespace {

void write_static_table(const RunReport& report, std::ostream& out, std::size_t variant_width,
                        std::size_t params_width)
{
    const std::string header =
        fmt::format("{:<{}}  {:<{}}  {:<6}  {:<8}  {:>4}  {:>6}  {:>6}  {:>6}  {:>6}  {:>5}  {}", "variant",
                    variant_width, "params", params_width, "arch", "status", "regs", "spill", "smem", "local",
                    "blocks", "occ", "limiter");
    fmt::print(out, "{}\n{}\n", header, std::string(header.size(), '-'));
    for (const auto& r : report.results) {
        const std::string status = r.status == CaseStatus::passed ? "ok" : case_status_name(r.status);
        const auto occupancy = r.metric("theoretical_occupancy");
        const double spill =
            r.metric("spill_store_bytes").value_or(0) + r.metric("spill_load_bytes").value_or(0);
        fmt::print(out, "{:<{}}  {:<{}}  {:<6}  {:<8}  {:>4}  {:>6}  {:>6}  {:>6}  {:>6}  {:>5}  {}\n",
                   r.variant, variant_width, r.params_text, params_width, r.arch, status.substr(0, 8),
                   metric_text(r, "registers", "{:.0f}"),
                   r.metric("registers") ? fmt::format("{:.0f}", spill) : "-",
                   r.metric("static_shared_bytes")
                       ? fmt::format("{:.0f}", *r.metric("static_shared_bytes") +
                                                   r.metric("dynamic_shared_bytes").value_or(0))
                       : "-",
                   metric_text(r, "local_bytes", "{:.0f}"), metric_text(r, "blocks_per_sm", "{:.0f}"),
                   occupancy ? fmt::format("{:.0f}%", *occupancy * 100) : "-", r.occupancy_limiter);
    }
}

} // namespace

void write_console_table(const RunReport& report, std::ostream& out)
{
    std::size_t variant_width = 7, params_width = 6;
    for (const auto& r : report.results) {
        variant_width = std::max(variant_width, r.variant.size());
        params_width = std::max(params_width, r.params_text.size());
    }
    if (report.mode == "static") {
        write_static_table(report, out, variant_width, params_width);
    } else {
        const std::string header =
            fmt::format("{:<{}}  {:<{}}  {:<8}  {:>10}  {:>6}  {:>9}  {:>8}  {:>4}  {:>6}  {:>5}  {}",
                        "variant", variant_width, "params", params_width, "status", "median", "noise",
                        "GFLOP/s", "GB/s", "regs", "smem", "occ", "limiter");
        fmt::print(out, "{}\n{}\n", header, std::string(header.size(), '-'));
        for (const auto& r : report.results) {
            const std::string status = r.status == CaseStatus::passed ? "ok" : case_status_name(r.status);
            const auto occupancy = r.metric("theoretical_occupancy");
            const auto smem = r.metric("static_shared_bytes");
            const auto dyn = r.metric("dynamic_shared_bytes");
            fmt::print(out, "{:<{}}  {:<{}}  {:<8}  {:>10}  {:>6}  {:>9}  {:>8}  {:>4}  {:>6}  {:>5}  {}\n",
                       r.variant, variant_width, r.params_text, params_width, status.substr(0, 8),
                       time_text(r), metric_text(r, "time_noise", "{:.1f}%"),
                       metric_text(r, "gflops", "{:.1f}"), metric_text(r, "bandwidth", "{:.1f}"),
                       metric_text(r, "registers", "{:.0f}"),
                       smem ? fmt::format("{:.0f}", *smem + dyn.value_or(0)) : "-",
                       occupancy ? fmt::format("{:.0f}%", *occupancy * 100) : "-", r.occupancy_limiter);
        }
    }
    bool any_message = false;
    for (const auto& r : report.results) {
        if (!case_status_fails(r.status) || r.message.empty()) continue;
        if (!any_message) fmt::print(out, "\nfailures:\n");
        any_message = true;
        fmt::print(out, "  {} {} [{}]: {}\n", r.variant, r.params_text, case_status_name(r.status),
                   r.message);
    }
    const Totals t = totals(report);
    fmt::print(out, "\n{}: {} passed, {} failed, {} skipped ({} on {})\n", report.suite, t.passed, t.failed,
               t.skipped, report.mode, report.device_name.empty() ? report.arch : report.device_name);
}

} // namespace harness::report
