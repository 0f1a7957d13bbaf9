#include "harness/cli/options.hxx"

#include "harness/cli/exit_codes.hxx"
#include "harness/core/arch_limits.hxx"
#include "harness/core/input_files.hxx"
#include "harness/core/text.hxx"

#include <fmt/format.h>

namespace harness::cli {

namespace {

std::filesystem::path cache_dir(const CommonOptions& o)
{
    return o.cache_dir.empty() ? compile::CompileCache::default_dir() : std::filesystem::path(o.cache_dir);
}

} // namespace

std::optional<int> parse(CLI::App& app, const std::vector<std::string>& args)
{
    std::vector<std::string> reversed(args.rbegin(), args.rend());
    try {
        app.parse(reversed);
    } catch (const CLI::CallForHelp&) {
        fmt::print("{}", app.help());
        return exit_pass;
    } catch (const CLI::ParseError& e) {
        fmt::print(stderr, "harness {}: {}\n", app.get_name(), e.what());
        return exit_bad_input;
    }
    return std::nullopt;
}

CLI::Validator known_arch_validator()
{
    return CLI::Validator(
        [](std::string& arch) -> std::string {
            if (find_arch_limits(arch) && name_problem(arch).empty()) return "";
            std::vector<std::string> known;
            for (const auto& limits : known_arch_limits()) known.emplace_back(limits.name);
            return fmt::format("unknown architecture '{}'; one of {}", arch.substr(0, 40), join(known));
        },
        "ARCH");
}

void add_common(CLI::App& app, CommonOptions& o)
{
    app.add_option("suites", o.suites, "suite files (YAML)")->required()->check(CLI::ExistingFile);
    app.add_option("--cache-dir", o.cache_dir,
                   "compiled-kernel cache, a folder only you may write to (default $HARNESS_CACHE_DIR, "
                   "$XDG_CACHE_HOME/harness, ~/.cache/harness or $TMPDIR/harness-cache-<uid>)");
    app.add_flag("--no-cache", o.no_cache, "compile every kernel afresh");
    app.add_flag("--sources-anywhere", o.sources_anywhere,
                 "allow kernel sources and include folders outside the suite's project");
    // A cache folder others may write to is refused as soon as the command line is read, before any
    // suite is loaded or compiled, by every command that takes one.
    app.final_callback([&o] {
        if (!o.no_cache) compile::CompileCache::check_folder(cache_dir(o));
    });
}

std::vector<suite::Suite> load_suites(const CommonOptions& o)
{
    std::vector<suite::Suite> suites;
    for (const auto& file : o.suites)
        suites.push_back(suite::load_suite(file, {.sources_anywhere = o.sources_anywhere}));
    return suites;
}

std::optional<compile::CompileCache> make_cache(const CommonOptions& o)
{
    if (o.no_cache) return std::nullopt;
    return compile::CompileCache(cache_dir(o));
}

} // namespace harness::cli
