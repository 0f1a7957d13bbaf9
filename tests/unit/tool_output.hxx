#pragma once
// The tool run in-process on a command line, for tests: its exit code and what it printed.

#include "harness/cli/commands.hxx"

#include <gtest/gtest.h>
#include <string>
#include <vector>

struct ToolOutput {
    int code = -1;
    std::string out, err;
};

/// `harness ARGS...` in this process (cli::run_tool), with stdout and stderr captured.
inline ToolOutput run_tool_captured(const std::vector<std::string>& args)
{
    testing::internal::CaptureStdout();
    testing::internal::CaptureStderr();
    ToolOutput o;
    o.code = harness::cli::run_tool(args);
    o.out = testing::internal::GetCapturedStdout();
    o.err = testing::internal::GetCapturedStderr();
    return o;
}
