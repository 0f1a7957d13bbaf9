#pragma once
// The option groups of a run's settings, declared once for every command that runs suites
// (`harness run`, `harness baseline update`). Apart from options.hxx, which every command includes:
// only the commands that run suites need run::RunSettings.

#include "harness/run/run_settings.hxx"

#include <CLI/CLI.hpp>

namespace harness::cli {

/// The flags of a run's settings (run::RunSettings) that every command running suites shares
/// (`harness run`, `harness baseline update`), each declared once: where the suites run
/// (`--static`, `--arch`, `--device`). Returns the `--device` option, which others may exclude.
CLI::Option* add_run_place_options(CLI::App& app, run::RunSettings& settings);

/// How long each case of a run is timed (`--budget`), and with `with_timeout` when it counts as
/// hung (`--timeout`); a flag not given leaves the setting to the suite (run::resolve_settings).
void add_run_time_options(CLI::App& app, run::RunSettings& settings, bool with_timeout);

} // namespace harness::cli
