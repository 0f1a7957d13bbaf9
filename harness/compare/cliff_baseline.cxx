#include "harness/compare/cliff_baseline.hxx"

#include "harness/core/error.hxx"
#include "harness/core/input_files.hxx"
#include "harness/core/text.hxx"
#include "harness/suite/sweep.hxx"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <set>
#include <tuple>

namespace harness::compare {

namespace {

constexpr const char* cliff_marker = "# harness cliff baseline";
const std::vector<std::string> cliff_columns = {"variant", "axis",         "others",      "figure", "x_before",
                                                "x_after", "level_before", "level_after", "depth",  "cause"};
constexpr const char* levels_marker = "# harness cliff levels";
const std::vector<std::string> level_columns = {"variant", "axis", "others", "figure", "x", "level", "noise"};

double parse_number(const std::string& text, const std::string& name, int line, const std::string& what)
{
    if (const auto v = parse_decimal_number(text)) return *v;
    throw InputError(name, line, 1, what, fmt::format("'{}' is not a number", text.substr(0, 40)));
}

std::string optional_text(const std::optional<double>& v)
{
    return v ? number_text(*v) : std::string();
}

using MapKey = CliffBaselineFile::MapKey;

/// A row of the map named by its four fields, without a cliff yet.
CliffRow map_row(std::string variant, std::string axis, std::string others, std::string figure)
{
    CliffRow r;
    r.variant = std::move(variant);
    r.axis = std::move(axis);
    r.others = std::move(others);
    r.figure = std::move(figure);
    return r;
}

/// The map a row belongs to, for the lookups by map.
CliffMap map_of(const CliffRow& r)
{
    CliffMap m;
    m.variant = r.variant;
    m.axis = r.axis;
    m.others = r.others;
    m.figure = r.figure;
    return m;
}

MapKey key_of(const CliffRow& r)
{
    return {r.variant, r.axis, r.others, r.figure};
}

MapKey key_of(const CliffMap& m)
{
    return {m.variant, m.axis, m.others, m.figure};
}

MapKey key_of(const LevelRow& r)
{
    return {r.variant, r.axis, r.others, r.figure};
}

/// The maps a suite can have, and where each sorts: its variants in their order, along the axis it
/// scans, at each value of the other parameters its sweep has, in the sweep's order.
struct SuiteMaps {
    const suite::ParamSpec* scanned = nullptr;
    std::map<std::string, std::size_t> variant_order;
    std::map<std::string, std::size_t> others_order;

