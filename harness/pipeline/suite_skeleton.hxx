#pragma once
// A suite skeleton for the kernels of a source file or module (`harness scaffold`): one variant
// per kernel, a buffer per pointer parameter and a scalar per value parameter, with placeholders
// (`FILL_IN`) where only the user knows the answer. `harness check` names every placeholder left,
// by file, line and field (placeholder_errors).

#include "harness/compile/kernel_listing.hxx"

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace harness::pipeline {

/// The word that marks what a skeleton leaves to the user.
inline constexpr const char* placeholder = "FILL_IN";

struct SkeletonRequest {
    std::string suite_name;
    std::filesystem::path suite_file;                   ///< where the suite will be written: paths are relative to it
    std::filesystem::path kernel_file;                  ///< the source (.cu) or module the kernels came from
    bool module = false;                                ///< kernel_file is a module built by the project's compiler
    std::optional<std::filesystem::path> module_source; ///< the .cu a module was built from
    std::string arch;                                   ///< the architecture the kernels were listed for
    std::vector<compile::ListedKernel> kernels;
};

/// The suite text: comments say what each placeholder asks for and what to check. Names read from
/// the module (a symbol is any bytes but NUL) are written so that YAML reads them back as they are:
/// plain, or as double-quoted strings with escapes; in comments, escaped as shown_name() does.
std::string suite_skeleton(const SkeletonRequest& request);

/// A kernel's name, signature or a path on one line, as the console and the skeleton's comments show
/// it: control characters escaped as escape_control_characters() does, line feeds and tabs as well.
std::string shown_name(std::string_view text);

/// "file:line:column: field: still a placeholder (...)" for each FILL_IN left in a suite's text
/// (the YAML's own positions); empty when none is left.
std::vector<std::string> placeholder_errors(const std::string& text, const std::string& file);

/// The element type name ("f32") of a C++ type as a kernel declares it ("float", "const __half");
/// nullopt for one the suite format does not hold (a struct, float4).
std::optional<std::string> element_type_for(const std::string& cpp_type);

} // namespace harness::pipeline
