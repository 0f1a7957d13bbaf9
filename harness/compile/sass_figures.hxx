#pragma once
// The SASS figures of the static tier: a module's cubin disassembled once (cached beside the
// cubin), its instructions counted by class per kernel and per source line, and a case's figures
// and lines taken from the kernels it launches.

#include "harness/compile/kernel_cache.hxx"
#include "harness/compile/nvrtc_compiler.hxx"
#include "harness/compile/sass_classes.hxx"
#include "harness/core/case_result.hxx"
#include "harness/core/sass_code.hxx"
#include "harness/suite/compile_params.hxx"
#include "harness/suite/suite.hxx"

#include <string>
#include <vector>

namespace harness::compile {

/// The SASS counts of one module, or why there are none.
struct ModuleSass {
    std::vector<SassKernelCounts> kernels;
    std::vector<SassKernelCode> code; ///< each function's normalised SASS (sass_normalise.hxx), files as recorded
    std::string not_measured;         ///< no nvdisasm: where it was looked for
    std::string error;                ///< the cubin's disassembly failed or ran past its limits (bad input)
    bool from_cache = false;
};

/// The counts of `module`'s cubin, named `name` in errors, from `cache` (an entry
/// `<key>.sass.json` beside the cubin's, valid for this cubin and nvdisasm version) or disassembled
/// now and stored there.
ModuleSass module_sass(const CompiledModule& module, const std::string& name, const CompileCache* cache,
                       const DisassemblyLimits& limits = {});

/// Adds to `r` the SASS figures (sass_* metrics, summed over the distinct kernels of `symbols`) and
/// lines of `sass`, files named relative to the suite's project; or, where nvdisasm is missing,
/// r.sass_not_measured. `variant` resolves the line table's name of its kernel file.
void add_sass_figures(CaseResult& r, const suite::Suite& suite, const suite::VariantSpec& variant,
                      const ModuleSass& sass, const std::vector<std::string>& symbols);

/// add_sass_figures() for a case of the static tier, with the kernels of `variant`'s launches at
/// `params`; a cubin whose disassembly failed makes the case a compile error naming it.
void add_case_sass(CaseResult& r, const suite::Suite& suite, const suite::VariantSpec& variant,
                   const suite::Bindings& params, const CompiledModule& module, const ModuleSass& sass);

/// The file a cubin's line information names, as reports name it: the variant's source for the
/// name NVRTC was given it (in the compiler's temporary folder), relative to the project where it
/// lies inside it (or where the end of a path recorded on another machine does), else as recorded.
std::string sass_source_name(const suite::Suite& suite, const suite::VariantSpec& variant, const std::string& file);

/// The counts as the cache entry's JSON text, and back (nullopt for text that is not such an entry).
std::string sass_counts_json(const std::vector<SassKernelCounts>& kernels);
std::optional<std::vector<SassKernelCounts>> sass_counts_from_json(const std::string& text);

} // namespace harness::compile
