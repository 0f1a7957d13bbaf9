#pragma once
// The SASS baseline: per source line, the instructions the SASS gate compares (accesses by space
// and width, LDSM, local memory, asynchronous copies, tensor cores), one file per suite and
// architecture beside the exact figures:
//
//   baselines/<suite>/<arch>.sass.csv
//   variant,params,kernel,file,line,counts
//   "vectorized","N=256","gemm_vectorized<128, 128, 8, 8, 8>","kernels/gemm/gemm_vectorized.cu","10","global_ld_128=6"
//
// Only lines that hold such instructions have a row; counts are `class=n` pairs, space separated,
// the class being its metric without the `sass_` prefix.

#include "harness/compare/baseline_file.hxx"
#include "harness/core/case_result.hxx"
#include "harness/core/run_report.hxx"
#include "harness/suite/suite.hxx"

#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace harness::compare {

/// Whether the SASS gate compares a class per line, and so the SASS baseline keeps it.
bool is_gated_sass_class(std::string_view metric);

/// The SASS lines of every case of one suite and architecture.
struct SassBaseline : BaselineHeader {
    std::map<std::pair<std::string, std::string>, std::vector<SassLine>> cases; ///< by variant and params

    /// The case's lines, or nullptr when the file has none for it.
    const std::vector<SassLine>* find(const std::string& variant, const std::string& params) const;
};

/// <dir>/<suite>/<arch>.sass.csv.
std::filesystem::path sass_baseline_path(const std::filesystem::path& dir, const std::string& suite,
                                         const std::string& arch);
std::string sass_baseline_text(const SassBaseline& file);
/// Throws InputError naming `name`, the line and the field.
SassBaseline parse_sass_baseline(const std::string& text, const std::string& name);
/// Reads `path`; nullopt when there is no such file.
std::optional<SassBaseline> read_sass_baseline(const std::filesystem::path& path);

/// The SASS baseline files `harness baseline update` writes for `report`: for each architecture,
/// the file merged with the lines of every case that passed and has SASS lines (cases no longer in
/// the suite dropped). Files whose contents would not change are listed in `unchanged`.
std::vector<std::pair<std::filesystem::path, std::string>> sass_baseline_changes(const suite::Suite& suite,
                                                                                 const harness::RunReport& report,
                                                                                 const std::filesystem::path& dir,
                                                                                 std::vector<std::string>& unchanged);

/// <dir>/<suite>/<arch>.sass.gz: the normalised SASS the baseline was recorded from
/// (core/sass_code.hxx), gzip-compressed.
std::filesystem::path sass_code_path(const std::filesystem::path& dir, const std::string& suite,
                                     const std::string& arch);
/// Reads a SASS code file (gzip, or the plain text); nullopt when there is no such file. Throws
/// InputError naming the file for one that cannot be read as such, or that names another suite or
/// architecture than `suite` and `arch` (either empty: not checked).
std::optional<SassCodeFile> read_sass_code(const std::filesystem::path& path, const std::string& suite = "",
                                           const std::string& arch = "");

/// The SASS code files `harness baseline update` writes for `report`: for each architecture of
/// report.sass_code, the file merged with the code of every case that passed (as the static tier
/// recorded it, or as a GPU run did, by the report's mode), cases no longer in the suite and
/// kernels no case names dropped. Files whose contents would not change are listed in `unchanged`.
std::vector<std::pair<std::filesystem::path, std::string>> sass_code_changes(const suite::Suite& suite,
                                                                             const harness::RunReport& report,
                                                                             const std::filesystem::path& dir,
                                                                             std::vector<std::string>& unchanged);

} // namespace harness::compare
