#pragma once
// The history page of a suite: one self-contained HTML file with every change point of every
// series (biggest moves first, each with its commit range, before and after, and its size against
// the noise), the creeps, and a chart per series that moved.

#include "harness/history/suite_history.hxx"

#include <filesystem>
#include <string>

namespace harness::history {

/// Where the page is written (links to run reports are made relative to it) and what ordered it.
struct PageContext {
    std::filesystem::path output;
    std::string order_note; ///< "first-parent order of HEAD in /repo", or why dates order it
};

/// The most series charts the page draws; the tables list every change.
inline constexpr std::size_t max_page_charts = 120;

std::string history_page(const SuiteHistory& history, const PageContext& context);

} // namespace harness::history
