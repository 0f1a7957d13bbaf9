// The cliff baseline readers: a cliffs file and the levels file beside it, each read under the name
// baselines/<suite>/<key>.cliffs.csv (or .levels.csv) that its seed had in the corpus, and looked
// up by map as the gate does.

#include "rules.hxx"
#include "targets.hxx"

#include "harness/compare/cliff_baseline.hxx"
#include "harness/core/error.hxx"

#include <cmath>
#include <fmt/format.h>
#include <map>
#include <set>
#include <tuple>

namespace harness::fuzz {

namespace fs = std::filesystem;

namespace {

/// The suite and key a seed's path names: <suite>/<key><suffix>.
std::pair<std::string, std::string> place_of(const InputContext& context, std::string_view suffix)
{
    const fs::path seed = context.seed_name;
    const std::string suite = seed.has_parent_path() ? seed.parent_path().filename().string() : "fuzz";
    std::string key = seed.filename().string();
    if (key.ends_with(suffix)) key.resize(key.size() - suffix.size());
    return {suite, key};
}

/// The map a row or level belongs to, as the gate looks it up.
template <typename Row> CliffMap map_of(const Row& r)
{
    CliffMap m;
    m.variant = r.variant;
    m.axis = r.axis;
    m.others = r.others;
    m.figure = r.figure;
    return m;
}

void require_header(const compare::BaselineHeader& file, const std::string& name, const std::string& suite,
                    const std::string& key)
{
    std::set<std::string> names;
    for (const auto& [meta, value] : file.metadata)
        require(names.insert(meta).second, "unique-metadata",
                fmt::format("accepted the metadata '{}' twice", excerpt(meta)));
    require(file.meta("suite").empty() || file.meta("suite") == suite, "metadata-matches-path",
            fmt::format("{} says '# suite: {}'", name, excerpt(file.meta("suite"))));
    require(file.meta("key").empty() || file.meta("key") == key, "metadata-matches-path",
            fmt::format("{} says '# key: {}'", name, excerpt(file.meta("key"))));
}

} // namespace

Reception run_cliffs(const std::string& input, const InputContext& context)
{
    const auto [suite, key] = place_of(context, ".cliffs.csv");
    const std::string name = (fs::path("baselines") / suite / (key + ".cliffs.csv")).string();
    compare::CliffBaselineFile file;
    try {
        file = compare::parse_cliff_baseline(input, name);
        compare::check_baseline_identity(file, name, suite, key);
    } catch (const Error& e) {
        if (e.kind() != ErrorKind::bad_input) throw;
        return {false, e.what()};
    }
    require(is_utf8(input), "utf8", "accepted a file that is not UTF-8 text");
    require_header(file, name, suite, key);
    // One row per cliff of a map, or its one flat row; never both. Each map looked up by index finds
    // what a scan of the rows finds.
    std::map<std::tuple<std::string, std::string, std::string, std::string>, std::pair<int, int>> maps;
    for (const auto& r : file.rows) {
        auto& [flat, cliffs] = maps[{r.variant, r.axis, r.others, r.figure}];
        (r.is_cliff() ? cliffs : flat) += 1;
        if (r.is_cliff())
            require(std::isfinite(*r.x_before) && std::isfinite(*r.x_after) && *r.x_before < *r.x_after,
                    "cliff-in-order", fmt::format("accepted a cliff from {} to {}", *r.x_before, *r.x_after));
    }
    for (const auto& [map, counts] : maps) {
        const auto& [variant, axis, others, figure] = map;
        const auto [flat, cliffs] = counts;
        require(flat <= 1 && (flat == 0 || cliffs == 0), "flat-or-cliffs",
                fmt::format("accepted the map {} {} {} {} with {} flat rows and {} cliffs", excerpt(variant),
                            excerpt(axis), excerpt(others), excerpt(figure), flat, cliffs));
        compare::CliffRow row;
        row.variant = variant;
        row.axis = axis;
        row.others = others;
        row.figure = figure;
        const CliffMap m = map_of(row);
        require(file.holds(m) && file.cliffs_of(m).size() == static_cast<std::size_t>(cliffs), "lookup-by-map",
                fmt::format("the map {} {} {} {} of {} cliffs is looked up with {}", excerpt(variant), excerpt(axis),
                            excerpt(others), excerpt(figure), cliffs, file.cliffs_of(m).size()));
    }
    return {true, ""};
}

Reception run_cliff_levels(const std::string& input, const InputContext& context)
{
    const auto [suite, key] = place_of(context, ".levels.csv");
    const std::string name = (fs::path("baselines") / suite / (key + ".levels.csv")).string();
    // The levels are read into the cliff baseline beside them, whose header names the same place.
    compare::CliffBaselineFile file;
    file.set_meta("schema_version", "1");
    file.set_meta("suite", suite);
    file.set_meta("key", key);
    try {
        compare::parse_cliff_levels(input, name, file);
    } catch (const Error& e) {
        if (e.kind() != ErrorKind::bad_input) throw;
        return {false, e.what()};
    }
    require(is_utf8(input), "utf8", "accepted a file that is not UTF-8 text");
    std::map<std::tuple<std::string, std::string, std::string, std::string>, std::set<double>> maps;
    for (const auto& r : file.levels) {
        require(std::isfinite(r.x) && std::isfinite(r.level) && std::isfinite(r.noise) && r.noise >= 0,
                "numbers-finite", fmt::format("accepted the level {} +- {} at {}", r.level, r.noise, r.x));
        require(maps[{r.variant, r.axis, r.others, r.figure}].insert(r.x).second, "unique-rows",
                fmt::format("accepted two levels of the map {} {} at {}", excerpt(r.variant), excerpt(r.axis), r.x));
    }
    for (const auto& [map, xs] : maps) {
        const auto& [variant, axis, others, figure] = map;
        compare::LevelRow probe;
        probe.variant = variant;
        probe.axis = axis;
        probe.others = others;
        probe.figure = figure;
        const auto levels = file.levels_of(map_of(probe));
        require(levels.size() == xs.size() && std::is_sorted(levels.begin(), levels.end(),
                                                             [](const auto* a, const auto* b) { return a->x < b->x; }),
                "lookup-by-map",
                fmt::format("the map {} {} of {} levels is looked up with {}", excerpt(variant), excerpt(axis),
                            xs.size(), levels.size()));
    }
    return {true, ""};
}

std::span<const std::string_view> cliff_tokens()
{
    using namespace std::string_view_literals;
    // clang-format off
    static constexpr std::string_view tokens[] = {
        "# harness cliff baseline\n"sv, "# harness cliff levels\n"sv, "# schema_version: 1\n"sv, "# suite: "sv,
        "# key: "sv, "# suite: other\n"sv, "# key: sm_80\n"sv,
        "\"variant\",\"axis\",\"others\",\"figure\",\"x_before\",\"x_after\",\"level_before\",\"level_after\","
        "\"depth\",\"cause\"\n"sv,
        "\"variant\",\"axis\",\"others\",\"figure\",\"x\",\"level\",\"noise\"\n"sv, ","sv, ",,,,,,"sv, "\""sv,
        "\"\""sv, "\"a,b\""sv, "\r\n"sv, "SLOTS_KIB"sv, "N=1048576"sv, "theoretical_occupancy"sv, "time"sv,
        "occupancy"sv, "waves"sv, "tiles"sv, "alignment"sv, "footprint"sv, "unexplained"sv, "gravity"sv,
        "1e308"sv, "1e309"sv, "nan"sv, "-inf"sv, "-0.125"sv, "0.875"sv,
    };
    // clang-format on
    return tokens;
}

} // namespace harness::fuzz
