#pragma once
// Where the repository is, for tests: the configured source folder, or the working folder when the
// build was copied to another machine (ctest and ci/gpu-check.sh run tests from the repository root).

#include <filesystem>

inline std::filesystem::path repo_root()
{
    const std::filesystem::path configured = HARNESS_SOURCE_DIR;
    if (std::filesystem::is_directory(configured / "suites")) return configured;
    return std::filesystem::current_path();
}
