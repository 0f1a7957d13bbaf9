#pragma once
// The planted SASS regressions of tests/suites/planted_sass.yaml (docs/sass.md): what each must
// fail with in the static tier against tests/baselines, and a run of that suite into a folder of
// its own (NVRTC and nvdisasm, no GPU). .ci/run checks the same verdicts on the console.

#include "harness/cli/commands.hxx"
#include "test_files.hxx"
#include "test_paths.hxx"

#include <filesystem>
#include <gtest/gtest.h>
#include <string>
#include <vector>

/// One planted regression: the SASS verdict it fails with, and instructions the hunk of its
/// case's diff at the verdict's line shows changed ("-" gone, "+" new).
struct PlantedSass {
    std::string variant;
    std::string metric;
    std::string kernel;
    std::string location;
    std::string message; ///< the verdict's message, as results.json holds it
    std::vector<std::string> hunk;
};

inline const std::vector<PlantedSass>& planted_sass_regressions()
{
    static const std::vector<PlantedSass> planted = {
        {"vector",
         "sass_global_ld_128",
         "sass_vector_copy",
         "kernels/planted_sass.cu:17",
         "sass_vector_copy: kernels/planted_sass.cu:17: global loads 128-bit -> 32-bit (1 -> 4 instructions)",
         {"-LDG.E.128 ", "+LDG.E "}},
        {"wmma",
         "sass_tensor",
         "sass_wmma_gemm",
         "kernels/planted_sass.cu:35",
         "sass_wmma_gemm: kernels/planted_sass.cu:35: tensor-core instructions 10 -> none (1 FP32 instruction at "
         "this line)",
         {"+FFMA ", "+LDG.E.U16 "}},
        {"local",
         "sass_local_ld",
         "sass_local_buckets",
         "kernels/planted_sass.cu:65",
         "sass_local_buckets: kernels/planted_sass.cu:65: local loads and stores none -> 16 instructions (10 LDL, 10 "
         "STL in the kernel)",
         {"+LDL ", "+STL "}},
        {"async",
         "sass_async_copies",
         "sass_async_pipeline",
         "kernels/planted_sass.cu:83",
         "sass_async_pipeline: kernels/planted_sass.cu:83: asynchronous copies (LDGSTS, TMA) 2 -> none (2 plain "
         "loads at this line)",
         {"+LDG.E.128 ", "+STS.128 "}},
    };
    return planted;
}

/// `harness run --static` of the planted suite against the committed baselines, its reports in a
/// scratch folder (`reports()`: report.html, summary.md, results.json, sass_diff.txt).
struct PlantedSassRun {
    TempDir out{"harness-planted-sass"};
    int code = -1;
    std::string console;

    PlantedSassRun()
    {
        testing::internal::CaptureStdout();
        code = harness::cli::run_tool({"run", "--static", "--no-ci",
                                       (repo_root() / "tests/suites/planted_sass.yaml").string(), "--baseline-dir",
                                       (repo_root() / "tests/baselines").string(), "--out", out.path.string()});
        console = testing::internal::GetCapturedStdout();
    }
    std::filesystem::path reports() const { return out.path / "planted_sass"; }
};
