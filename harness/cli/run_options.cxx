#include "harness/cli/run_options.hxx"

#include "harness/cli/options.hxx"

namespace harness::cli {

CLI::Option* add_run_place_options(CLI::App& app, run::RunSettings& settings)
{
    app.add_flag("--static", settings.static_only,
                 "static tier only: compile for each architecture, read resources, no GPU");
    app.add_option("--arch", settings.archs, "architectures for the static tier (default: the suite's archs)")
        ->check(known_arch_validator());
    return app.add_option("--device", settings.device, "CUDA device ordinal")->capture_default_str();
}

void add_run_time_options(CLI::App& app, run::RunSettings& settings, bool with_timeout)
{
    if (with_timeout)
        app.add_option("--timeout", settings.timeout_s,
                       "seconds before a case counts as hung (default: the suite's timing.timeout_s)")
            ->check(seconds_validator(suite::max_timeout_s));
    app.add_option("--budget", settings.budget_s, "seconds of timing per case (default: the suite's timing.budget_s)")
        ->check(seconds_validator(suite::max_budget_s));
}

} // namespace harness::cli
