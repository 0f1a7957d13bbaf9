#pragma once
// A campaign against one target: replay the corpus, then mutate it for a time budget, in worker
// processes that a supervisor watches for crashes, sanitizer reports, hangs and memory growth.

#include "findings.hxx"
#include "mutator.hxx"
#include "targets.hxx"

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>

namespace harness::fuzz {

struct CampaignOptions {
    std::uint64_t seed = 1;
    double seconds = 10;                 ///< of mutation per target, after the corpus replay
    std::optional<std::uint64_t> runs;   ///< at most this many mutated inputs per target
    std::size_t max_len = 256 * 1024;    ///< bytes of a mutated input
    double timeout_s = 2;                ///< per input
    std::size_t memory_limit_mib = 2048; ///< resident memory of a worker
    std::filesystem::path findings;
    std::filesystem::path scratch; ///< a folder of this run, for logs and files the targets read
};

/// What a campaign did.
struct CampaignTotals {
    std::uint64_t replayed = 0;
    std::uint64_t mutated = 0;
    std::uint64_t refused = 0;
    std::uint64_t accepted = 0;
    std::array<std::uint64_t, finding_kind_count> failing{};  ///< inputs, by kind
    std::array<std::uint64_t, finding_kind_count> distinct{}; ///< signatures found in this campaign, by kind
    double seconds = 0;

    std::uint64_t inputs() const { return replayed + mutated; }
};

/// Runs the campaign; findings are printed as they come and saved under options.findings.
CampaignTotals run_campaign(const Target& target, std::span<const Seed> seeds, const CampaignOptions& options);

/// What one input did: a reception that keeps the contract, or a finding.
struct Outcome {
    Reception reception;
    std::optional<Finding> finding;
};

/// Readies this process to run inputs: a fatal signal prints its stack (the sanitizer does that where
/// there is one), and without a sanitizer the address space is limited to its size now plus
/// `limit_mib`, so that a runaway allocation ends in std::bad_alloc (a finding with its input) rather
/// than in the supervisor's kill. AddressSanitizer reserves terabytes of address space and cannot
/// run under RLIMIT_AS: there the supervisor's resident-memory check and max_allocation_size_mb do it.
void prepare_process(std::size_t limit_mib);

/// Runs one input in this process and classifies any exception that escapes the target.
Outcome run_input(const Target& target, const std::string& input, const InputContext& context);

} // namespace harness::fuzz
