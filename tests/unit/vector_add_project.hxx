#pragma once
// A scratch project for the hostile-input tests: the project's vector_add kernel and a one-case
// suite, with variants added by the test.

#include "harness/core/error.hxx"
#include "harness/suite/suite.hxx"
#include "test_files.hxx"
#include "test_paths.hxx"

#include <filesystem>
#include <string>

/// A `module:` variant `m` of vector_add, naming `module` as written.
inline std::string module_variant(const std::string& module)
{
    return "  m:\n    module: " + module +
           "\n    entry: vector_add\n    block: [256]\n    grid: [4]\n    args: [x, x, y, {i32: 1024}]\n";
}

/// A project (kernels/, .git/) holding kernels/vector_add.cu and suites/<name>.yaml: variant `a` of
/// vector_add, then `variants` as written; `params` is its sweep.
struct VectorAddProject {
    TempDir dir;
    std::filesystem::path suite;

    VectorAddProject(const std::string& name, const std::string& variants, const std::string& params)
        : dir("hostile-" + name + "-project")
    {
        namespace fs = std::filesystem;
        fs::create_directories(dir.path / ".git");
        fs::create_directories(dir.path / "kernels");
        fs::copy_file(repo_root() / "kernels/memory/vector_add.cu", dir.path / "kernels/vector_add.cu");
        suite = dir.path / "suites" / (name + ".yaml");
        write_file(suite, "suite: " + name + "\narchs: [sm_90]\nparams:\n  " + params +
                              "\nreference: a\nbuffers:\n"
                              "  x: {type: f32, count: 1024, init: uniform, seed: 1}\n"
                              "  y: {type: f32, count: 1024, role: out}\nvariants:\n"
                              "  a:\n    source: ../kernels/vector_add.cu\n    entry: vector_add\n"
                              "    block: [256]\n    grid: [4]\n    args: [x, x, y, {i32: 1024}]\n" +
                              variants);
    }

    /// The suite's load error, or "no error".
    std::string load_error() const
    {
        try {
            harness::suite::load_suite(suite);
        } catch (const harness::Error& e) {
            return e.what();
        }
        return "no error";
    }
};
