#pragma once
// Compiles every variant of a suite for one architecture: one module per compile configuration
// (a variant, and the values of the sweep parameters its entries and defines name).

#include "harness/compile/nvrtc_compiler.hxx"
#include "harness/suite/suite.hxx"
#include "harness/suite/sweep.hxx"

#include <map>
#include <string>
#include <variant>
#include <vector>

namespace harness::compile {

/// Modules of the configurations that compiled and the compiler's message for those that did
/// not, both keyed by suite::compile_key().
struct SuiteModules {
    std::map<std::string, CompiledModule> modules;
    std::map<std::string, std::string> errors;

    /// The module a case of `variant` at `point` runs, or nullptr when it did not compile.
    const CompiledModule* find(const suite::VariantSpec& variant, const suite::Bindings& point) const;
    /// Why that module did not compile, or nullptr.
    const std::string* error(const suite::VariantSpec& variant, const suite::Bindings& point) const;
};

/// One distinct compile configuration of a suite.
struct CompileUnit {
    std::string key;         ///< suite::compile_key()
    std::size_t variant = 0; ///< index into Suite::variants
    suite::Bindings point;   ///< the first sweep point that uses it
};

/// Every configuration the suite's kernel variants need, each once, in the order cases use them.
std::vector<CompileUnit> compile_units(const suite::Suite& suite);
/// Same, for `cases` only (a shard's share of the suite).
std::vector<CompileUnit> compile_units(const suite::Suite& suite, const std::vector<suite::Case>& cases);

/// The compile request for one variant at one sweep point (all its launches' entries, with the
/// point's compile-time parameters substituted).
CompileRequest request_for(const suite::Suite& suite, const suite::VariantSpec& variant, const suite::Bindings& point,
                           const std::string& arch);
/// Same, for a variant without compile-time parameters.
CompileRequest request_for(const suite::Suite& suite, const suite::VariantSpec& variant, const std::string& arch);

/// Why a request did not compile in its compiler process: the error's kind (bad input for the
/// kernel's own errors and for one past the compile limits) and its message.
struct CompileFailure {
    ErrorKind kind = ErrorKind::bad_input;
    std::string message;
};

/// What one request gave in its compiler process: the module, or why there is none.
using ConfinedCompile = std::variant<CompiledModule, CompileFailure>;

/// Compiles each of `requests`, `jobs` at a time (0: one per core), each in a process of its own,
/// as every compilation of the tool runs: within `limits` of time and memory, with an empty
/// environment and an empty working folder, confined to reading what the request may read
/// (readable_folders(), less `.git`; confinement.hxx), after the include scan. Relative paths are
/// taken from this process's working folder. `what` ("compiling gemm") names the work in
/// messages. Throws Error (environment) as refuse_unconfined_project_includes() says.
std::vector<ConfinedCompile> compile_confined(std::vector<CompileRequest> requests, const suite::CompileLimits& limits,
                                              const CompileCache* cache, unsigned jobs, const std::string& what);

/// Compiles each configuration, `jobs` at a time (0: one per core), each in a process of its own:
/// confined to reading the project and the toolkit (confinement.hxx), within the suite's
/// `compile:` limits of time and memory, so a compilation that misbehaves fails its configuration
/// only (compile_confined). The parent process never runs NVRTC itself, so it may later fork CUDA workers (NVRTC in
/// a parent breaks cuInit in its forked children). Compiled modules are stored in `cache`.
SuiteModules compile_suite(const suite::Suite& suite, const std::string& arch, const CompileCache* cache,
                           unsigned jobs = 0);
/// Same, for the configurations `cases` need only.
SuiteModules compile_suite(const suite::Suite& suite, const std::vector<suite::Case>& cases, const std::string& arch,
                           const CompileCache* cache, unsigned jobs = 0);

/// Prints once per process, to stderr, that compilation cannot be confined here and why.
void warn_if_unconfined();

} // namespace harness::compile
