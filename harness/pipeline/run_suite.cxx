#include "harness/pipeline/run_suite.hxx"

#include "harness/pipeline/second_looks.hxx"

#include <algorithm>

namespace harness::pipeline {

harness::RunReport run_suite(const suite::Suite& suite, const std::optional<run::DeviceInfo>& device,
                             const run::RunSettings& settings, const compile::CompileCache* cache)
{
    return device ? run_suite_gpu(suite, *device, settings, cache) : run_suite_static(suite, settings, cache);
}

void run_and_report_all(const std::vector<SuiteJob>& jobs, const std::optional<run::DeviceInfo>& device,
                        const compile::CompileCache* cache, std::ostream& console,
                        const std::function<void(const harness::RunReport&)>& after_each)
{
    std::vector<harness::RunReport> runs;
    const bool on_gpu =
        device && std::none_of(jobs.begin(), jobs.end(), [](const SuiteJob& job) { return job.settings.static_only; });
    if (on_gpu) {
        std::vector<SuiteRunRequest> requests;
        for (const auto& job : jobs) requests.push_back({*job.suite, job.settings});
        runs = run_suites_gpu(requests, *device, cache);
        // Every suite's unsure verdicts and regressions are measured again together: one fresh
        // worker per GPU and round for the whole run, not one per suite.
        std::vector<TimeRecheck> rechecks;
        for (std::size_t i = 0; i < jobs.size(); ++i)
            if (!jobs[i].settings.verify_only && !jobs[i].settings.external_profiler)
                rechecks.push_back({&runs[i], jobs[i].suite, &jobs[i].settings, &jobs[i].gate});
        resample_unsure(rechecks, *device, cache);
        confirm_time_regressions(rechecks, *device, cache);
        confirm_counter_regressions(rechecks, *device, cache);
    }
    for (std::size_t i = 0; i < jobs.size(); ++i) {
        const SuiteJob& job = jobs[i];
        harness::RunReport rep = on_gpu ? std::move(runs[i]) : run_suite_static(*job.suite, job.settings, cache);
        gate_and_report(rep, *job.suite, job.gate, job.reports, console);
        after_each(rep);
    }
}

} // namespace harness::pipeline
