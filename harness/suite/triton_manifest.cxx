#include "harness/suite/triton_manifest.hxx"

#include "harness/core/error.hxx"
#include "harness/core/input_files.hxx"
#include "harness/core/readable_path.hxx"
#include "harness/core/sha256.hxx"
#include "harness/suite/manifest_reader.hxx"

#include <algorithm>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace harness::suite {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

void read_parameters(const ManifestReader& r, const json& root, TritonManifest& m)
{
    const json& parameters = r.member(root, "parameters");
    if (!parameters.is_array() || parameters.size() > 256) r.fail("parameters", "expected a list of parameters");
    for (std::size_t i = 0; i < parameters.size(); ++i) {
        const std::string field = fmt::format("parameters[{}]", i);
        TritonParameter p;
        p.name = r.text(parameters[i], field + ".name", 100);
        p.type = r.text(parameters[i], field + ".type", 40);
        const std::string_view element = std::string_view(p.type).substr(p.is_pointer() ? 1 : 0);
        if (!triton_element_type(element))
            r.fail(field + ".type",
                   fmt::format("'{}' has no buffer or scalar type in a suite (supported: fp32, fp64, fp16, bf16, "
                               "fp8e4nv, fp8e5, i8 to i64, u8 to u64, and pointers to them)",
                               p.type));
        if (parameters[i].contains("divisibility")) {
            p.divisibility = static_cast<int>(r.integer(parameters[i], field + ".divisibility", 1, 256));
            if ((p.divisibility & (p.divisibility - 1)) != 0) r.fail(field + ".divisibility", "a power of two");
            if (!p.is_pointer() && element_type_info(*triton_element_type(p.type)).kind == ElementKind::floating)
                r.fail(field + ".divisibility", "only pointers and integers are specialized on divisibility");
        }
        m.parameters.push_back(std::move(p));
    }
}

/// The hidden parameters, in order. Only the kinds whose launch convention is known are passed:
/// a new kind (a later Triton's) is refused, because leaving it out is the silent failure
/// Triton's hidden arguments are known for.
void read_hidden_parameters(const ManifestReader& r, const json& launch, TritonManifest& m)
{
    const json& hidden = r.member(launch, "launch.hidden_parameters");
    if (!hidden.is_array() || hidden.size() > 8) r.fail("launch.hidden_parameters", "expected a list");
    for (std::size_t i = 0; i < hidden.size(); ++i) {
        const std::string field = fmt::format("launch.hidden_parameters[{}]", i);
        TritonHiddenParameter h;
        h.name = r.text(hidden[i], field + ".name", 100);
        if (h.name != "global_scratch" && h.name != "profile_scratch")
            r.fail(field + ".name",
                   fmt::format("Triton adds a hidden parameter '{}' that this harness does not know how to fill; "
                               "launching without it would fail or measure nothing, so the kernel is refused",
                               h.name));
        h.size = r.integer(hidden[i], field + ".size", 0, std::int64_t{1} << 30);
        h.align = r.integer(hidden[i], field + ".align", 1, 4096);
        m.hidden.push_back(std::move(h));
    }
}

/// What the harness cannot launch yet is refused by name, never launched wrongly.
void refuse_unsupported(const ManifestReader& r, const json& launch, const TritonManifest& m)
{
    if (m.num_ctas > 8)
        r.fail("launch.num_ctas", fmt::format("{} CTAs per program is a cluster larger than the portable 8, which "
                                              "is not supported yet",
                                              m.num_ctas));
    if (launch.contains("tensordesc_meta") &&
        !(launch["tensordesc_meta"].is_array() && launch["tensordesc_meta"].empty()))
        r.fail("launch.tensordesc_meta", "the kernel takes tensor descriptors (TMA), which are not supported yet");
    if (r.flag(launch, "launch.launch_cooperative_grid"))
        r.fail("launch.launch_cooperative_grid", "a cooperative launch is not supported yet");
    if (r.flag(launch, "launch.launch_pdl"))
        r.fail("launch.launch_pdl", "a programmatic dependent launch is not supported yet");
    if (launch.contains("tmem_size") && r.integer(launch, "launch.tmem_size", 0, INT32_MAX) != 0)
        r.fail("launch.tmem_size", "the kernel uses tensor memory (sm_100), which is not supported yet");
    if (launch.contains("cluster_dims")) {
        const json& dims = launch["cluster_dims"];
        const bool single = dims.is_array() && std::all_of(dims.begin(), dims.end(), [](const json& d) {
                                return d.is_number_integer() && d.get<std::int64_t>() == 1;
                            });
        if (!single) r.fail("launch.cluster_dims", "thread block clusters are not supported yet");
    }
}

} // namespace

