#pragma once
// Seeded mutation of corpus files: the same campaign seed and input number give the same input.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace harness::fuzz {

/// A corpus file: its path relative to the target's corpus folder, and its bytes.
struct Seed {
    std::string name;
    std::string text;
};

/// SplitMix64: small, fast, and the same sequence on every platform (unlike std distributions).
class Random {
public:
    explicit Random(std::uint64_t seed) : state_(seed) {}
    std::uint64_t next();
    /// Uniform in [0, n); 0 when n is 0.
    std::size_t below(std::size_t n) { return n == 0 ? 0 : static_cast<std::size_t>(next() % n); }
    /// True with probability 1 / n.
    bool one_in(std::size_t n) { return below(n) == 0; }

private:
    std::uint64_t state_;
};

/// Mixes a campaign seed, a target name and an input number into the seed of that one input.
std::uint64_t input_seed(std::uint64_t campaign_seed, std::string_view target, std::uint64_t input);

/// Tokens worth inserting into any text input: path traversal, number edge cases, YAML anchors and
/// aliases, bytes that are not UTF-8.
std::span<const std::string_view> common_tokens();

/// Makes mutated inputs from the seeds: byte flips, span insertion, deletion and duplication, line
/// copies (duplicate keys), splices of two seeds, dictionary tokens, deep nesting and long runs.
class Mutator {
public:
    Mutator(std::span<const Seed> seeds, std::span<const std::string_view> dictionary, std::size_t max_len);

    /// One mutated input; `origin` is set to the index of the seed it started from.
    std::string mutate(Random& random, std::size_t& origin) const;

private:
    std::string_view token(Random& random) const;
    void mutate_once(std::string& text, Random& random) const;

    std::span<const Seed> seeds_;
    std::vector<std::string_view> tokens_; ///< the target's dictionary, then the common tokens
    std::size_t max_len_;
};

} // namespace harness::fuzz
