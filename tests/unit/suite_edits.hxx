#pragma once
// Loading a suite after one edit of a valid text: the error it gives, for tests of the loader.

#include "harness/core/error.hxx"
#include "harness/suite/suite.hxx"

#include <filesystem>
#include <gtest/gtest.h>
#include <string>

/// Replaces the first `from` in `valid` with `to`, loads the result as `file` and returns the
/// load error's message (a test failure when there is none).
inline std::string load_error_after_edit(const std::string& valid, const std::filesystem::path& file,
                                         const std::string& from, const std::string& to)
{
    std::string text = valid;
    const auto at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) text.replace(at, from.size(), to);
    try {
        harness::suite::parse_suite(text, file);
    } catch (const harness::InputError& e) {
        return e.what();
    }
    ADD_FAILURE() << "no error after replacing '" << from << "' with '" << to << "'";
    return "";
}
