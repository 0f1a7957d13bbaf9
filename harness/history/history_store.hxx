#pragma once
// The history store: a folder that CI jobs append runs to, kept on a branch or as a CI cache.
//
//   <store>/runs/<suite>/<commit>-<content hash>.json   one immutable file per recorded run
//   <store>/index.sqlite                                the query index, rebuilt from the run files
//   <store>/.gitignore                                  keeps the index out of git
//
// Writers only ever create new files under names no other run has (the content hash), each
// written beside its place and linked in exclusively: concurrent jobs never touch the same file,
// and branches of the store merge in git without a conflict. The index is a cache: it is brought
// up to date with the run files before every query, and deleting it loses nothing.

#include "harness/history/run_record.hxx"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace harness::history {

/// Version of the index's tables: an index of another version is rebuilt.
inline constexpr int index_schema_version = 1;

/// What adding a run did.
struct AddResult {
    std::filesystem::path file;
    bool added = false; ///< false: the same run was recorded before (same content, same file)
};

/// What bringing the index up to date did.
struct IndexRefresh {
    std::size_t files = 0;             ///< run files in the store
    std::size_t added = 0;             ///< read into the index now
    std::size_t removed = 0;           ///< gone from the folder (another branch of the store), dropped from the index
    std::vector<std::string> problems; ///< run files that could not be read, each with why; left out
};

/// One suite in the store.
struct SuiteSummary {
    std::string suite;
    std::size_t runs = 0;
    std::size_t commits = 0;
    std::string first_date, last_date; ///< commit dates
};

/// A run as the index lists it.
struct RunListing {
    std::string file; ///< relative to the store
    std::string commit, commit_date;
    RunMode mode = RunMode::gpu;
    std::string arch, gpu;
    std::size_t cases = 0;
};

class HistoryStore {
public:
    /// The store in `folder`; nothing is created until a run is added or the index refreshed.
    explicit HistoryStore(std::filesystem::path folder);

    /// Writes `record` as a new run file; the same record twice is one file. Throws Error
    /// (bad_input) for a record whose suite or commit cannot name a file, (environment) when the
    /// store cannot be written or a folder in it is a symbolic link.
    AddResult add(const RunRecord& record) const;

    /// Reads every run file the index lacks into it, and drops the ones that are gone.
    IndexRefresh refresh_index() const;

    /// The suites in the index (refresh first).
    std::vector<SuiteSummary> suites() const;
    /// The runs of `suite` in the index, by commit date.
    std::vector<RunListing> list_runs(const std::string& suite) const;
    /// Every run of `suite` with its figures, from the index. A few runs, picked afresh each time,
    /// are read from their run files too: an index whose figures differ from them (edited with its
    /// schema intact) is rebuilt from the run files, and the runs are read again.
    std::vector<RunRecord> load_runs(const std::string& suite) const;

    const std::filesystem::path& folder() const { return folder_; }
    std::filesystem::path index_file() const { return folder_ / "index.sqlite"; }

private:
    /// load_runs without the spot check, each run with the file it came from; nullopt when the
    /// index names a mode or case status no run file holds (it was edited) and is to be rebuilt.
    std::optional<std::vector<std::pair<RunRecord, std::string>>> load_indexed_runs(const std::string& suite) const;
    /// list_runs from the index; nullopt when it names a mode no run file holds (it was edited).
    std::optional<std::vector<RunListing>> list_indexed_runs(const std::string& suite) const;
    /// Deletes the index and builds it again from the run files.
    void rebuild_index() const;
    std::filesystem::path folder_;
};

} // namespace harness::history
