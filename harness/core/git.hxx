#pragma once
// Running git, the one way the tool does: a child process with an argument vector (no shell, so a
// revision or path a user typed is never interpreted), standard input from /dev/null, standard
// output and error captured, the repository's hooks off, and none of the variables that would point
// git at another repository than the one named (core/child_process.hxx, run_program).

#include "harness/core/child_process.hxx"

#include <filesystem>
#include <string>
#include <vector>

namespace harness {

/// What a recorded revision ends with when the tree it ran from had changes to tracked files
/// ("3f9c2e1a7b4d+dirty"): its figures are not that commit's.
inline constexpr const char* dirty_mark = "+dirty";

/// The whole command line run_git runs: `git -c core.hooksPath=/dev/null [-C folder] args...`
/// (no -C when `folder` is empty). For a caller that must build it ahead of time, a signal handler.
std::vector<std::string> git_command(const std::filesystem::path& folder, const std::vector<std::string>& args);

/// Runs git with `args` in `folder` (empty: this process's folder) to completion and returns what
/// it printed and its exit status, whatever that is. Throws Error(environment) when git cannot be
/// started (not installed).
ProgramOutput run_git(const std::filesystem::path& folder, const std::vector<std::string>& args);

/// The standard output of git run with `args` in `folder`. Throws Error(environment) when git
/// cannot be started or does not exit with 0; the message names the command, the folder, how git
/// ended and what it wrote to standard error.
std::string git_output(const std::filesystem::path& folder, const std::vector<std::string>& args);

/// `text` without the line breaks at its end: git's one-line answers, as a value.
std::string without_line_end(std::string text);

} // namespace harness
