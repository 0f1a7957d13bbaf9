#pragma once
// A suite in the static tier, without a GPU: every variant compiled for each architecture and its
// resources read from the cubins, with the cliff maps of a scanned axis.

#include "harness/compile/kernel_cache.hxx"
#include "harness/core/run_report.hxx"
#include "harness/run/run_settings.hxx"
#include "harness/suite/suite.hxx"

namespace harness::pipeline {

/// The static tier of one suite: every variant compiled for each architecture of `settings`
/// (resolved for the suite by run::resolve_settings: its own archs unless given), resources read.
harness::RunReport run_suite_static(const suite::Suite& suite, const run::RunSettings& settings,
                                    const compile::CompileCache* cache);

} // namespace harness::pipeline
