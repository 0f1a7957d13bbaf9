#pragma once
// Exact counters of a case kept between runs: a case whose kernel binary, launches, inputs, GPU
// architecture and profiler are all unchanged has the same exact figures (DESIGN: counters are
// deterministic for a fixed kernel and size), so they are reused and only the noisy figures are
// measured again. Opt-in (`harness run --counter-cache`).

#include "harness/core/case_result.hxx"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace harness::profile {

/// Everything that determines a case's exact counters, fed piece by piece; each piece is labelled
/// and length-prefixed, so no two different inputs read the same.
class CounterKey {
public:
    CounterKey();
    ~CounterKey();
    CounterKey(const CounterKey&) = delete;
    CounterKey& operator=(const CounterKey&) = delete;

    void add(std::string_view label, std::string_view value);
    void add(std::string_view label, std::span<const std::byte> bytes);
    void add(std::string_view label, std::int64_t value);
    /// The key: 32 hexadecimal digits (a 128-bit hash).
    std::string finish();

private:
    void* state_;
};

/// What is kept per case: the exact figures and the source lines they were attributed to.
struct CachedCounters {
    std::vector<MetricValue> metrics;
    std::vector<Hotspot> hotspots;
};

/// Whether `metric` is a figure the cache keeps: an exact figure collected through CUPTI.
bool cached_metric(const std::string& metric);

/// A folder of cached counters, one JSON file per key (`<dir>/<key>.json`).
class CounterCache {
public:
    explicit CounterCache(std::filesystem::path dir);

    /// The entry for `key`, or nullopt when there is none or it cannot be read (a damaged entry is
    /// a miss, never an error: the case is then measured afresh and the entry replaced).
    std::optional<CachedCounters> load(const std::string& key) const;
    /// Writes the entry atomically; a failure to write is ignored (the cache is an optimisation).
    void store(const std::string& key, const CachedCounters& counters) const;
    const std::filesystem::path& dir() const { return dir_; }

private:
    std::filesystem::path dir_;
};

} // namespace harness::profile