std::optional<ElementType> triton_element_type(std::string_view type)
{
    static constexpr std::pair<std::string_view, ElementType> names[] = {{"fp32", ElementType::f32},
                                                                         {"fp64", ElementType::f64},
                                                                         {"fp16", ElementType::f16},
                                                                         {"bf16", ElementType::bf16},
                                                                         {"fp8e4nv", ElementType::fp8_e4m3},
                                                                         {"fp8e5", ElementType::fp8_e5m2},
                                                                         {"i8", ElementType::i8},
                                                                         {"i16", ElementType::i16},
                                                                         {"i32", ElementType::i32},
                                                                         {"i64", ElementType::i64},
                                                                         {"u8", ElementType::u8},
                                                                         {"u16", ElementType::u16},
                                                                         {"u32", ElementType::u32},
                                                                         {"u64", ElementType::u64}};
    for (const auto& [name, element] : names)
        if (name == type) return element;
    return std::nullopt;
}

TritonManifest read_triton_manifest(const fs::path& file, const fs::path& project)
{
    std::string text = read_input_file(file, max_manifest_bytes, "Triton manifest");
    const json root = ManifestReader::parse(file, text, "ci/triton_export.py");
    const ManifestReader r(file, std::move(text), "ci/triton_export.py");
    if (!root.is_object()) r.fail("", "expected a JSON object");
    TritonManifest m;
    m.file = file;
    const auto format = r.integer(root, "format", 0, 1000);
    if (format != triton_manifest_format)
        r.fail("format", fmt::format("format {} is not one this harness reads ({}): export it again", format,
                                     triton_manifest_format));
    m.kernel = r.text(root, "kernel", 100);
    m.function = r.text(root, "function", 100);
    m.source = r.path(root, "source", project);
    m.source_sha256 = r.digest(root, "source_sha256");
    m.triton_version = r.text(root, "triton_version", 40);
    const json& target = r.member(root, "target");
    if (r.text(target, "target.backend", 20) != "cuda") r.fail("target.backend", "only a CUDA target runs here");
    m.arch = static_cast<int>(r.integer(target, "target.arch", 50, 200));
    if (r.integer(target, "target.warp_size", 1, 1024) != 32) r.fail("target.warp_size", "expected 32");
    read_parameters(r, root, m);
    m.constexprs = root.contains("constexprs") ? root["constexprs"].dump() : "{}";
    m.cubin = r.file_beside(root, "cubin", ".cubin", project);
    m.cubin_sha256 = r.digest(root, "cubin_sha256");
    const json& launch = r.member(root, "launch");
    m.entry = r.symbol(launch, "launch.name");
    m.num_warps = static_cast<int>(r.integer(launch, "launch.num_warps", 1, 32));
    m.num_ctas = static_cast<int>(r.integer(launch, "launch.num_ctas", 1, 16));
    m.shared_bytes = r.integer(launch, "launch.shared", 0, 1024 * 1024);
    read_hidden_parameters(r, launch, m);
    refuse_unsupported(r, launch, m);
    return m;
}

std::string triton_staleness(const TritonManifest& m)
{
    std::error_code ec;
    if (!fs::is_regular_file(m.source, ec))
        return fmt::format("{}: no such file, which {} was exported from", m.source.string(), m.file.string());
    if (sha256_hex(read_input_file(m.source, max_manifest_bytes * 16, "Triton source")) != m.source_sha256)
        return fmt::format("{} changed since {} was exported from it (its SHA-256 is not the one the manifest "
                           "records): export it again with ci/triton_export.py (or give the variant `stale: allow`)",
                           m.source.string(), m.file.string());
    if (!fs::is_regular_file(m.cubin, ec))
        return fmt::format("{}: no such file, which {} names", m.cubin.string(), m.file.string());
    if (sha256_hex(read_input_file(m.cubin, max_exported_file_bytes, "Triton cubin")) != m.cubin_sha256)
        return fmt::format("{} is not the cubin {} was exported with (its SHA-256 differs): export it again",
                           m.cubin.string(), m.file.string());
    return "";
}

} // namespace harness::suite
