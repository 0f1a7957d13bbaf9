#include "harness/profile/counter_cache.hxx"

#include "harness/core/atomic_file.hxx"
#include "harness/core/metrics.hxx"

#include <fmt/format.h>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <xxhash.h>

namespace harness::profile {

namespace {

constexpr int entry_version = 1;

bool is_key(const std::string& key)
{
    return key.size() == 32 && key.find_first_not_of("0123456789abcdef") == std::string::npos;
}

} // namespace

CounterKey::CounterKey() : state_(XXH3_createState())
{
    XXH3_128bits_reset(static_cast<XXH3_state_t*>(state_));
    add("counter-key", std::int64_t{entry_version});
}

CounterKey::~CounterKey()
{
    XXH3_freeState(static_cast<XXH3_state_t*>(state_));
}

void CounterKey::add(std::string_view label, std::span<const std::byte> bytes)
{
    auto* s = static_cast<XXH3_state_t*>(state_);
    const std::uint64_t sizes[2] = {label.size(), bytes.size()};
    XXH3_128bits_update(s, sizes, sizeof sizes);
    XXH3_128bits_update(s, label.data(), label.size());
    XXH3_128bits_update(s, bytes.data(), bytes.size());
}

void CounterKey::add(std::string_view label, std::string_view value)
{
    add(label, std::as_bytes(std::span(value.data(), value.size())));
}

void CounterKey::add(std::string_view label, std::int64_t value)
{
    add(label, std::as_bytes(std::span(&value, 1)));
}

std::string CounterKey::finish()
{
    const XXH128_hash_t h = XXH3_128bits_digest(static_cast<XXH3_state_t*>(state_));
    return fmt::format("{:016x}{:016x}", h.high64, h.low64);
}

bool cached_metric(const std::string& metric)
{
    const auto info = find_metric(metric);
    return info && info->stability == Stability::exact &&
           (info->collector == Collector::range_profiler || info->collector == Collector::sass_metrics);
}

CounterCache::CounterCache(std::filesystem::path dir) : dir_(std::move(dir)) {}

std::optional<CachedCounters> CounterCache::load(const std::string& key) const
{
    if (!is_key(key)) return std::nullopt;
    std::ifstream in(dir_ / (key + ".json"), std::ios::binary);
    if (!in) return std::nullopt;
    try {
        const nlohmann::json j = nlohmann::json::parse(in);
        if (j.at("version").get<int>() != entry_version || j.at("key").get<std::string>() != key) return std::nullopt;
        CachedCounters c;
        for (const auto& [name, value] : j.at("metrics").items()) {
            if (!cached_metric(name)) return std::nullopt;
            c.metrics.push_back({name, value.get<double>()});
        }
        c.hotspots = j.at("hotspots").get<std::vector<Hotspot>>();
        return c;
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

void CounterCache::store(const std::string& key, const CachedCounters& counters) const
{
    if (!is_key(key)) return;
    nlohmann::json metrics = nlohmann::json::object();
    for (const auto& m : counters.metrics)
        if (cached_metric(m.name)) metrics[m.name] = m.value;
    const nlohmann::json j = {
        {"version", entry_version}, {"key", key}, {"metrics", metrics}, {"hotspots", counters.hotspots}};
    try {
        std::error_code ec;
        std::filesystem::create_directories(dir_, ec);
        write_file_atomically(dir_ / (key + ".json"), j.dump(1));
    } catch (const std::exception&) {
    }
}

} // namespace harness::profile
