// `harness scaffold`: a suite skeleton from a kernel source or an nvcc-built module.

#include "harness/cli/commands.hxx"
#include "harness/cli/exit_codes.hxx"
#include "harness/cli/options.hxx"
#include "harness/compile/kernel_listing.hxx"
#include "harness/core/atomic_file.hxx"
#include "harness/pipeline/suite_skeleton.hxx"

#include <filesystem>
#include <fmt/format.h>

namespace harness::cli {

namespace fs = std::filesystem;
using pipeline::shown_name;

int scaffold_command(const std::vector<std::string>& args)
{
    CLI::App app{"List the kernels of a source file (compiled with NVRTC, no GPU needed) or of a cubin, fatbin or PTX "
                 "module built by nvcc, with their parameters, and write a suite skeleton: a variant per kernel, a "
                 "buffer per pointer parameter, a scalar per value, and FILL_IN placeholders where only you know "
                 "the answer (sizes, counts, the grid). `harness check` then names each placeholder left.",
                 "harness scaffold"};
    std::string file, output, arch = "sm_90", source, name;
    bool force = false, list_only = false;
    app.add_option("kernels", file, "a kernel source (.cu) or a module (.cubin, .fatbin, .ptx)")
        ->required()
        ->check(CLI::ExistingFile);
    app.add_option("-o,--output", output, "the suite file to write (default suites/<name>.yaml)");
    app.add_option("--arch", arch, "the architecture to compile for or take from the module (default sm_90)");
    app.add_option("--source", source, "for a module: the .cu it was built from, to name the parameters")
        ->check(CLI::ExistingFile);
    app.add_option("--name", name, "the suite's name (default: the file's name without extension)");
    app.add_flag("--force", force, "replace the suite file if it exists");
    app.add_flag("--list", list_only, "only list the kernels and their parameters");
    if (auto code = parse(app, args)) return *code;

    const fs::path kernels = file;
    const std::string ext = kernels.extension().string();
    const bool module = ext == ".cubin" || ext == ".fatbin" || ext == ".ptx";
    std::vector<std::string> notes;
    const auto listed =
        compile::list_kernels(kernels, arch, source.empty() ? std::nullopt : std::optional<fs::path>(source), notes);
    fmt::print("{} ({}): {} kernels\n", shown_name(kernels.string()), shown_name(arch), listed.size());
    for (const auto& k : listed) {
        const std::string bounds = compile::launch_bounds_text(k);
        fmt::print("  {}\n    {} registers, {} bytes of static shared memory{}{}\n", shown_name(k.signature),
                   k.registers, k.static_shared_bytes, bounds.empty() ? "" : "; " + bounds,
                   k.symbol != k.name ? fmt::format(", symbol {}", shown_name(k.symbol)) : "");
    }
    for (const auto& note : notes) fmt::print("note: {}\n", shown_name(note));
    if (list_only) return exit_pass;
    if (listed.empty()) {
        fmt::print(stderr, "harness scaffold: {}: no kernel to write a suite for\n", shown_name(kernels.string()));
        return exit_bad_input;
    }

    pipeline::SkeletonRequest request;
    request.suite_name = name.empty() ? kernels.stem().string() : name;
    for (char& c : request.suite_name)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') c = '_';
    request.suite_file = output.empty() ? fs::path("suites") / (request.suite_name + ".yaml") : fs::path(output);
    request.kernel_file = kernels;
    request.module = module;
    if (!source.empty()) request.module_source = fs::path(source);
    request.arch = arch;
    request.kernels = listed;
    std::error_code ec;
    if (!force && fs::exists(request.suite_file, ec)) {
        fmt::print(stderr, "harness scaffold: {} exists: give another -o, or --force to replace it\n",
                   shown_name(request.suite_file.string()));
        return exit_bad_input;
    }
    if (!request.suite_file.parent_path().empty()) fs::create_directories(request.suite_file.parent_path(), ec);
    write_file_atomically(request.suite_file, pipeline::suite_skeleton(request));
    fmt::print("wrote {}: fill in every {}, then `harness check {}`\n", shown_name(request.suite_file.string()),
               pipeline::placeholder, shown_name(request.suite_file.string()));
    return exit_pass;
}

} // namespace harness::cli
