#include "harness/pipeline/revision_sass.hxx"

#include "harness/compile/sass_figures.hxx"
#include "harness/compile/static_tier.hxx"
#include "harness/core/child_process.hxx"
#include "harness/core/error.hxx"
#include "harness/core/text.hxx"
#include "harness/pipeline/git_repository.hxx"
#include "harness/suite/sweep.hxx"

#include <fmt/format.h>
#include <memory>

namespace harness::pipeline {

namespace fs = std::filesystem;

RevisionSass sass_at_revision(const RevisionSassRequest& request)
{
    const compile::NvdisasmLocation& nvdisasm = compile::find_nvdisasm();
    if (nvdisasm.program.empty())
        throw Error(ErrorKind::environment, "no SASS can be read: " + nvdisasm.not_found_reason);
    std::error_code ec;
    const bool here = fs::is_regular_file(request.suite, ec);
    const GitRepository repository =
        GitRepository::containing(here ? fs::absolute(request.suite, ec).parent_path() : fs::current_path());
    const fs::path suite_path = path_in_repository(request.suite, repository);

    RevisionSass out;
    std::unique_ptr<Worktree> tree;
    fs::path root = repository.top(), working_folder;
    if (request.revision.empty()) {
        out.shown = "the checkout";
        if (!fs::is_regular_file(root / suite_path, ec))
            throw Error(ErrorKind::bad_input, fmt::format("{}: no such suite in the checkout", suite_path.string()));
    } else {
        const auto hash = repository.resolve_commit(request.revision);
        if (!hash)
            throw Error(ErrorKind::bad_input, fmt::format("{}: no such commit in {}", request.revision.substr(0, 80),
                                                          repository.top().string()));
        const CommitInfo commit = repository.describe(*hash);
        out.shown =
            fmt::format("{} ({}: {})", request.revision.substr(0, 80), hash->substr(0, 12), first_line(commit.subject));
        if (!repository.has_file(*hash, suite_path))
            throw Error(ErrorKind::bad_input,
                        fmt::format("{}: not in commit {}", suite_path.generic_string(), out.shown));
        tree = std::make_unique<Worktree>(repository, *hash);
        root = tree->path();
        working_folder = working_folder_in(root, repository.top());
    }
    const auto shown_path = [&](std::string text) { return tree ? in_commit(std::move(text), root) : text; };
    if (tree && !request.build_command.empty()) {
        const ProgramOutput built = run_program({"/bin/sh", "-c", request.build_command}, root, false);
        if (built.exit_code != 0)
            throw Error(ErrorKind::bad_input,
                        fmt::format("at {}: --build failed (exit status {})", out.shown, built.exit_code));
    }
    suite::Suite suite;
    try {
        suite = suite::load_suite(root / suite_path, {.sources_anywhere = false, .working_folder = working_folder});
    } catch (const Error& e) {
        throw Error(e.kind(), fmt::format("at {}: {}", out.shown, shown_path(e.what())));
    }
    const auto& archs = request.archs.empty() ? suite.archs : request.archs;
    for (const auto& r :
         compile::run_static_tier(suite, suite::expand_cases(suite), archs, request.cache, false, &out.code, true))
        if (r.status != CaseStatus::passed && r.status != CaseStatus::skipped)
            out.problems.push_back(fmt::format("{} {} {}: {}: {}", r.variant, r.params_text, r.arch,
                                               case_status_name(r.status), first_line(shown_path(r.message))));
        else if (!r.sass_not_measured.empty())
            out.problems.push_back(
                fmt::format("{} {} {}: no SASS: {}", r.variant, r.params_text, r.arch, r.sass_not_measured));
    return out;
}

} // namespace harness::pipeline
