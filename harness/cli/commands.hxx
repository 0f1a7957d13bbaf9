#pragma once
// Subcommands of the `harness` tool: one row each in an explicit table.

#include "harness/cli/options.hxx"

#include <span>
#include <string>
#include <vector>

namespace harness::cli {

/// The tool's subcommands: name, what `help` says about each, entry point.
std::span<const Subcommand> command_table();

/// Dispatches argv (without the program name) to a subcommand; returns the exit code.
int dispatch(const std::vector<std::string>& args);

/// The whole tool: dispatch, with every error printed and mapped to its documented exit code.
int run_tool(const std::vector<std::string>& args);

int run_command(const std::vector<std::string>& args);
int check_command(const std::vector<std::string>& args);
int list_command(const std::vector<std::string>& args);
int metrics_command(const std::vector<std::string>& args);
int baseline_command(const std::vector<std::string>& args);
int merge_command(const std::vector<std::string>& args);
int report_command(const std::vector<std::string>& args);
int sass_diff_command(const std::vector<std::string>& args);
int crosscheck_command(const std::vector<std::string>& args);
int stability_command(const std::vector<std::string>& args);
int bisect_command(const std::vector<std::string>& args);
int history_command(const std::vector<std::string>& args);
int scaffold_command(const std::vector<std::string>& args);
int help_command(const std::vector<std::string>& args);

} // namespace harness::cli
