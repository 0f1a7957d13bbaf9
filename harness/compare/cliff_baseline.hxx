#pragma once
// Cliff baselines: the cliffs each map of a suite had when it was recorded, beside the figures'
// baseline of the same key (docs/cliffs.md).
//
//   baselines/<suite>/<key>.cliffs.csv    key = architecture (sm_90) for maps of exact figures,
//                                         GPU model (NVIDIA-H200) for maps of noisy ones
//
// The file is laid out as a baseline file (`# name: value` metadata, then a CSV table), one row per
// cliff, in axis order within each map:
//
//   variant,axis,others,figure,x_before,x_after,level_before,level_after,depth,cause
//
// A map recorded without cliffs is one row with the last six fields empty, so that a flat map is
// told from one never recorded.
//
// A noisy map's levels, every point's value and noise, are kept beside it, so that a later run is
// compared with the map and not only with its steps (a step the baseline had under min_depth, a
// stretch of the axis that got slower with no step moving):
//
//   baselines/<suite>/<key>.levels.csv    variant,axis,others,figure,x,level,noise
//
// An exact map keeps no levels: its points are cases, and their figures are in <key>.csv.

#include "harness/compare/baseline_file.hxx"
#include "harness/core/cliff_map.hxx"
#include "harness/core/run_report.hxx"
#include "harness/suite/suite.hxx"

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace harness::compare {

/// One cliff of one map, or a map's row saying it has none (no position).
struct CliffRow {
    std::string variant;
    std::string axis;
    std::string others; ///< CliffMap::others: the other parameters' values, "K=64"
    std::string figure;
    std::optional<double> x_before; ///< absent: the map has no cliffs
    std::optional<double> x_after;
    double level_before = 0;
    double level_after = 0;
    double depth = 0;
    std::string cause; ///< cliff_cause_name()
    int line = 0;      ///< where it was read, for messages; 0 when made here

    bool is_cliff() const { return x_before.has_value(); }
    /// Whether this row belongs to `map` (same variant, axis, others and figure).
    bool of(const CliffMap& map) const;
};

/// One point of a noisy map as its baseline keeps it.
struct LevelRow {
    std::string variant;
    std::string axis;
    std::string others;
    std::string figure;
    double x = 0;
    double level = 0; ///< the map's value at x, in its unit
    double noise = 0; ///< one standard deviation of it, same unit
    int line = 0;     ///< where it was read, for messages; 0 when made here
};

/// The contents of one cliff baseline file, with the levels file beside it.
struct CliffBaselineFile : BaselineHeader {
    std::vector<CliffRow> rows;
    /// From <key>.levels.csv; empty where the file is missing (a baseline recorded before levels
    /// were kept, or one of exact maps).
    std::vector<LevelRow> levels;

    /// Whether the file records `map` (with cliffs or without).
    bool holds(const CliffMap& map) const;
    /// The cliffs it records for `map`, in axis order.
    std::vector<const CliffRow*> cliffs_of(const CliffMap& map) const;
    /// The levels it records for `map`, in axis order; empty when it records none.
    std::vector<const LevelRow*> levels_of(const CliffMap& map) const;
    /// Indexes the rows and levels by map for the three lookups above, which then take the
    /// logarithm of the maps' number and not a scan of every row (rows or levels added or
    /// removed since are scanned). parse_cliff_baseline and parse_cliff_levels do it; whoever
    /// changes a row's map in place does it again.
    void index_maps();

    /// A map's identity: variant, axis, others, figure.
    using MapKey = std::tuple<std::string, std::string, std::string, std::string>;

private:
    struct MapRows {
        std::vector<std::size_t> rows;   ///< positions in rows, in file order
        std::vector<std::size_t> levels; ///< positions in levels, in file order
    };
    std::map<MapKey, MapRows> index_;
    std::size_t indexed_rows_ = 0, indexed_levels_ = 0;
    bool indexed_ = false;
    const MapRows& rows_of(const CliffMap& map) const;
};

/// Whether `map`'s figure is exact (no noise): its cliffs are kept by architecture, else by GPU model.
bool is_exact_map(const CliffMap& map);
/// The key of the file that keeps `map`'s cliffs: its architecture for an exact map, the GPU model
/// (noisy_baseline_key of `device_name`) for a noisy one.
std::string cliff_baseline_key(const CliffMap& map, const std::string& device_name);
/// Whether `path`, a file in a suite's baseline folder, is a cliff baseline (`<key>.cliffs.csv`).
bool is_cliff_baseline(const std::filesystem::path& path);
/// <dir>/<suite>/<key>.cliffs.csv; throws Error (bad_input) as baseline_path does.
std::filesystem::path cliff_baseline_path(const std::filesystem::path& dir, const std::string& suite,
                                          const std::string& key);
/// <dir>/<suite>/<key>.levels.csv, the levels beside the cliff baseline of the same key.
std::filesystem::path cliff_levels_path(const std::filesystem::path& dir, const std::string& suite,
                                        const std::string& key);
/// The levels file beside the cliff baseline `cliffs_path`.
std::filesystem::path cliff_levels_path(const std::filesystem::path& cliffs_path);

/// The rows that record `map`: one per cliff, or the row of a map without cliffs.
std::vector<CliffRow> cliff_rows(const CliffMap& map);

/// The rows that keep `map`'s levels: one per point; none for an exact map.
std::vector<LevelRow> level_rows(const CliffMap& map);

/// The file's text.
std::string cliff_baseline_text(const CliffBaselineFile& file);
/// The levels file's text (the same header, `file.levels` as its rows).
std::string cliff_levels_text(const CliffBaselineFile& file);
/// Parses a cliff baseline file's text; throws InputError naming `name`, the line and the field.
CliffBaselineFile parse_cliff_baseline(const std::string& text, const std::string& name);
/// Parses a levels file's text into `file.levels`; throws InputError naming `name`, the line and the field.
void parse_cliff_levels(const std::string& text, const std::string& name, CliffBaselineFile& file);
/// Reads a cliff baseline file, and the levels file beside it where there is one; throws
/// InputError (bad input) when either is malformed or unreadable.
CliffBaselineFile read_cliff_baseline(const std::filesystem::path& path);

/// How many rows and levels of `file` belong to maps `suite` cannot have: a variant it does not
/// have, an axis other than the one it scans, values of the other parameters outside its sweep.
/// They gate nothing; `harness baseline update` drops them.
std::size_t rows_of_unknown_maps(const CliffBaselineFile& file, const suite::Suite& suite);

/// What recording a run's cliff maps changes, for baseline_update: the new text of each cliff
/// baseline file that changes, and the files left as they were.
struct CliffBaselineChanges {
    std::vector<std::pair<std::filesystem::path, std::string>> files;
    std::vector<std::string> unchanged;
    std::vector<std::string> notes; ///< maps left out, rows dropped
};

/// Merges the cliff maps of `report` into the suite's cliff baseline files under `dir`: the rows of
/// each map the run holds whole (a point for every value of the scan) are replaced, rows of maps it
/// does not hold are kept, rows of variants, axes or other values no longer in the suite are
/// dropped. The caller holds the suite folder's FolderLock and writes the files with the figures'.
/// Throws Error (bad_input) for a map that is not one of the suite's.
CliffBaselineChanges cliff_baseline_changes(const suite::Suite& suite, const harness::RunReport& report,
                                            const std::filesystem::path& dir);

} // namespace harness::compare
