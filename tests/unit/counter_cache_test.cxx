// The counter cache: keys that change with every input and only with an input, entries that read
// back exactly, and damaged or foreign entries that are misses, never errors.

#include "harness/core/metrics.hxx"
#include "harness/profile/counter_cache.hxx"
#include "test_files.hxx"

#include <fstream>
#include <gtest/gtest.h>

namespace counter_cache_test {

using namespace harness;
using harness::profile::CachedCounters;
using harness::profile::CounterCache;
using harness::profile::CounterKey;

namespace {

std::string key_of(const std::vector<std::pair<std::string, std::string>>& pieces)
{
    CounterKey k;
    for (const auto& [label, value] : pieces) k.add(label, value);
    return k.finish();
}

CachedCounters sample_counters()
{
    CachedCounters c;
    c.metrics = {{metric::global_ld_sectors, 4096}, {"global_sectors", 8192}, {"excess_global_sectors", 0}};
    Hotspot h;
    h.metric = "excess_global_sectors";
    h.access = "global load";
    h.kernel = "transpose_naive";
    h.file = "kernels/transpose/transpose_naive.cu";
    h.line = 12;
    h.actual = 1024;
    h.ideal = 128;
    h.excess = 896;
    c.hotspots = {h};
    return c;
}

} // namespace

TEST(CounterKey, IsStableAndChangesWithEveryPiece)
{
    const auto base = key_of({{"module", "cubin bytes"}, {"grid", "32"}});
    EXPECT_EQ(base.size(), 32u);
    EXPECT_EQ(base, key_of({{"module", "cubin bytes"}, {"grid", "32"}}));
    EXPECT_NE(base, key_of({{"module", "cubin bytez"}, {"grid", "32"}}));
    EXPECT_NE(base, key_of({{"module", "cubin bytes"}, {"grid", "33"}}));
    EXPECT_NE(base, key_of({{"module", "cubin bytes"}, {"block", "32"}}));
    // Pieces are length-prefixed: moving a boundary is a different key.
    EXPECT_NE(key_of({{"a", "bc"}}), key_of({{"ab", "c"}}));
    EXPECT_NE(key_of({{"x", "ab"}, {"x", "c"}}), key_of({{"x", "a"}, {"x", "bc"}}));
    CounterKey a, b;
    a.add("count", std::int64_t{1});
    b.add("count", std::int64_t{2});
    EXPECT_NE(a.finish(), b.finish());
}

TEST(CounterCache, KeepsOnlyExactCuptiFigures)
{
    EXPECT_TRUE(profile::cached_metric(metric::global_ld_sectors));
    EXPECT_TRUE(profile::cached_metric("excess_global_sectors") == false); // derived: recomputed
    EXPECT_TRUE(profile::cached_metric("global_sectors"));
    EXPECT_FALSE(profile::cached_metric(metric::dram_read_bytes));    // noisy: measured every run
    EXPECT_FALSE(profile::cached_metric(metric::achieved_occupancy)); // noisy
    EXPECT_FALSE(profile::cached_metric(metric::time_median));
    EXPECT_FALSE(profile::cached_metric(metric::registers)); // read from the driver every run
    EXPECT_FALSE(profile::cached_metric("no_such_metric"));
}

TEST(CounterCache, AnEntryReadsBackExactly)
{
    TempDir dir;
    const CounterCache cache(dir.path / "counters");
    const auto key = key_of({{"case", "transpose naive M=1024"}});
    EXPECT_FALSE(cache.load(key));
    cache.store(key, sample_counters());
    const auto back = cache.load(key);
    ASSERT_TRUE(back);
    // The derived figure is not kept; the exact CUPTI ones are, bit for bit.
    ASSERT_EQ(back->metrics.size(), 2u);
    std::map<std::string, double> values;
    for (const auto& m : back->metrics) values[m.name] = m.value;
    EXPECT_EQ(values.at(metric::global_ld_sectors), 4096);
    EXPECT_EQ(values.at("global_sectors"), 8192);
    ASSERT_EQ(back->hotspots.size(), 1u);
    EXPECT_EQ(back->hotspots[0].file, "kernels/transpose/transpose_naive.cu");
    EXPECT_EQ(back->hotspots[0].line, 12);
    EXPECT_EQ(back->hotspots[0].excess, 896);
    // Another key misses.
    EXPECT_FALSE(cache.load(key_of({{"case", "transpose naive M=2048"}})));
}

TEST(CounterCache, DamagedOrForeignEntriesAreMisses)
{
    TempDir dir;
    const CounterCache cache(dir.path);
    const auto key = key_of({{"case", "one"}});
    cache.store(key, sample_counters());
    const auto file = dir.path / (key + ".json");
    ASSERT_TRUE(std::filesystem::exists(file));

    std::ofstream(file, std::ios::trunc) << "{\"version\": 1, \"key\": \"" << key << "\", \"metrics\": {";
    EXPECT_FALSE(cache.load(key)); // truncated
    std::ofstream(file, std::ios::trunc) << "{\"version\": 1, \"key\": \"" << key
                                         << "\", \"metrics\": {\"dram_read_bytes\": 5}, \"hotspots\": []}";
    EXPECT_FALSE(cache.load(key)); // a noisy figure has no place in an entry
    const auto other = key_of({{"case", "two"}});
    std::filesystem::copy_file(file, dir.path / (other + ".json"));
    EXPECT_FALSE(cache.load(other)); // an entry filed under another key
    // Keys are file names only after validation.
    EXPECT_FALSE(cache.load("../" + key));
    cache.store("../escape", sample_counters());
    EXPECT_FALSE(std::filesystem::exists(dir.path.parent_path() / "escape.json"));
    // A fresh store replaces a damaged entry.
    cache.store(key, sample_counters());
    EXPECT_TRUE(cache.load(key));
}

} // namespace counter_cache_test
