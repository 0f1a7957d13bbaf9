#include "harness/pipeline/recent_history.hxx"

#include "harness/core/error.hxx"
#include "harness/history/recent_values.hxx"

#include <fmt/format.h>
#include <fmt/ostream.h>

namespace harness::pipeline {

namespace fs = std::filesystem;

void add_recent_history(harness::RunReport& rep, const fs::path& store, const fs::path& repo, std::ostream& console)
{
    try {
        const auto added = history::attach_recent_history(rep, store, repo);
        for (const auto& problem : added.problems)
            fmt::print(console, "history {}: left out: {}\n", store.string(), problem);
    } catch (const Error& e) {
        // The history only explains a verdict; a store that cannot be read must not change one.
        rep.notes.push_back(fmt::format("no recent history shown: {}", e.what()));
    }
}

} // namespace harness::pipeline
