#pragma once
// Command-line pieces the subcommands share.

#include "harness/compare/compare_run.hxx"
#include "harness/compile/nvrtc_compiler.hxx"
#include "harness/suite/suite.hxx"

#include <CLI/CLI.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace harness::cli {

/// Parses a subcommand's options; returns an exit code when it should stop (help or an error).
std::optional<int> parse(CLI::App& app, const std::vector<std::string>& args);

/// A group of subcommands (the tool itself, `harness baseline`), dispatched by CLI11 like every
/// command's options, so that help, errors and "did you mean" read the same everywhere.
struct Subcommand {
    const char* name;
    const char* description;
    int (*run)(const std::vector<std::string>& args);
};

/// Parses `args` as `<subcommand> [its arguments]` and runs the subcommand with its arguments; with
/// no subcommand (or --help) prints the group's help and returns 0.
int dispatch_group(CLI::App& app, std::span<const Subcommand> subcommands, const std::vector<std::string>& args);

/// Accepts an architecture the harness knows (sm_80, sm_90a, ...); the message lists them.
CLI::Validator known_arch_validator();

/// Accepts a finite decimal number of seconds above 0 and at most `most` (`--timeout`, `--budget`),
/// as the suite's `timing:` takes them; NaN, infinities and negative numbers are refused.
CLI::Validator seconds_validator(double most);

/// Suite files and the compile cache.
struct CommonOptions {
    std::vector<std::string> suites;
    std::string cache_dir;
    bool no_cache = false;
    bool sources_anywhere = false; ///< sources and include folders may lie outside the suite's project
};

/// The suite files, `--sources-anywhere`, and the compile cache's options.
void add_common(CLI::App& app, CommonOptions& o);
/// The suite files and `--sources-anywhere` only, for commands that compile nothing.
void add_suite_files(CLI::App& app, CommonOptions& o);
std::optional<compile::CompileCache> make_cache(const CommonOptions& o);

/// Loads every suite named on the command line, before anything runs: a bad one stops the command.
std::vector<suite::Suite> load_suites(const CommonOptions& o);

/// Where a suite's baselines, waivers and reports live, as given on the command line (relative to
/// the working folder) or, by default, inside the suite's project (see project_root() in
/// core/input_files.hxx), so that a run gives the same result from any folder.
struct ProjectOptions {
    std::string root;         ///< --root: the project, instead of the one found from the suite
    std::string baseline_dir; ///< --baseline-dir; default <project>/baselines
    std::string out_dir;      ///< --out; default <project>/reports
    std::string waiver_file;  ///< --waivers; default <baselines>/waivers.yaml when it exists
};

/// The folders of one suite's project.
struct ProjectPaths {
    std::filesystem::path root, baselines, reports, waivers;
    bool waivers_given = false;   ///< named on the command line: it must exist
    bool baselines_given = false; ///< --baseline-dir
    bool reports_given = false;   ///< --out
};

void add_project_options(CLI::App& app, ProjectOptions& o, bool with_reports);
ProjectPaths project_paths(const ProjectOptions& o, const suite::Suite& s);

/// <reports>/<suite> and <baselines>/<suite>, the folders a command writes a suite's files into.
/// Throws Error (environment) when one of them, or a folder above it up to the project root (up to
/// --out or --baseline-dir when given), is a symbolic link.
std::filesystem::path report_folder(const ProjectPaths& paths, const suite::Suite& s);
std::filesystem::path baseline_folder(const ProjectPaths& paths, const suite::Suite& s);

/// How a run gates: CI mode (a missing baseline or GPU fails, baselines are never written),
/// snapshot semantics, and whether a GPU is required.
struct GateOptions {
    bool ci = false;    ///< --ci
    bool no_ci = false; ///< --no-ci
    bool strict = false;
    bool require_gpu = false;
    /// --ci, else --no-ci, else the environment: CI set to true, 1 or yes, as CI systems do.
    bool ci_mode() const;
};

/// --ci, --no-ci, and --strict and --require-gpu where the command has a use for them.
void add_gate_options(CLI::App& app, GateOptions& o, bool with_strict, bool with_require_gpu = true);

/// `--history DIR`: a history store whose recent values the failing figures of the reports show.
void add_history_option(CLI::App& app, std::string& store);

/// How to compare a suite's results: its project's baselines and waivers, under `gate`.
compare::CompareOptions compare_options(const ProjectPaths& paths, const GateOptions& gate);

} // namespace harness::cli
