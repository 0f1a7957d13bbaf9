#pragma once
// Compiles every variant of a suite for one architecture.

#include "harness/compile/nvrtc_compiler.hxx"
#include "harness/suite/suite.hxx"

#include <map>
#include <string>

namespace harness::compile {

/// Modules of the variants that compiled, and NVRTC's message for those that did not.
struct SuiteModules {
    std::map<std::string, CompiledModule> modules;
    std::map<std::string, std::string> errors;
};

/// The compile request for one variant (all its launches' entries).
CompileRequest request_for(const suite::Suite& suite, const suite::VariantSpec& variant, const std::string& arch);

/// Compiles each variant; a failure is recorded for that variant only.
SuiteModules compile_suite(const suite::Suite& suite, const std::string& arch, const CompileCache* cache);

/// Same, in a child process, so that NVRTC never runs in a process that later forks CUDA workers.
SuiteModules compile_suite_in_child(const suite::Suite& suite, const std::string& arch, const CompileCache* cache);

} // namespace harness::compile
