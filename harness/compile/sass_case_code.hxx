#pragma once
// A case's normalised SASS and the hash `harness run --changed-only` compares with its baseline's:
// the code of the kernels it launches and everything else its exact figures depend on (each
// launch's geometry and arguments at the case's point, the buffers it allocates, their sizes and
// contents, the architecture).

#include "harness/compile/nvrtc_compiler.hxx"
#include "harness/compile/sass_figures.hxx"
#include "harness/core/sass_code.hxx"
#include "harness/suite/suite.hxx"

#include <string>
#include <vector>

namespace harness::compile {

/// What besides the kernels' code a case's exact figures depend on, as text: each launch (entry,
/// grid, block, dynamic shared memory, cluster, arguments at `params`), every buffer of the suite
/// and the variant (type, element count at `params`, contents, role), the point and the
/// architecture. An expression that cannot be evaluated is written as its text.
std::string case_inputs_text(const suite::Suite& suite, const suite::VariantSpec& variant,
                             const suite::Bindings& params, const std::string& arch);

/// Adds the case's kernels' code to `file` (files named as reports name them) and returns what
/// the case launches: the kernels' ids and the hash of their code with case_inputs_text(). An
/// empty result where the module has no SASS (no nvdisasm, a failed disassembly) or a kernel of
/// the case is not in it. The hash leaves the instructions' source lines out (an edit that only
/// moves lines changes no figure); the kernels' code keeps them, for diffs.
SassCaseCode add_case_code(SassCodeFile& file, const suite::Suite& suite, const suite::VariantSpec& variant,
                           const suite::Bindings& params, const std::string& arch, const CompiledModule& module,
                           const ModuleSass& sass);

} // namespace harness::compile
