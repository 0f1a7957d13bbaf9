// A suite's `module:` variants: a cubin, fatbin or PTX file built by the project's own compiler
// (nvcc), launched as the variant's launches say.

#include "harness/core/input_files.hxx"
#include "harness/suite/loader.hxx"

#include <cstdlib>
#include <fmt/format.h>
#include <regex>

namespace harness::suite {

/// A variant whose kernels come from a module file (cubin, fatbin or PTX) built by the project's
/// own compiler. The path is literal, but for one documented form: a leading `${NAME_DIR}`, a
/// variable whose name ends in `_DIR` and whose value is a folder (the build folder), followed by
/// a path inside it. No other variable is read, the module stays inside that folder (no `..`),
/// and messages show the path as written, never the variable's value: a suite must not be able
/// to put a job's token into a report ("no such module file: ghp_...") or climb out through
/// `${PWD}/..` or a symbolic link. A path written without a variable stays in the project.
VariantSpec Loader::module_variant(VariantSpec v, const YAML::Node& node, const std::string& field,
                                   const std::set<std::string, std::less<>>& params,
                                   const std::vector<BufferSpec>& suite_buffers) const
{
    check_keys(node, field, kernel_variant_keys(), {});
    for (const char* key : {"source", "defines", "options"})
        if (node[key])
            fail(node[key], field + "." + key,
                 fmt::format("a 'module' variant is built already: '{}' does not apply", key));
    const std::string written = scalar(node["module"], field + ".module");
    if (written.empty() || written.find('\0') != std::string::npos)
        fail(node["module"], field + ".module", "must name a file");
    v.module_written = written;
    const std::size_t variable_at = written.find("${");
    if (variable_at == std::string::npos) {
        v.module = resolve(node["module"], field + ".module", written);
        check_inside_project(node["module"], field + ".module", v.module);
    } else {
        const std::size_t close = written.find('}');
        const std::string name = close == std::string::npos ? "" : written.substr(2, close - 2);
        static const std::regex folder_variable("[A-Za-z_][A-Za-z0-9_]*_DIR");
        if (variable_at != 0 || !std::regex_match(name, folder_variable) ||
            written.find("${", close) != std::string::npos)
            fail(node["module"], field + ".module",
                 "a module path is literal, or starts with one folder variable ${NAME_DIR} (a name ending in _DIR, "
                 "e.g. ${BUILD_DIR}/modules/x.fatbin); no other variable is read");
        const char* value = std::getenv(name.c_str());
        if (!value || !*value)
            fail(node["module"], field + ".module",
                 fmt::format("the environment variable {} is not set (it names where the module is built)", name));
        std::error_code ec;
        // A relative folder (BUILD_DIR=build) means it from the working folder, as a shell would (a
        // bisect step's: its worktree's, LoadOptions::working_folder). It need not exist until the
        // project is built.
        const fs::path given(value);
        const fs::path folder = fs::weakly_canonical(given.is_relative() && !options_.working_folder.empty()
                                                         ? options_.working_folder / given
                                                         : fs::absolute(given, ec),
                                                     ec);
        if (ec)
            fail(node["module"], field + ".module",
                 fmt::format("${{{}}} does not name a folder (its value is not shown)", name));
        const fs::path rest = fs::path(written.substr(close + 1)).relative_path();
        for (const auto& part : rest)
            if (part == "..")
                fail(node["module"], field + ".module",
                     fmt::format("'..' would leave the folder ${{{}}} names: a module stays inside it", name));
        // A folder above the project (a runner's builds folder holding other checkouts, a home, /)
        // is no build folder: through it a suite would reach every project beside this one. The
        // project's own folder (${CI_PROJECT_DIR}) is one.
        if (!options_.sources_anywhere && is_inside(root_, folder) && !is_inside(folder, root_))
            fail(node["module"], field + ".module",
                 fmt::format("${{{}}} names a folder that holds the project, not a build folder; the folder of a "
                             "module lies inside the project or beside it (pass --sources-anywhere to allow it)",
                             name));
        // Resolved before it is checked: a link inside the folder must not lead out of it.
        v.module = fs::weakly_canonical(folder / rest, ec);
        if (ec || (!options_.sources_anywhere && !is_inside(v.module, folder)))
            fail(node["module"], field + ".module",
                 fmt::format("{} leads out of the folder ${{{}}} names (through a symbolic link): a module stays "
                             "inside it",
                             written.substr(0, 200), name));
        v.module_folder = folder;
    }
    if (node["built_from"])
        for (const auto& source : string_list(node["built_from"], field + ".built_from")) {
            const fs::path p = resolve(node["built_from"], field + ".built_from", source);
            check_inside_project(node["built_from"], field + ".built_from", p);
            if (!fs::is_regular_file(p))
                fail(node["built_from"], field + ".built_from", fmt::format("no such file: {}", p.string()));
            v.built_from.push_back(p);
        }
    if (node["stale"]) {
        const std::string stale = scalar(node["stale"], field + ".stale");
        if (stale != "allow" && stale != "error")
            fail(node["stale"], field + ".stale",
                 fmt::format("'{}': write 'error' (the default: a module older than its sources fails) or 'allow'",
                             stale.substr(0, 100)));
        v.allow_stale = stale == "allow";
    }
    return kernel_launches(std::move(v), node, field, params, suite_buffers);
}

} // namespace harness::suite
