#pragma once
// Which GPUs a run takes: the one `--device` names or every one `--devices` names, probed in a
// child process, or none (the static tier) with the reason said.

#include "harness/run/gpu_session.hxx"
#include "harness/run/run_settings.hxx"

#include <optional>
#include <vector>

namespace harness::pipeline {

/// The GPU to run on, or nullopt after saying on stderr why the static tier runs instead. Throws
/// Error(environment) when there is none and `settings.require_gpu`.
std::optional<run::DeviceInfo> choose_device(const run::RunSettings& settings);

/// The GPUs a run spreads over: `first` (from choose_device) alone, or every GPU `settings.devices`
/// names, probed. Throws Error(bad_input) for a bad list, Error(environment) when one of them is
/// unusable or of another model than `first` (baselines of noisy figures are per GPU model).
std::vector<run::DeviceInfo> choose_devices(const run::RunSettings& settings, const run::DeviceInfo& first);

} // namespace harness::pipeline
