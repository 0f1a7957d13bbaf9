// The baseline reader: a CSV table under `# name: value` metadata, read under the name
// baselines/<suite>/<key>.csv that its seed had in the corpus.

#include "rules.hxx"
#include "targets.hxx"

#include "harness/compare/baseline_file.hxx"
#include "harness/core/error.hxx"

#include <fmt/format.h>
#include <set>
#include <tuple>

namespace harness::fuzz {

namespace fs = std::filesystem;

Reception run_baseline(const std::string& input, const InputContext& context)
{
    // The last two components of the seed's path are <suite>/<key>.csv.
    const fs::path seed = context.seed_name;
    const std::string suite = seed.has_parent_path() ? seed.parent_path().filename().string() : "fuzz";
    const std::string key = seed.stem().string();
    const std::string name = (fs::path("baselines") / suite / seed.filename()).string();

    compare::BaselineFile file;
    try {
        // As the tool reads a baseline: parsed, then checked to belong where it was found.
        file = compare::parse_baseline(input, name);
        compare::check_baseline_identity(file, name, suite, key);
    } catch (const Error& e) {
        if (e.kind() != ErrorKind::bad_input) throw;
        return {false, e.what()};
    }
    require(is_utf8(input), "utf8", "accepted a file that is not UTF-8 text");
    std::set<std::string> names;
    for (const auto& [meta, value] : file.metadata)
        require(names.insert(meta).second, "unique-metadata",
                fmt::format("accepted the metadata '{}' twice", excerpt(meta)));
    require(file.meta("suite").empty() || file.meta("suite") == suite, "metadata-matches-path",
            fmt::format("{} says '# suite: {}'", name, excerpt(file.meta("suite"))));
    require(file.meta("key").empty() || file.meta("key") == key, "metadata-matches-path",
            fmt::format("{} says '# key: {}'", name, excerpt(file.meta("key"))));
    std::set<std::tuple<std::string, std::string, std::string>> rows;
    for (const auto& r : file.rows)
        require(
            rows.emplace(r.variant, r.params, r.metric).second, "unique-rows",
            fmt::format("accepted two rows for {} {} {}", excerpt(r.variant), excerpt(r.params), excerpt(r.metric)));
    return {true, ""};
}

std::span<const std::string_view> baseline_tokens()
{
    using namespace std::string_view_literals;
    // clang-format off
    static constexpr std::string_view tokens[] = {
        "# harness baseline\n"sv, "# schema_version: 1\n"sv, "# schema_version: 2\n"sv, "# suite: "sv,
        "# key: "sv, "# suite: other\n"sv, "# arch: sm_90\n"sv, "#\n"sv, "#:\n"sv,
        "variant,params,metric,value,samples,source\n"sv, ","sv, ",,"sv, "\""sv, "\"\""sv, "\"a,b\""sv,
        "\"a\nb\""sv, "\r\n"sv, "static"sv, "gpu"sv, "registers"sv, "time_median"sv, "N=256"sv,
        "N=256 K=64"sv, "1e308"sv, "1e309"sv, "0x1p3"sv, "1.5 2.5 3.5"sv, "nan"sv,
    };
    // clang-format on
    return tokens;
}

} // namespace harness::fuzz
