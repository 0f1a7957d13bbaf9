#pragma once
// Sweep parameters that reach the compiler: template arguments of an entry and values of defines.
//
// The rule (docs/suite-format.md, "Compile-time parameters"): in the template arguments of an
// `entry` and in the value of a `defines` entry, every identifier that is the name of a sweep
// parameter is replaced by the parameter's value at the case's point; every other token (numbers,
// types, names the source defines, the kernel's own name, macro names) reaches the compiler as
// written. A define's value that is an integer expression of sweep parameters (`TILE / 4`) is
// evaluated and passed as its number, so that `256 / BLOCK_ROWS` in the kernel divides by it.
// Cases whose substituted entries and defines are equal share one compiled module.

#include "harness/core/case_result.hxx"
#include "harness/suite/suite.hxx"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace harness::suite {

/// The identifiers of `text` that are in `params`, each once, in order of first appearance.
/// Numbers (`1e5`, `0x1F`, `2.5f`) and quoted strings are not identifiers.
std::vector<std::string> param_names_in(std::string_view text, const std::set<std::string, std::less<>>& params);

/// `text` with every identifier that is a key of `point` replaced by its value.
std::string substitute_params(std::string_view text, const Bindings& point);

/// A define's value as an expression, when it is one: integer arithmetic in the expression syntax
/// (expression.hxx) whose every name is in `params`. nullopt for other text (`float`, `1e5`, `0x1F`,
/// `sizeof(float)`, `TILE * PAD_BYTES` with PAD_BYTES from the source, an octal `010`).
std::optional<Expression> define_expression(std::string_view value, const std::set<std::string, std::less<>>& params);

/// A define's value as compiled at `point`: an expression (define_expression) evaluated to its
/// number, any other text with the point's parameters substituted.
std::string resolve_define(std::string_view value, const Bindings& point);

/// The entry as compiled at `point`: its template arguments substituted, the kernel name kept.
std::string resolve_entry(const std::string& entry, const Bindings& point);

/// What `launch` of `variant` runs at `point`: its kernel's name as compiled, or a library
/// routine's name.
std::string launch_entry(const VariantSpec& variant, const LaunchSpec& launch, const Bindings& point);

/// The file a variant's kernels are written in, as reports name it: the `.cu` NVRTC compiles, the
/// `.py` a Triton kernel was exported from; empty where the module's own line table names its
/// sources (a module built by nvcc) or there is no kernel (a built-in).
std::filesystem::path kernel_source_file(const VariantSpec& variant);

/// The label of each of the variant's launches at `point`, which names its own figures
/// ("registers@rstd_kernel"): the entry as compiled, followed by "#2", "#3"... where the same
/// entry is launched more than once ("copy#1", "copy#2"). Empty for a variant of one launch,
/// whose figures are its launch's.
std::vector<std::string> launch_labels(const VariantSpec& variant, const Bindings& point);

/// What each launch of `variant` runs at `point` and from which file (the source relative to the
/// suite's project, or the module as the suite writes it), labelled as launch_labels() does and
/// marked `repeated` where another launch runs the same entry: for results and failures, which
/// name the kernel and its file.
std::vector<CaseLaunch> case_launches(const Suite& suite, const VariantSpec& variant, const Bindings& point);

/// The variant's defines as compiled at `point`.
std::map<std::string, std::string> resolve_defines(const VariantSpec& variant, const Bindings& point);

/// "TILE=32" for the variant's compile-time parameters at `point`; "" when it has none.
std::string compile_params_text(const VariantSpec& variant, const Bindings& point);

/// Names the compiled module a case of `variant` at `point` uses: the variant's name, followed by
/// its compile-time parameters in brackets when it has any ("tiled[TILE=32]").
std::string compile_key(const VariantSpec& variant, const Bindings& point);

} // namespace harness::suite
