// A module handed to `harness scaffold` (a cubin, or a fatbin's machine code): its kind and
// architectures, the kernels its cubin lists, and the suite skeleton written for them.

#include "rules.hxx"
#include "targets.hxx"

#include "harness/analysis/ptx_module.hxx"
#include "harness/compile/cubin_info.hxx"
#include "harness/compile/kernel_listing.hxx"
#include "harness/compile/module_file.hxx"
#include "harness/core/error.hxx"
#include "harness/pipeline/suite_skeleton.hxx"

#include <fmt/format.h>
#include <set>
#include <yaml-cpp/yaml.h>

namespace harness::fuzz {

namespace fs = std::filesystem;

namespace {

/// The rules the skeleton of `kernels` keeps: YAML that holds the keys a skeleton writes and no
/// other, each variant's entry read back as the kernel's name (or left to fill in), and names that
/// show on the console without a control character.
void require_skeleton(const std::vector<compile::ListedKernel>& kernels, const std::string& arch)
{
    pipeline::SkeletonRequest request;
    request.suite_name = "fuzz";
    request.suite_file = "suites/fuzz.yaml";
    request.kernel_file = "kernels/fuzz.cubin";
    request.module = true;
    request.arch = arch;
    request.kernels = kernels;
    const std::string text = pipeline::suite_skeleton(request);
    YAML::Node root;
    try {
        root = YAML::Load(text);
    } catch (const YAML::Exception& e) {
        throw RuleBroken("skeleton-is-yaml", fmt::format("the skeleton does not read as YAML: {}", excerpt(e.what())));
    }
    require_yaml_text(text, root);
    static const std::set<std::string> top = {"suite",     "description", "params",  "reference",
                                              "tolerance", "buffers",     "variants"};
    static const std::set<std::string> variant_keys = {"module", "entry", "block", "grid", "args"};
    for (const auto& entry : root)
        require(top.contains(entry.first.Scalar()), "skeleton-keys",
                fmt::format("the skeleton has the top-level key '{}'", excerpt(entry.first.Scalar())));
    std::set<std::string> names = {pipeline::placeholder};
    for (const auto& k : kernels) {
        names.insert(k.name);
        require(!has_control_character(pipeline::shown_name(k.signature)), "names-shown-escaped",
                fmt::format("the console shows '{}' with a control character", excerpt(k.signature)));
    }
    for (const auto& variant : root["variants"]) {
        for (const auto& key : variant.second)
            require(variant_keys.contains(key.first.Scalar()), "skeleton-keys",
                    fmt::format("variant '{}' has the key '{}'", excerpt(variant.first.Scalar()),
                                excerpt(key.first.Scalar())));
        const std::string entry = variant.second["entry"].as<std::string>("");
        require(names.contains(entry), "entry-reads-back",
                fmt::format("variant '{}' names the entry '{}', which no kernel is", excerpt(variant.first.Scalar()),
                            excerpt(entry)));
    }
}

} // namespace

Reception run_module(const std::string& input, const InputContext&)
{
    const fs::path file = "kernels/fuzz.cubin";
    std::vector<compile::ListedKernel> kernels;
    std::string arch;
    try {
        (void)compile::module_kind(input, file);
        // Machine code only: PTX goes to the JIT linker, which the tool's runs over the corpus
        // cover (ci/fuzz.sh), rather than to the mutations of a parser's inputs.
        for (const auto& held : compile::module_archs(input, file))
            if (held.starts_with("sm_")) arch = held;
        if (arch.empty()) return {true, ""};
        const std::string cubin = compile::cubin_for_arch(input, file, arch);
        kernels = compile::list_cubin_kernels(cubin, file, std::nullopt);
        // The PTX text the cubin keeps of itself, which the static tier predicts from when the module has no
        // PTX beside its code: read, then parsed as the predictions would parse it.
        if (const std::string kept = compile::embedded_ptx(cubin); !kept.empty())
            (void)analysis::parse_ptx(kept, "kernels/fuzz.cubin.ptx");
    } catch (const Error& e) {
        if (e.kind() != ErrorKind::bad_input) throw;
        return {false, e.what()};
    }
    require_skeleton(kernels, arch);
    return {true, ""};
}

std::span<const std::string_view> module_tokens()
{
    using namespace std::string_view_literals;
    // clang-format off
    static constexpr std::string_view tokens[] = {
        "\x7f" "ELF"sv, "\x50\xed\x55\xba"sv, ".nv.info."sv, ".text."sv, ".nv.shared."sv, ".symtab"sv, ".nv_debug_ptx_txt"sv,
        ".strtab"sv, ".shstrtab"sv, ".debug_line"sv, "_Z"sv, "_ZN"sv, "ILi256EE"sv, "\n"sv, "\x1b["sv,
        "\": \""sv, "\ncompile: {}\n"sv, "\xe2\x80\xae"sv, "\xff"sv, "\xff\xff\xff\xff"sv,
        "\x00\x00\x00\x00\x00\x00\x00\x00"sv, "\x04\x2f\x08\x00"sv, "\x04\x17\x0c\x00"sv,
    };
    // clang-format on
    return tokens;
}

} // namespace harness::fuzz
