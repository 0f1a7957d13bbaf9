// junit.xml: one <testcase> per case, readable by GitLab, Jenkins and the GitHub JUnit actions.

#include "harness/core/metrics.hxx"
#include "harness/core/text.hxx"
#include "harness/report/html_text.hxx"
#include "harness/report/reporters.hxx"

#include <algorithm>
#include <fmt/format.h>

namespace harness::report {

namespace {

/// A failure's text, followed by what the case ran.
std::string with_kernels(const CaseResult& r, const std::string& text)
{
    const std::string kernels = kernels_text(r);
    return kernels.empty() ? text : text + "\n(" + kernels + ")";
}

} // namespace

namespace {

std::string case_name(const RunReport& report, const CaseResult& r)
{
    std::string name = r.variant + " " + r.params_text;
    // The static tier has one result per architecture: keep the names unique.
    if (report.mode == RunMode::static_tier) name += " [" + r.arch + "]";
    return name;
}

/// The failing verdicts of a case, one line each.
std::string failing_verdicts(const CaseResult& r, bool fail_on_improvement, std::size_t* count)
{
    std::string text;
    *count = 0;
    for (const auto& v : r.verdicts)
        if (verdict_fails(v.verdict, fail_on_improvement)) {
            ++*count;
            text += fmt::format("{} {}: {} (rule {}){}\n", v.metric, verdict_name(v.verdict), v.message, v.rule,
                                v.location.empty() ? "" : " at " + v.location);
        }
    return text;
}

} // namespace

std::string junit_xml(const RunReport& report)
{
    std::size_t failures = 0, errors = 0, skipped = 0;
    std::string cases;
    for (const auto& r : report.results) {
        cases += fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"{:.3f}\">\n", xml_escape(report.suite),
                             xml_escape(case_name(report, r)), r.metric(metric::time_median).value_or(0.0) * 1e-6);
        switch (r.status) {
        case CaseStatus::passed: {
            std::size_t count = 0;
            const std::string text = failing_verdicts(r, report.fail_on_improvement, &count);
            if (count > 0) {
                ++failures;
                // A metric judged against its baseline and by an expect: rule is named once.
                std::vector<std::string> metrics;
                for (const auto& v : r.verdicts)
                    if (verdict_fails(v.verdict, report.fail_on_improvement) &&
                        std::find(metrics.begin(), metrics.end(), v.metric) == metrics.end())
                        metrics.push_back(v.metric);
                const bool regressed = std::any_of(r.verdicts.begin(), r.verdicts.end(), [&](const auto& v) {
                    return verdict_fails(v.verdict, report.fail_on_improvement) && v.verdict != Verdict::not_gated &&
                           v.verdict != Verdict::not_measured;
                });
                cases += fmt::format(
                    "      <failure type=\"{}\" message=\"{}\">{}</failure>\n", regressed ? "regression" : "not_gated",
                    xml_escape(fmt::format("{} {}: {}",
                                           metrics.size() == 1 ? "a metric" : fmt::format("{} metrics", metrics.size()),
                                           regressed ? "regressed" : "not gated", join(metrics))),
                    xml_escape(text));
            }
            break;
        }
        case CaseStatus::failed_verification:
            ++failures;
            cases += fmt::format("      <failure type=\"failed_verification\" message=\"{}\">{}</failure>\n",
                                 xml_escape(r.message.substr(0, r.message.find('\n'))),
                                 xml_escape(with_kernels(r, r.message)));
            break;
        case CaseStatus::compile_error:
        case CaseStatus::launch_error:
        case CaseStatus::fault:
        case CaseStatus::timeout:
            ++errors;
            cases += fmt::format("      <error type=\"{}\" message=\"{}\">{}</error>\n", case_status_name(r.status),
                                 xml_escape(r.message.substr(0, r.message.find('\n'))),
                                 xml_escape(with_kernels(r, r.message)));
            break;
        case CaseStatus::skipped:
            ++skipped;
            cases += fmt::format("      <skipped message=\"{}\"/>\n", xml_escape(r.message));
            break;
        }
        std::string out;
        for (const auto& v : r.verdicts)
            if (v.verdict == Verdict::improved || v.verdict == Verdict::waived)
                out += fmt::format("{} {}: {}\n", v.metric, verdict_name(v.verdict), v.message);
        if (!out.empty()) cases += fmt::format("      <system-out>{}</system-out>\n", xml_escape(out));
        cases += "    </testcase>\n";
    }
    const std::size_t tests = report.results.size();
    std::string properties;
    const std::string mode = mode_name(report.mode);
    const std::pair<const char*, const std::string*> props[] = {{"mode", &mode},
                                                                {"gpu", &report.device_name},
                                                                {"arch", &report.arch},
                                                                {"driver", &report.driver_version},
                                                                {"cuda", &report.cuda_version},
                                                                {"harness", &report.harness_version},
                                                                {"git_revision", &report.git_revision}};
    for (const auto& [name, value] : props)
        if (!value->empty())
            properties += fmt::format("      <property name=\"{}\" value=\"{}\"/>\n", name, xml_escape(*value));
    if (report.shard.sharded())
        properties += fmt::format("      <property name=\"shard\" value=\"{}\"/>\n", xml_escape(report.shard.text()));
    for (const auto& file : report.baseline_files)
        properties += fmt::format("      <property name=\"baseline\" value=\"{}\"/>\n", xml_escape(file));
    const GateCounts g = gate_counts(report);
    for (const auto& [name, value] :
         {std::pair{"figures_compared", g.compared}, std::pair{"figures_expected", g.expected},
          std::pair{"figures_reported_only", g.reported}, std::pair{"figures_not_measured", g.not_measured},
          std::pair{"figures_not_gated", g.not_gated}})
        properties += fmt::format("      <property name=\"{}\" value=\"{}\"/>\n", name, value);
    const std::string counts =
        fmt::format("tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\"", tests, failures, errors, skipped);
    return fmt::format("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                       "<testsuites name=\"{}\" {} time=\"0.000\">\n"
                       "  <testsuite name=\"{}\" {} time=\"0.000\" timestamp=\"{}\">\n"
                       "    <properties>\n{}    </properties>\n"
                       "{}"
                       "  </testsuite>\n"
                       "</testsuites>\n",
                       xml_escape("harness " + report.suite), counts, xml_escape(report.suite), counts,
                       xml_escape(report.timestamp), properties.empty() ? "" : properties, cases);
}

} // namespace harness::report
