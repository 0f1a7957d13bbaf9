// The L2 sweep kernel is PTX written by hand and only loaded on a GPU: assemble it here with the
// toolkit's ptxas for every architecture the harness targets, so a typo fails on any machine.

#include "harness/run/l2_sweep.hxx"
#include "test_files.hxx"

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <string>

namespace l2_sweep_test {

namespace fs = std::filesystem;

namespace {

std::pair<std::string, int> run(const std::string& command)
{
    std::string output;
    FILE* pipe = popen(command.c_str(), "r");
    if (!pipe) return {"popen failed", -1};
    std::array<char, 4096> buffer{};
    while (std::size_t n = std::fread(buffer.data(), 1, buffer.size(), pipe)) output.append(buffer.data(), n);
    return {output, pclose(pipe)};
}

} // namespace

TEST(L2Sweep, PtxNamesItsEntryPoint)
{
    const std::string ptx(harness::run::l2_sweep_ptx());
    EXPECT_NE(ptx.find(std::string(".entry ") + harness::run::l2_sweep_entry + "("), std::string::npos);
    EXPECT_NE(ptx.find("ld.global.v4.u32"), std::string::npos);
}

TEST(L2Sweep, AssemblesForEveryTargetWithoutSpills)
{
    const fs::path ptxas = fs::path(HARNESS_CUDA_BIN_DIR) / "ptxas";
    if (!fs::exists(ptxas)) GTEST_SKIP() << "no ptxas at " << ptxas << " (it comes with the CUDA toolkit)";
    const TempDir scratch{"harness-l2-sweep-test"};
    const fs::path& dir = scratch.path;
    const fs::path source = dir / "sweep.ptx";
    std::ofstream(source) << harness::run::l2_sweep_ptx();
    for (const char* arch : {"sm_80", "sm_90", "sm_100"}) {
        const auto [output, status] = run(ptxas.string() + " -v -arch=" + arch + " " + source.string() + " -o " +
                                          (dir / "sweep.cubin").string() + " 2>&1");
        EXPECT_EQ(status, 0) << arch << ": " << output;
        EXPECT_NE(output.find("harness_l2_sweep"), std::string::npos) << output;
        EXPECT_NE(output.find("0 bytes spill stores"), std::string::npos) << output;
    }
}

} // namespace l2_sweep_test
