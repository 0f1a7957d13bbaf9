#pragma once
// Command-line pieces the subcommands share.

#include "harness/compile/nvrtc_compiler.hxx"
#include "harness/suite/suite.hxx"

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

namespace harness::cli {

/// Parses a subcommand's options; returns an exit code when it should stop (help or an error).
std::optional<int> parse(CLI::App& app, const std::vector<std::string>& args);

/// Accepts an architecture the harness knows (sm_80, sm_90a, ...); the message lists them.
CLI::Validator known_arch_validator();

/// Suite files and the compile cache.
struct CommonOptions {
    std::vector<std::string> suites;
    std::string cache_dir;
    bool no_cache = false;
    bool sources_anywhere = false;  ///< sources and include folders may lie outside the suite's project
};

void add_common(CLI::App& app, CommonOptions& o);
std::optional<compile::CompileCache> make_cache(const CommonOptions& o);

/// Loads every suite named on the command line, before anything runs: a bad one stops the command.
std::vector<suite::Suite> load_suites(const CommonOptions& o);

} // namespace harness::cli
