// `harness sass-diff A B`: the normalised SASS of two runs, or of a run and its baseline, case by
// case, grouped by source line (core/sass_code.hxx); with --suite, of two revisions, each compiled
// in a worktree of its own (pipeline/revision_sass.hxx).

#include "harness/cli/commands.hxx"
#include "harness/cli/exit_codes.hxx"
#include "harness/cli/options.hxx"
#include "harness/compare/sass_baseline.hxx"
#include "harness/compare/sass_diff.hxx"
#include "harness/compile/kernel_cache.hxx"
#include "harness/core/atomic_file.hxx"
#include "harness/core/error.hxx"
#include "harness/pipeline/revision_sass.hxx"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <iostream>

namespace harness::cli {

namespace fs = std::filesystem;

namespace {

/// One side: its code files by architecture, and the failing verdicts' lines of its results.json.
struct DiffSide {
    std::map<std::string, SassCodeFile> code;
    std::map<std::tuple<std::string, std::string, std::string>, std::vector<std::string>> anchors;
    bool gpu = false;
};

/// A folder (sass-<arch>.gz, as a run writes them, or <arch>.sass.gz, as baselines keep them, and
/// results.json where there is one) or one such file.
DiffSide read_side(const fs::path& path)
{
    DiffSide side;
    std::vector<fs::path> files;
    if (fs::is_directory(path)) {
        for (const auto& e : fs::directory_iterator(path)) {
            const std::string name = e.path().filename().string();
            if (e.is_regular_file() &&
                ((name.starts_with("sass-") && name.ends_with(".gz")) || name.ends_with(".sass.gz")))
                files.push_back(e.path());
        }
        if (const fs::path results = path / "results.json"; fs::exists(results)) {
            const RunReport run = read_results_json(results);
            side.gpu = run.mode != RunMode::static_tier;
            for (const auto& r : run.results)
                side.anchors[{r.variant, r.params_text, r.arch}] = compare::diff_anchors(r);
        }
    } else {
        files.push_back(path);
    }
    for (const auto& f : files) {
        auto code = compare::read_sass_code(f);
        if (code) side.code[code->arch] = std::move(*code);
    }
    if (side.code.empty())
        throw Error(ErrorKind::bad_input,
                    fmt::format("{}: no normalised SASS (a run's sass-<arch>.gz, or a baseline's <arch>.sass.gz)",
                                path.string()));
    return side;
}

/// A revision of the suite's repository compiled in a worktree of its own (the checkout when `revision` is empty).
DiffSide revision_side(pipeline::RevisionSassRequest request, const std::string& revision)
{
    request.revision = revision;
    pipeline::RevisionSass read = pipeline::sass_at_revision(request);
    fmt::print(stderr, "harness sass-diff: {}: {} architecture(s) compiled{}\n", read.shown, read.code.size(),
               read.problems.empty() ? "" : fmt::format(", {} case(s) without SASS:", read.problems.size()));
    for (const auto& problem : read.problems) fmt::print(stderr, "  {}\n", problem);
    DiffSide side;
    side.code = std::move(read.code);
    return side;
}

} // namespace

int sass_diff_command(const std::vector<std::string>& args)
{
    CLI::App app{"The normalised SASS of two runs' cases, or of a run and its baseline, diffed by source line: "
                 "registers renamed in order of first use, addresses, encodings, branch targets and NOPs left out. "
                 "Exit 0 when every case both hold is identical, 1 when one differs.",
                 "harness sass-diff"};
    std::string before, after, output, only_variant, only_params, suite;
    pipeline::RevisionSassRequest revisions;
    CommonOptions cache_options;
    app.add_option("before", before,
                   "a result folder (its sass-<arch>.gz), a baseline folder (baselines/<suite>) or one such file; "
                   "with --suite, a revision (a commit, branch or tag)")
        ->required();
    app.add_option("after", after,
                   "the same, for the other side (its results.json's failing lines lead); with --suite, a revision, "
                   "or none for the checkout as it is (uncommitted edits too)");
    app.add_option("--suite", suite,
                   "compare two revisions of this suite: each checked out in a temporary worktree and its static "
                   "tier compiled there (the work tree, index and branches are left alone)");
    app.add_option("--arch", revisions.archs, "with --suite: architectures (default: the suite's archs)")
        ->check(known_arch_validator());
    app.add_option("--build", revisions.build_command,
                   "with --suite: a command run with /bin/sh -c in each revision's worktree first (modules built by "
                   "nvcc)");
    app.add_option("--cache-dir", cache_options.cache_dir, "compiled-kernel cache, a folder only you may write to");
    app.add_flag("--no-cache", cache_options.no_cache, "compile every kernel afresh");
    app.add_option("-o,--output", output, "write the diff to this file instead of standard output");
    app.add_option("--variant", only_variant, "only this variant's cases");
    app.add_option("--params", only_params, "only the cases at this point (\"N=256\")");
    if (const auto code = parse(app, args)) return *code;
    try {
        if (suite.empty() && after.empty())
            throw Error(ErrorKind::bad_input, "two sides are needed: BEFORE AFTER (or --suite SUITE BEFORE [AFTER])");
        if (suite.empty() && (!revisions.archs.empty() || !revisions.build_command.empty()))
            throw Error(ErrorKind::bad_input, "--arch and --build compile revisions: they need --suite");
        std::optional<compile::CompileCache> cache;
        if (!suite.empty()) {
            if (!cache_options.no_cache)
                compile::CompileCache::check_folder(cache_options.cache_dir.empty()
                                                        ? compile::CompileCache::default_dir()
                                                        : fs::path(cache_options.cache_dir));
            cache = make_cache(cache_options);
            revisions.suite = suite;
            revisions.cache = cache ? &*cache : nullptr;
        }
        const DiffSide a = suite.empty() ? read_side(before) : revision_side(revisions, before);
        const DiffSide b = suite.empty() ? read_side(after) : revision_side(revisions, after);
        std::string text;
        std::size_t compared = 0, differing = 0;
        for (const auto& [arch, now] : b.code) {
            const auto was = a.code.find(arch);
            if (was == a.code.end()) continue;
            for (const auto& [key, codes] : now.cases) {
                if ((!only_variant.empty() && key.first != only_variant) ||
                    (!only_params.empty() && key.second != only_params))
                    continue;
                const auto anchors = b.anchors.find({key.first, key.second, arch});
                const auto diff =
                    compare::case_sass_diff(was->second, a.gpu, now, b.gpu, key.first, key.second,
                                            anchors == b.anchors.end() ? std::vector<std::string>{} : anchors->second);
                if (!diff) continue;
                ++compared;
                if (diff->text.empty()) continue;
                ++differing;
                text += fmt::format("=== {} {} {} ===\n{}\n", key.first, key.second, arch, diff->text);
            }
        }
        text += fmt::format("{} of {} cases held by both differ\n", differing, compared);
        if (output.empty()) {
            std::cout << text;
        } else {
            write_file_atomically(output, text);
            fmt::print("wrote {} ({} of {} cases differ)\n", output, differing, compared);
        }
        return differing > 0 ? exit_failure : exit_pass;
    } catch (const Error& e) {
        fmt::print(stderr, "harness sass-diff: {}\n", e.what());
        return e.kind() == ErrorKind::bad_input ? exit_bad_input : exit_environment;
    }
}

} // namespace harness::cli