    explicit SuiteMaps(const suite::Suite& suite) : scanned(suite.scanned_param())
    {
        for (const auto& v : suite.variants) variant_order.emplace(v.name, variant_order.size());
        if (scanned)
            for (const auto& point : suite::sweep_points(suite))
                others_order.emplace(suite::others_text(suite, point, scanned->name), others_order.size());
    }
    bool known(const std::string& variant, const std::string& axis, const std::string& others) const
    {
        return scanned && axis == scanned->name && variant_order.contains(variant) && others_order.contains(others);
    }
};

} // namespace

bool CliffRow::of(const CliffMap& map) const
{
    return key_of(*this) == key_of(map);
}

const CliffBaselineFile::MapRows& CliffBaselineFile::rows_of(const CliffMap& map) const
{
    static const MapRows none;
    const auto it = index_.find(key_of(map));
    return it == index_.end() ? none : it->second;
}

void CliffBaselineFile::index_maps()
{
    index_.clear();
    for (std::size_t i = 0; i < rows.size(); ++i) index_[key_of(rows[i])].rows.push_back(i);
    for (std::size_t i = 0; i < levels.size(); ++i) index_[key_of(levels[i])].levels.push_back(i);
    indexed_rows_ = rows.size();
    indexed_levels_ = levels.size();
    indexed_ = true;
}

bool CliffBaselineFile::holds(const CliffMap& map) const
{
    if (indexed_ && indexed_rows_ == rows.size()) return !rows_of(map).rows.empty();
    return std::any_of(rows.begin(), rows.end(), [&](const CliffRow& r) { return r.of(map); });
}

std::vector<const CliffRow*> CliffBaselineFile::cliffs_of(const CliffMap& map) const
{
    std::vector<const CliffRow*> out;
    if (indexed_ && indexed_rows_ == rows.size()) {
        for (const std::size_t i : rows_of(map).rows)
            if (rows[i].is_cliff()) out.push_back(&rows[i]);
        return out;
    }
    for (const auto& r : rows)
        if (r.is_cliff() && r.of(map)) out.push_back(&r);
    return out;
}

std::vector<const LevelRow*> CliffBaselineFile::levels_of(const CliffMap& map) const
{
    std::vector<const LevelRow*> out;
    if (indexed_ && indexed_levels_ == levels.size()) {
        for (const std::size_t i : rows_of(map).levels) out.push_back(&levels[i]);
    } else {
        for (const auto& r : levels)
            if (key_of(r) == key_of(map)) out.push_back(&r);
    }
    std::stable_sort(out.begin(), out.end(), [](const LevelRow* a, const LevelRow* b) { return a->x < b->x; });
    return out;
}

bool is_exact_map(const CliffMap& map)
{
    return std::all_of(map.noise.begin(), map.noise.end(), [](double n) { return n == 0; });
}

std::string cliff_baseline_key(const CliffMap& map, const std::string& device_name)
{
    return is_exact_map(map) ? exact_baseline_key(map.arch) : noisy_baseline_key(device_name);
}

bool is_cliff_baseline(const std::filesystem::path& path)
{
    return path.extension() == ".csv" && path.stem().extension() == ".cliffs";
}

std::filesystem::path cliff_baseline_path(const std::filesystem::path& dir, const std::string& suite,
                                          const std::string& key)
{
    // The key alone must name a file as it does for the figures' baseline.
    baseline_path(dir, suite, key);
    return child_path(child_path(dir, suite, "suite name"), key + ".cliffs", "baseline key", ".csv");
}

std::filesystem::path cliff_levels_path(const std::filesystem::path& dir, const std::string& suite,
                                        const std::string& key)
{
    baseline_path(dir, suite, key);
    return child_path(child_path(dir, suite, "suite name"), key + ".levels", "baseline key", ".csv");
}

std::filesystem::path cliff_levels_path(const std::filesystem::path& cliffs_path)
{
    constexpr std::string_view suffix = ".cliffs.csv";
    std::string name = cliffs_path.filename().string();
    if (name.ends_with(suffix)) name.resize(name.size() - suffix.size());
    return cliffs_path.parent_path() / (name + ".levels.csv");
}

std::vector<LevelRow> level_rows(const CliffMap& map)
{
    std::vector<LevelRow> rows;
    if (is_exact_map(map)) return rows;
    for (std::size_t i = 0; i < map.x.size() && i < map.values.size() && i < map.noise.size(); ++i) {
        LevelRow r;
        r.variant = map.variant;
        r.axis = map.axis;
        r.others = map.others;
        r.figure = map.figure;
        r.x = map.x[i];
        r.level = map.values[i];
        r.noise = map.noise[i];
        rows.push_back(std::move(r));
    }
    return rows;
}

std::vector<CliffRow> cliff_rows(const CliffMap& map)
{
    std::vector<CliffRow> rows;
    for (const auto& c : map.cliffs) {
        CliffRow r = map_row(map.variant, map.axis, map.others, map.figure);
        r.x_before = c.x_before;
        r.x_after = c.x_after;
        r.level_before = c.level_before;
        r.level_after = c.level_after;
        r.depth = c.depth;
        r.cause = cliff_cause_name(c.cause);
        rows.push_back(std::move(r));
    }
    if (rows.empty()) rows.push_back(map_row(map.variant, map.axis, map.others, map.figure));
    return rows;
}

std::string cliff_baseline_text(const CliffBaselineFile& file)
{
    std::vector<std::vector<std::string>> rows;
    for (const auto& r : file.rows) {
        if (!r.is_cliff()) {
            rows.push_back({r.variant, r.axis, r.others, r.figure, "", "", "", "", "", ""});
            continue;
        }
        rows.push_back({r.variant, r.axis, r.others, r.figure, optional_text(r.x_before), optional_text(r.x_after),
                        number_text(r.level_before), number_text(r.level_after), number_text(r.depth), r.cause});
    }
    return table_file_text(cliff_marker, file, cliff_columns, rows);
}

std::string cliff_levels_text(const CliffBaselineFile& file)
{
    std::vector<std::vector<std::string>> rows;
    rows.reserve(file.levels.size());
    for (const auto& r : file.levels)
        rows.push_back(
            {r.variant, r.axis, r.others, r.figure, number_text(r.x), number_text(r.level), number_text(r.noise)});
    return table_file_text(levels_marker, file, level_columns, rows);
}

void parse_cliff_levels(const std::string& text, const std::string& name, CliffBaselineFile& file)
{
    BaselineHeader header;
    const TableRows table = parse_table_file(text, name, levels_marker, level_columns, header);
    for (const char* field : {"suite", "key"})
        if (header.meta(field) != file.meta(field))
            throw InputError(name, 1, 1, field,
                             fmt::format("'{}' does not match the cliff baseline beside it ('{}')",
                                         header.meta(field).substr(0, 80), file.meta(field).substr(0, 80)));
    std::map<std::tuple<std::string, std::string, std::string, std::string, double>, int> seen;
    for (std::size_t i = 0; i < table.rows.size(); ++i) {
        const auto& f = table.rows[i];
        const int at = table.lines[i];
        LevelRow r;
        r.variant = f[0];
        r.axis = f[1];
        r.others = f[2];
        r.figure = f[3];
        r.line = at;
        r.x = parse_number(f[4], name, at, "x");
        r.level = parse_number(f[5], name, at, "level");
        r.noise = parse_number(f[6], name, at, "noise");
        if (!(r.noise >= 0)) throw InputError(name, at, 1, "noise", fmt::format("{} is negative", f[6].substr(0, 40)));
        if (const auto [it, fresh] = seen.emplace(std::tuple{r.variant, r.axis, r.others, r.figure, r.x}, at); !fresh)
            throw InputError(name, at, 1, "x",
                             fmt::format("a second level for the map {} {} {} {} at {} (the first is on line {})",
                                         r.variant.substr(0, 80), r.axis.substr(0, 80), r.others.substr(0, 80),
                                         r.figure.substr(0, 80), f[4].substr(0, 40), it->second));
        file.levels.push_back(std::move(r));
    }
    file.index_maps();
}

CliffBaselineFile parse_cliff_baseline(const std::string& text, const std::string& name)
{
    CliffBaselineFile file;
    const TableRows table = parse_table_file(text, name, cliff_marker, cliff_columns, file);
    std::map<std::tuple<std::string, std::string, std::string, std::string, std::string>, int> seen;
    for (std::size_t i = 0; i < table.rows.size(); ++i) {
        const auto& f = table.rows[i];
        const int at = table.lines[i];
        CliffRow r = map_row(f[0], f[1], f[2], f[3]);
        r.line = at;
        const bool flat = std::all_of(f.begin() + 4, f.end(), [](const std::string& s) { return s.empty(); });
        if (!flat) {
            r.x_before = parse_number(f[4], name, at, "x_before");
            r.x_after = parse_number(f[5], name, at, "x_after");
            if (!(*r.x_before < *r.x_after))
                throw InputError(name, at, 1, "x_after",
                                 fmt::format("{} is not after x_before {}", f[5].substr(0, 40), f[4].substr(0, 40)));
            r.level_before = parse_number(f[6], name, at, "level_before");
            r.level_after = parse_number(f[7], name, at, "level_after");
            r.depth = parse_number(f[8], name, at, "depth");
            if (!cliff_cause_from_name(f[9]))
                throw InputError(name, at, 1, "cause",
                                 fmt::format("unknown cause '{}'; one of waves, tiles, alignment, footprint, "
                                             "occupancy, unexplained",
                                             f[9].substr(0, 40)));
            r.cause = f[9];
        }
        const auto key = std::tuple{r.variant, r.axis, r.others, r.figure, flat ? std::string() : f[4]};
        if (const auto [it, fresh] = seen.emplace(key, at); !fresh)
            throw InputError(name, at, 1, "",
                             fmt::format("a second row for the map {} {} {} {}{} (the first is on line {})", r.variant,
                                         r.axis, r.others, r.figure, flat ? "" : " at " + f[4], it->second));
        file.rows.push_back(std::move(r));
    }
    // A map is flat or has cliffs, never both: each flat row against its own map's rows alone (a
    // map has one flat row at most), so that the check is linear in the rows.
    file.index_maps();
    for (const auto& r : file.rows) {
        if (r.is_cliff()) continue;
        if (const auto cliffs = file.cliffs_of(map_of(r)); !cliffs.empty())
            throw InputError(name, r.line, 1, "",
                             fmt::format("the map {} {} {} {} has cliffs (line {}) and a row saying it has none",
                                         r.variant, r.axis, r.others, r.figure, cliffs.front()->line));
    }
    return file;
}

CliffBaselineFile read_cliff_baseline(const std::filesystem::path& path)
{
    CliffBaselineFile file = parse_cliff_baseline(read_baseline_text(path, "cliff baseline file"), path.string());
    const auto levels = cliff_levels_path(path);
    if (std::filesystem::exists(levels))
        parse_cliff_levels(read_input_file(levels, max_baseline_file_bytes, "cliff levels file"), levels.string(),
                           file);
    return file;
}

std::size_t rows_of_unknown_maps(const CliffBaselineFile& file, const suite::Suite& suite)
{
    const SuiteMaps maps(suite);
    const auto unknown = [&](const auto& r) { return !maps.known(r.variant, r.axis, r.others); };
    return static_cast<std::size_t>(std::count_if(file.rows.begin(), file.rows.end(), unknown) +
                                    std::count_if(file.levels.begin(), file.levels.end(), unknown));
}

CliffBaselineChanges cliff_baseline_changes(const suite::Suite& suite, const harness::RunReport& report,
                                            const std::filesystem::path& dir)
{
    CliffBaselineChanges out;
    // Where each map sorts: the suite's variant order, then its sweep's order of the other values.
    const SuiteMaps maps(suite);
    const suite::ParamSpec* scanned = maps.scanned;
    const auto& variant_order = maps.variant_order;
    const auto& others_order = maps.others_order;
    const auto known_map = [&](const std::string& variant, const std::string& axis, const std::string& others) {
        return maps.known(variant, axis, others);
    };

    std::map<std::string, std::vector<CliffRow>> fresh;        // by file key
    std::map<std::string, std::vector<LevelRow>> fresh_levels; // by file key
    std::map<std::string, std::set<MapKey>> replaced;          // by file key
    std::map<std::string, std::string> file_arch;              // by file key: the architecture, "" for a GPU model
    for (const auto& m : report.cliff_maps) {
        if (!known_map(m.variant, m.axis, m.others))
            throw Error(ErrorKind::bad_input,
                        fmt::format("the cliff map {} {}{} is not one of suite '{}' ({}); nothing was recorded",
                                    m.variant.substr(0, max_name_length), m.axis.substr(0, max_name_length),
                                    m.others.empty() ? "" : " " + m.others.substr(0, 200), suite.name,
                                    suite.file.string()));
        // A map with a point missing (a case that failed) would record a step across the gap.
        if (m.x.size() != scanned->values.size()) {
            out.notes.push_back(fmt::format("not recorded: the cliff map {} {}{} [{}] has {} of the scan's {} points; "
                                            "its earlier cliffs are kept",
                                            m.variant, m.axis, m.others.empty() ? "" : " " + m.others, m.arch,
                                            m.x.size(), scanned->values.size()));
            continue;
        }
        const std::string key = cliff_baseline_key(m, report.device_name);
        file_arch[key] = is_exact_map(m) ? m.arch : "";
        replaced[key].insert(key_of(m));
        for (auto& r : cliff_rows(m)) fresh[key].push_back(std::move(r));
        for (auto& r : level_rows(m)) fresh_levels[key].push_back(std::move(r));
    }

    const bool gpu = report.mode != RunMode::static_tier;
    for (auto& [key, rows] : fresh) {
        const auto path = cliff_baseline_path(dir, suite.name, key);
        CliffBaselineFile file;
        const bool existed = std::filesystem::exists(path);
        if (existed) {
            file = read_cliff_baseline(path);
            check_baseline_identity(file, path.string(), suite.name, key);
        }
        const std::vector<CliffRow> before = file.rows;
        const std::vector<LevelRow> levels_before = file.levels;
        std::erase_if(file.levels, [&](const LevelRow& r) {
            return !known_map(r.variant, r.axis, r.others) || replaced[key].contains(key_of(r));
        });
        auto& new_levels = fresh_levels[key];
        file.levels.insert(file.levels.end(), std::make_move_iterator(new_levels.begin()),
                           std::make_move_iterator(new_levels.end()));
        std::stable_sort(file.levels.begin(), file.levels.end(), [&](const LevelRow& a, const LevelRow& b) {
            return std::tuple(variant_order.at(a.variant), others_order.at(a.others), a.figure, a.x) <
                   std::tuple(variant_order.at(b.variant), others_order.at(b.others), b.figure, b.x);
        });
        const auto same_level = [](const LevelRow& a, const LevelRow& b) {
            return key_of(a) == key_of(b) && a.x == b.x && a.level == b.level && a.noise == b.noise;
        };
        const bool levels_same =
            std::equal(levels_before.begin(), levels_before.end(), file.levels.begin(), file.levels.end(), same_level);
        std::size_t dropped = 0;
        std::erase_if(file.rows, [&](const CliffRow& r) {
            if (!known_map(r.variant, r.axis, r.others)) {
                ++dropped;
                return true;
            }
            return replaced[key].contains(key_of(r));
        });
        if (dropped > 0)
            out.notes.push_back(
                fmt::format("{}: dropped {} rows of maps no longer in the suite", path.string(), dropped));
        file.rows.insert(file.rows.end(), std::make_move_iterator(rows.begin()), std::make_move_iterator(rows.end()));
        std::stable_sort(file.rows.begin(), file.rows.end(), [&](const CliffRow& a, const CliffRow& b) {
            return std::tuple(variant_order.at(a.variant), others_order.at(a.others), a.figure,
                              a.x_before.value_or(0)) <
                   std::tuple(variant_order.at(b.variant), others_order.at(b.others), b.figure, b.x_before.value_or(0));
        });
        const auto same = [](const CliffRow& a, const CliffRow& b) {
            return key_of(a) == key_of(b) && a.x_before == b.x_before && a.x_after == b.x_after &&
                   a.level_before == b.level_before && a.level_after == b.level_after && a.depth == b.depth &&
                   a.cause == b.cause;
        };
        if (existed && levels_same &&
            std::equal(before.begin(), before.end(), file.rows.begin(), file.rows.end(), same)) {
            out.unchanged.push_back(path.string());
            continue;
        }
        const bool exact = !file_arch[key].empty();
        file.set_identity(suite.name, key);
        file.set_meta("figures", exact ? "cliffs of exact figures (gate every GPU of this architecture)"
                                       : "cliffs of noisy figures (gate only this GPU model)");
        file.set_meta("gpu", gpu ? report.device_name : "none (static tier)");
        file.set_meta("arch", exact ? file_arch[key] : report.arch);
        file.set_writer(report.cuda_version, report.harness_version, report.git_revision, report.timestamp);
        out.files.emplace_back(path, cliff_baseline_text(file));
        // A file of exact maps keeps no levels; one of noisy maps keeps them beside its cliffs.
        if (!file.levels.empty() || !levels_before.empty())
            out.files.emplace_back(cliff_levels_path(dir, suite.name, key), cliff_levels_text(file));
    }
    return out;
}

} // namespace harness::compare
