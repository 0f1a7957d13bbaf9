#pragma once
// Baseline files: the figures a run is compared with, one CSV file per suite and key, in git.
//
//   baselines/<suite>/<key>.csv    key = architecture (sm_90) for exact figures,
//                                  GPU model (NVIDIA-H200) for noisy ones
//
// The file starts with `# name: value` metadata lines (schema version, GPU, architecture, driver,
// CUDA, harness version, git revision, date), then a CSV table with one row per case and metric:
//
//   variant,params,metric,value,samples,source
//
// `samples` holds the time samples (space separated) of a noisy figure judged by the "samples"
// rule; `source` says which tier recorded the row ("static" or "gpu").

#include <filesystem>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace harness::compare {

/// Version of the baseline file layout; a file with another version is refused.
inline constexpr int baseline_schema_version = 1;

/// One figure of one case.
struct BaselineRow {
    std::string variant;
    std::string params; ///< params_text of the case, "N=256 K=64"
    std::string metric;
    double value = 0.0;
    std::vector<double> samples; ///< time samples in us, for the "samples" rule
    std::string source;          ///< "static" or "gpu"
};

/// The `# name: value` lines that head a baseline file (and a cliff baseline file).
struct BaselineHeader {
    std::vector<std::pair<std::string, std::string>> metadata; ///< in file order

    /// The metadata value for `name`, or "".
    std::string meta(const std::string& name) const;
    /// Sets a `# name: value` line; throws Error (bad_input) for a name or value that would not read
    /// back as the same one line: a control character (a line break), or a ':' in the name.
    void set_meta(const std::string& name, const std::string& value);
    /// The identity of the file and of the run that writes it: schema, suite, key, and the run's
    /// CUDA, harness, revision and date (the `figures`, `gpu`, `driver` and `arch` lines are the
    /// writer's own, set between them).
    void set_identity(const std::string& suite, const std::string& key);
    void set_writer(const std::string& cuda, const std::string& harness, const std::string& git_revision,
                    const std::string& date);
};

/// The contents of one baseline file.
struct BaselineFile : BaselineHeader {
    std::vector<BaselineRow> rows;

    /// The row for this case and metric (the first, when rows made here hold two), or nullptr: in
    /// constant time through the index of index_rows(), by a scan of the rows while their number
    /// differs from the one indexed (rows added or removed since).
    const BaselineRow* find(const std::string& variant, const std::string& params, const std::string& metric) const;
    /// Indexes the rows for find; parse_baseline does it, and whoever changes a row's variant,
    /// params or metric in place does it again.
    void index_rows();

private:
    std::unordered_map<std::string, std::size_t> index_; ///< by row_key, the position in rows
    std::size_t indexed_rows_ = 0;                       ///< rows.size() when indexed
    bool indexed_ = false;
};

/// Key of the file that holds exact figures: the architecture, "sm_90".
std::string exact_baseline_key(const std::string& arch);
/// Key of the file that holds noisy figures: the GPU model made file-safe, "NVIDIA-H200".
std::string noisy_baseline_key(const std::string& gpu_name);
/// <dir>/<suite>/<key>.csv; throws Error (bad_input) when the suite or key could not name a file
/// inside `dir` (see name_problem in core/input_files.hxx).
std::filesystem::path baseline_path(const std::filesystem::path& dir, const std::string& suite, const std::string& key);

/// Whether `path`, a file in a suite's baseline folder, holds a GPU model's noisy figures: a .csv
/// file named neither for an architecture (exact figures) nor `<key>.cliffs.csv` (cliffs), nor
/// `<key>.levels.csv`, `<arch>.sass.csv` or `<arch>.accesses.csv`.
bool is_gpu_model_baseline(const std::filesystem::path& path);

/// The fields of each CSV row of a file laid out as a baseline file, and the line each starts on.
struct TableRows {
    std::vector<std::vector<std::string>> rows;
    std::vector<int> lines;
};
/// Parses a file laid out as baseline files are: the first line `marker`, `# name: value` lines
/// (into `header`; `# schema_version:` must be baseline_schema_version), a header row equal to
/// `columns`, then rows of as many fields. Throws InputError naming `name`, the line and the field.
TableRows parse_table_file(const std::string& text, const std::string& name, std::string_view marker,
                           const std::vector<std::string>& columns, BaselineHeader& header);
/// The text of such a file (libcsv quoting).
std::string table_file_text(std::string_view marker, const BaselineHeader& header,
                            const std::vector<std::string>& columns, const std::vector<std::vector<std::string>>& rows);
/// The shortest text that reads back as the same double.
std::string number_text(double value);

/// The file's text: metadata comments, then the CSV table (libcsv quoting).
std::string baseline_text(const BaselineFile& file);
/// Parses a baseline file's text; throws InputError naming `name`, the line and the field.
BaselineFile parse_baseline(const std::string& text, const std::string& name);
/// Reads a baseline file; throws InputError (bad input) when it is malformed or unreadable.
BaselineFile read_baseline(const std::filesystem::path& path);
/// Throws InputError when the file's `# suite:` or `# key:` metadata names another suite or key
/// than the place it was found at (a file copied or planted from elsewhere).
void check_baseline_identity(const BaselineHeader& file, const std::string& name, const std::string& suite,
                             const std::string& key);
/// The largest baseline file read.
inline constexpr std::size_t max_baseline_file_bytes = 64 * 1024 * 1024;
/// The text of a baseline file of either kind (`what`: "baseline file", "cliff baseline file"), at
/// most max_baseline_file_bytes; throws Error (environment) while an update of its folder is
/// half done, since a reader without the folder's lock must not take that for the baselines.
std::string read_baseline_text(const std::filesystem::path& path, const char* what);
/// Writes atomically: a reader, or an interrupted update, leaves the old file whole.
void write_baseline(const std::filesystem::path& path, const BaselineFile& file);

} // namespace harness::compare
