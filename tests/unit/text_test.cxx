#include "harness/core/text.hxx"

#include <gtest/gtest.h>

namespace text_test {

using namespace harness;

TEST(Text, KernelNamesReadAsTheSourceWritesThem)
{
    EXPECT_EQ(kernel_name("_Z13cub_block_sumILi128ELi4EEvPKfPfi"), "cub_block_sum<128, 4>");
    EXPECT_EQ(kernel_name("_Z21transpose_smem_paddedILi32EEvPKfPfii"), "transpose_smem_padded<32>");
    EXPECT_EQ(kernel_name("_ZN2ns4gemmILi32EEEvPf"), "ns::gemm<32>");
    EXPECT_EQ(kernel_name("_Z8tile_sumPKfPf"), "tile_sum");
    EXPECT_EQ(kernel_name("plain_copy"), "plain_copy"); // extern "C"
    EXPECT_EQ(kernel_name("_Znot a symbol"), "_Znot a symbol");
}

TEST(Text, SuggestionsAndLists)
{
    EXPECT_EQ(did_you_mean("runn", {"run", "check"}), " (did you mean 'run'?)");
    EXPECT_EQ(did_you_mean("zzzzzz", {"run", "check"}), "");
    EXPECT_EQ(join({"a", "b", "c"}), "a, b, c");
    EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
    // Words of another length are still suggested within the distance; a key of megabytes is
    // compared with none (its distance to each is at least the difference in length).
    EXPECT_EQ(did_you_mean("registerss", {"reg", "registers"}), " (did you mean 'registers'?)");
    EXPECT_EQ(did_you_mean("regs", {"registers", "regs_per_sm"}), "");
    EXPECT_EQ(did_you_mean("time_medianxx", {"time_median", "time_min"}), " (did you mean 'time_median'?)");
    EXPECT_EQ(did_you_mean("time_medi" + std::string(1 << 20, 'N'), {"time_median", "time_min"}), "");
}

TEST(Text, TrimAndUtcTime)
{
    EXPECT_EQ(trim("  rel 5% \t\r\n"), "rel 5%");
    EXPECT_EQ(trim(""), "");
    const std::string now = utc_now("%Y-%m-%dT%H:%M:%SZ");
    ASSERT_EQ(now.size(), 20u) << now;
    EXPECT_EQ(now[10], 'T');
    EXPECT_EQ(now.back(), 'Z');
    EXPECT_EQ(utc_now("%Y-%m-%d"), now.substr(0, 10));
}

} // namespace text_test
