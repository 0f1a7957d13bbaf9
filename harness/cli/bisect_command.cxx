// `harness bisect`: the first commit between a good and a bad one at which a case's figure moved.

#include "harness/cli/commands.hxx"
#include "harness/cli/exit_codes.hxx"
#include "harness/cli/options.hxx"
#include "harness/compile/kernel_cache.hxx"
#include "harness/core/atomic_file.hxx"
#include "harness/pipeline/bisect.hxx"

#include <fmt/format.h>
#include <iostream>
#include <nlohmann/json.hpp>

namespace harness::cli {

namespace fs = std::filesystem;

int bisect_command(const std::vector<std::string>& args)
{
    CLI::App app{"Find the first commit between --good and --bad at which a figure of the suite's cases moved. Each "
                 "commit tested is checked out in a temporary git worktree (the work tree and index are left alone) "
                 "and this harness runs the chosen cases there; commits where the suite or case is missing or does "
                 "not compile are skipped. Exit 0: found; 1: not found (the figures are equal at both ends, or only "
                 "skipped commits are left); 2: bad input; 3: not a git repository, or no git.",
                 "harness bisect"};
    pipeline::BisectRequest request;
    std::string suite;
    std::vector<std::string> one_case;
    std::string json_file;
    CommonOptions cache_options;
    app.add_option("suite", suite,
                   "the suite file: a path in the current checkout, or relative to the top of the repository")
        ->required();
    app.add_option("--good", request.good, "a commit whose figures are the expected ones")->required();
    app.add_option("--bad", request.bad, "a later commit (on the first-parent line) whose figures moved")->required();
    app.add_option("--case", one_case, "only this case: its variant and its parameters as `harness list` prints them")
        ->expected(2)
        ->type_name("VARIANT PARAMS");
    app.add_option("--metric", request.metric,
                   "the figure to follow (default: every exact figure of the cases); time_median and time_min are "
                   "judged on repeated samples, on a GPU");
    app.add_flag("--static", request.static_only, "static tier only, even with a GPU");
    app.add_option("--arch", request.archs, "architectures for the static tier (default: the suite's archs)")
        ->check(known_arch_validator());
    app.add_option("--build", request.build_command,
                   "a command run with /bin/sh -c in each commit's worktree before its cases (modules built by nvcc); "
                   "a commit whose build fails is skipped");
    app.add_option("--device", request.device, "CUDA device ordinal")->capture_default_str();
    app.add_option("--json", json_file, "also write the result as JSON (schema harness-bisect)");
    app.add_option("--cache-dir", cache_options.cache_dir, "compiled-kernel cache, a folder only you may write to");
    app.add_flag("--no-cache", cache_options.no_cache, "compile every kernel afresh");
    if (auto code = parse(app, args)) return *code;
    if (!cache_options.no_cache)
        compile::CompileCache::check_folder(cache_options.cache_dir.empty() ? compile::CompileCache::default_dir()
                                                                            : fs::path(cache_options.cache_dir));

    if (one_case.size() == 2) request.cases.emplace_back(one_case[0], one_case[1]);
    request.suite = suite;
    const auto cache = make_cache(cache_options);
    request.cache = cache ? &*cache : nullptr;
    const pipeline::BisectResult result = pipeline::bisect(request, std::cerr);
    pipeline::print_bisect(result, std::cout);
    std::cout.flush();
    if (!json_file.empty()) write_file_atomically(json_file, pipeline::bisect_json(result).dump(2) + "\n");
    return result.outcome == pipeline::BisectOutcome::found ? exit_pass : exit_failure;
}

} // namespace harness::cli
