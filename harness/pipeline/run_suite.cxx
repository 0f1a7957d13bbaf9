#include "harness/pipeline/run_suite.hxx"

#include "harness/pipeline/second_looks.hxx"

#include <algorithm>

namespace harness::pipeline {

harness::RunReport run_suite(const suite::Suite& suite, const std::optional<run::DeviceInfo>& device,
                             const run::RunSettings& settings, const compile::CompileCache* cache)
{
    return device ? run_suite_gpu(suite, *device, settings, cache) : run_suite_static(suite, settings, cache);
}

harness::RunReport run_and_report(const suite::Suite& suite, const std::optional<run::DeviceInfo>& device,
                                  const run::RunSettings& settings, const compile::CompileCache* cache,
                                  const compare::CompareOptions& gate, const ReportOptions& reports,
                                  std::ostream& console)
{
    harness::RunReport rep;
    run_and_report_all({{&suite, settings, gate, reports}}, device, cache, console,
                       [&](const harness::RunReport& r) { rep = r; });
    return rep;
}

void run_and_report_all(const std::vector<SuiteJob>& jobs, const std::optional<run::DeviceInfo>& device,
                        const compile::CompileCache* cache, std::ostream& console,
                        const std::function<void(const harness::RunReport&)>& after_each)
{
    std::vector<run::RunSettings> settings;
    for (const auto& job : jobs) settings.push_back(run::resolve_settings(job.settings, *job.suite));
    std::vector<harness::RunReport> runs;
    const bool on_gpu = device && std::none_of(settings.begin(), settings.end(),
                                               [](const run::RunSettings& s) { return s.static_only; });
    if (on_gpu) {
        std::vector<SuiteRunRequest> requests;
        for (std::size_t i = 0; i < jobs.size(); ++i) requests.push_back({*jobs[i].suite, settings[i]});
        runs = run_suites_gpu(requests, *device, cache);
        // Every suite's unsure verdicts and regressions are measured again together: one fresh
        // worker per GPU and round for the whole run, not one per suite.
        std::vector<TimeRecheck> rechecks;
        for (std::size_t i = 0; i < jobs.size(); ++i)
            if (!settings[i].verify_only && !settings[i].external_profiler)
                rechecks.push_back({&runs[i], jobs[i].suite, &settings[i], &jobs[i].gate});
        resample_unsure(rechecks, *device, cache);
        confirm_time_regressions(rechecks, *device, cache);
        confirm_counter_regressions(rechecks, *device, cache);
    }
    for (std::size_t i = 0; i < jobs.size(); ++i) {
        const SuiteJob& job = jobs[i];
        harness::RunReport rep = on_gpu ? std::move(runs[i]) : run_suite_static(*job.suite, settings[i], cache);
        gate_and_report(rep, *job.suite, job.gate, job.reports, console);
        after_each(rep);
    }
}

} // namespace harness::pipeline
