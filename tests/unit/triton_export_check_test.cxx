// ci/triton_export.py --check on specs that name what is no source or cubin of the project: a
// device, a FIFO, a folder, a missing file, a link or a path out of the project, a cubin past the
// size limit. Each is bad input (exit 2) with the script's own message, never a traceback and
// never a read of the thing named; the committed specs still check clean.

#include "test_files.hxx"
#include "test_paths.hxx"

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <string>
#include <sys/stat.h>
#include <sys/wait.h>

namespace triton_export_check_test {

namespace fs = std::filesystem;

namespace {

struct ScriptRun {
    int code = -1;
    std::string output; ///< stdout and stderr
};

/// `python3 ci/triton_export.py SPEC --check` under a 1 GiB address space and a 60 s limit.
ScriptRun check(const fs::path& spec)
{
    const std::string command = fmt::format("ulimit -v 1048576; timeout 60 python3 '{}' '{}' --check 2>&1",
                                            (repo_root() / "ci" / "triton_export.py").string(), spec.string());
    ScriptRun run;
    FILE* pipe = popen(command.c_str(), "r");
    if (!pipe) return run;
    std::array<char, 4096> buffer{};
    while (const std::size_t n = fread(buffer.data(), 1, buffer.size(), pipe)) run.output.append(buffer.data(), n);
    const int status = pclose(pipe);
    run.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return run;
}

bool have_python()
{
    return std::system("python3 -c pass > /dev/null 2>&1") == 0;
}

/// A project (.git/) with a spec of one kernel whose source is `source`, and its manifest naming
/// `cubin`; the spec's path.
fs::path project_with(const fs::path& root, const std::string& source, const std::string& cubin = "k.cubin")
{
    fs::create_directories(root / ".git");
    write_file(root / "kernels" / "k.py", "# a kernel\n");
    write_file(root / "kernels" / "exported" / "k.cubin", "cubin");
    write_file(root / "kernels" / "exported" / "k.json",
               fmt::format(R"({{"cubin": "{}", "source_sha256": "0", "cubin_sha256": "0"}})", cubin));
    const fs::path spec = root / "kernels" / "export.json";
    write_file(spec, fmt::format(R"({{"out": "exported", "kernels": [{{"name": "k", "source": "{}", "function": "f",
                                 "signature": {{"x": "*fp32"}}}}]}})",
                                 source));
    return spec;
}

} // namespace

TEST(TritonExportCheck, SourcesAndCubinsThatAreNoFilesOfTheProjectAreBadInputWithAMessage)
{
    if (!have_python()) GTEST_SKIP() << "no python3 here";
    TempDir dir;
    const fs::path root = dir.path / "project";
    fs::create_directories(root / "kernels" / "folder.py");
    ASSERT_EQ(mkfifo((root / "kernels" / "fifo.py").c_str(), 0600), 0);
    write_file(dir.path / "outside.py", "# outside the project\n");
    fs::create_directories(root / "kernels");
    fs::create_symlink(dir.path / "outside.py", root / "kernels" / "link.py");
    const struct {
        std::string source, expected;
    } cases[] = {
        {"/dev/zero", "resolves to /dev/zero, outside"},
        {"../../outside.py", "outside.py, outside"},
        {"link.py", "outside.py, outside"},
        {"no_such.py", "No such file or directory"},
        {"folder.py", "is not a regular file"},
        {"fifo.py", "is not a regular file"},
    };
    for (const auto& c : cases) {
        const ScriptRun run = check(project_with(root, c.source));
        EXPECT_EQ(run.code, 2) << c.source << ": " << run.output;
        EXPECT_NE(run.output.find("triton_export: k: source "), std::string::npos) << c.source << ": " << run.output;
        EXPECT_NE(run.output.find(c.expected), std::string::npos) << c.source << ": " << run.output;
        EXPECT_EQ(run.output.find("Traceback"), std::string::npos) << c.source << ": " << run.output;
    }
    // The manifest's cubin: beside it, a regular file, within the size limit.
    for (const auto& [cubin, expected] :
         {std::pair<std::string, std::string>{"../../../../dev/zero", "must name a .cubin file beside the manifest"},
          {"missing.cubin", "No such file or directory"},
          {"big.cubin", "more than the 268435456"}}) {
        const fs::path spec = project_with(root, "k.py", cubin);
        if (cubin == "big.cubin") {
            // Sparse: one byte past the limit, without writing 256 MiB.
            write_file(root / "kernels" / "exported" / "big.cubin", "");
            fs::resize_file(root / "kernels" / "exported" / "big.cubin", (std::uintmax_t{256} << 20) + 1);
        }
        const ScriptRun run = check(spec);
        EXPECT_EQ(run.code, 2) << cubin << ": " << run.output;
        EXPECT_NE(run.output.find(expected), std::string::npos) << cubin << ": " << run.output;
        EXPECT_EQ(run.output.find("Traceback"), std::string::npos) << cubin << ": " << run.output;
    }
    // A stale export is still "stale" (exit 1), not bad input.
    const ScriptRun stale = check(project_with(root, "k.py"));
    EXPECT_EQ(stale.code, 1) << stale.output;
    EXPECT_NE(stale.output.find("changed since it was exported"), std::string::npos) << stale.output;
}

TEST(TritonExportCheck, TheCommittedExportsCheckClean)
{
    if (!have_python()) GTEST_SKIP() << "no python3 here";
    for (const char* spec : {"kernels/triton/export.json", "tests/kernels/triton/export.json"}) {
        const ScriptRun run = check(repo_root() / spec);
        EXPECT_EQ(run.code, 0) << spec << ": " << run.output;
        EXPECT_NE(run.output.find("up to date"), std::string::npos) << spec << ": " << run.output;
    }
}

} // namespace triton_export_check_test
