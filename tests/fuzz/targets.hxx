#pragma once
// The parsers under test: one row each, with the contract every input must keep (docs/fuzzing.md).

#include <filesystem>
#include <span>
#include <string>
#include <string_view>

namespace harness::fuzz {

/// Where an input comes from and where a target may write.
struct InputContext {
    std::string seed_name;         ///< the corpus file it was made from, relative to the target's folder
    std::filesystem::path scratch; ///< a folder of this process, for targets that read files
};

/// What an input did when the contract held: accepted, or refused with the documented error.
struct Reception {
    bool accepted = false;
    std::string refusal; ///< the error's message when refused
};

/// One parser under test.
struct Target {
    const char* name; ///< also the corpus folder and the prefix of saved findings
    const char* description;
    const char* extension; ///< of saved inputs, so that the tool opens them: ".yaml"
    /// Whether the seed's last two path components matter (baselines/<suite>/<key>.csv): a saved
    /// input then keeps them, and a replayed file is read under them.
    bool keeps_seed_path;
    std::span<const std::string_view> (*dictionary)();
    /// Runs one input: returns the reception, throws RuleBroken when an accepted input breaks a
    /// rule; any other exception escaping is a finding.
    Reception (*run)(const std::string& input, const InputContext& context);
};

/// Every target, in the order a campaign runs them.
std::span<const Target> target_table();
/// The target of that name, or nullptr.
const Target* find_target(std::string_view name);

// The targets, one file each.
Reception run_suite(const std::string& input, const InputContext& context);
std::span<const std::string_view> suite_tokens();
Reception run_expression(const std::string& input, const InputContext& context);
std::span<const std::string_view> expression_tokens();
Reception run_baseline(const std::string& input, const InputContext& context);
std::span<const std::string_view> baseline_tokens();
Reception run_waivers(const std::string& input, const InputContext& context);
std::span<const std::string_view> waiver_tokens();
Reception run_results(const std::string& input, const InputContext& context);
std::span<const std::string_view> results_tokens();
Reception run_module(const std::string& input, const InputContext& context);
std::span<const std::string_view> module_tokens();
Reception run_cliffs(const std::string& input, const InputContext& context);
Reception run_cliff_levels(const std::string& input, const InputContext& context);
std::span<const std::string_view> cliff_tokens();
Reception run_ptx(const std::string& input, const InputContext& context);
std::span<const std::string_view> ptx_tokens();

} // namespace harness::fuzz
