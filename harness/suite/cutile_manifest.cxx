#include "harness/suite/cutile_manifest.hxx"

#include "harness/core/error.hxx"
#include "harness/core/input_files.hxx"
#include "harness/core/sha256.hxx"
#include "harness/suite/manifest_reader.hxx"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace harness::suite {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* writer = "ci/cutile_export.py";

ElementType element_type(const ManifestReader& r, const json& object, const std::string& field)
{
    const std::string name = r.text(object, field, 20);
    const auto type = element_type_from_name(name);
    if (!type) r.fail(field, fmt::format("'{}' is no element type of a suite", name));
    return *type;
}

/// A list of `ndim` integers at least `low` (nullopt for a null where `nullable`).
std::vector<std::optional<std::int64_t>> per_dimension(const ManifestReader& r, const json& object,
                                                       const std::string& field, int ndim, std::int64_t low,
                                                       bool nullable)
{
    const json& list = r.member(object, field);
    if (!list.is_array() || list.size() != static_cast<std::size_t>(ndim))
        r.fail(field, fmt::format("expected a list of {} values, one per dimension", ndim));
    std::vector<std::optional<std::int64_t>> out;
    for (std::size_t d = 0; d < list.size(); ++d) {
        if (list[d].is_null() && nullable) {
            out.emplace_back();
            continue;
        }
        if (!list[d].is_number_integer()) r.fail(field, fmt::format("[{}] is not an integer", d));
        const auto v = list[d].get<std::int64_t>();
        if (v < low || v > (std::int64_t{1} << 40))
            r.fail(field, fmt::format("[{}] is {}, outside {} to 2^40", d, v, low));
        out.push_back(v);
    }
    return out;
}

CutileArray read_array(const ManifestReader& r, const json& p, const std::string& field)
{
    CutileArray a;
    a.ndim = static_cast<int>(r.integer(p, field + ".ndim", 1, 8));
    a.index_type = element_type(r, p, field + ".index_type");
    if (a.index_type != ElementType::i32 && a.index_type != ElementType::i64)
        r.fail(field + ".index_type", "an array's index type is i32 or i64");
    a.base_addr_divisible_by = r.integer(p, field + ".base_addr_divisible_by", 1, 1 << 20);
    for (const auto& v : per_dimension(r, p, field + ".shape_divisible_by", a.ndim, 1, false))
        a.shape_divisible_by.push_back(*v);
    for (const auto& v : per_dimension(r, p, field + ".stride_divisible_by", a.ndim, 1, false))
        a.stride_divisible_by.push_back(*v);
    a.stride_constant = per_dimension(r, p, field + ".stride_constant", a.ndim, -(std::int64_t{1} << 40), true);
    a.stride_lower_bound = per_dimension(r, p, field + ".stride_lower_bound", a.ndim, -(std::int64_t{1} << 40), true);
    const json& groups = r.member(p, field + ".alias_groups");
    if (!groups.is_array() || groups.size() > 64) r.fail(field + ".alias_groups", "expected a list of names");
    for (std::size_t i = 0; i < groups.size(); ++i) {
        if (!groups[i].is_string()) r.fail(field + ".alias_groups", "expected a list of names");
        a.alias_groups.push_back(groups[i].get<std::string>().substr(0, 100));
    }
    a.may_alias_internally = r.flag(p, field + ".may_alias_internally");
    return a;
}

void read_parameters(const ManifestReader& r, const json& root, CutileManifest& m)
{
    const json& parameters = r.member(root, "parameters");
    if (!parameters.is_array() || parameters.size() > 256) r.fail("parameters", "expected a list of parameters");
    for (std::size_t i = 0; i < parameters.size(); ++i) {
        const std::string field = fmt::format("parameters[{}]", i);
        CutileParameter p;
        p.name = r.text(parameters[i], field + ".name", 100);
        p.type = element_type(r, parameters[i], field + ".type");
        const std::string kind = r.text(parameters[i], field + ".kind", 20);
        if (kind == "array")
            p.array = read_array(r, parameters[i], field);
        else if (kind != "scalar")
            r.fail(field + ".kind", fmt::format("'{}': a parameter is an array or a scalar", kind));
        m.parameters.push_back(std::move(p));
    }
}

/// What the harness cannot launch is refused by name, never launched wrongly.
void read_launch(const ManifestReader& r, const json& root, CutileManifest& m)
{
    const json& launch = r.member(root, "launch");
    const auto dims = [&](const std::string& field, std::int64_t high) {
        const json& list = r.member(launch, field);
        if (!list.is_array() || list.size() != 3) r.fail(field, "expected [x, y, z]");
        std::array<int, 3> out{};
        for (std::size_t d = 0; d < 3; ++d) {
            if (!list[d].is_number_integer() || list[d].get<std::int64_t>() < 1 || list[d].get<std::int64_t>() > high)
                r.fail(field, fmt::format("[{}] is not an integer from 1 to {}", d, high));
            out[d] = list[d].get<int>();
        }
        return out;
    };
    m.block = dims("launch.block", 1024);
    if (dims("launch.cluster", 16) != std::array<int, 3>{1, 1, 1})
        r.fail("launch.cluster",
               "the kernel requires thread block clusters, which a cutile variant does not launch yet");
    m.static_shared_bytes = r.integer(launch, "launch.static_shared_bytes", 0, 1024 * 1024);
    const json& hidden = r.member(launch, "launch.hidden_parameters");
    if (!hidden.is_array()) r.fail("launch.hidden_parameters", "expected a list");
    if (!hidden.empty())
        r.fail("launch.hidden_parameters",
               fmt::format("the kernel takes {} parameter(s) that cuTile's launcher fills ({}: a TMA descriptor it "
                           "builds from an array), which a cutile variant does not build yet; export it with "
                           "allow_tma=False on its loads and stores, or without the alignment that lets it use TMA",
                           hidden.size(), hidden[0].is_object() ? hidden[0].value("name", "?") : "?"));
}

} // namespace

CutileManifest read_cutile_manifest(const fs::path& file, const fs::path& project)
{
    std::string text = read_input_file(file, max_manifest_bytes, "cuTile manifest");
    const json root = ManifestReader::parse(file, text, writer);
    const ManifestReader r(file, std::move(text), writer);
    if (!root.is_object()) r.fail("", "expected a JSON object");
    CutileManifest m;
    m.file = file;
    const auto format = r.integer(root, "format", 0, 1000);
    if (format != cutile_manifest_format)
        r.fail("format", fmt::format("format {} is not one this harness reads ({}): export it again", format,
                                     cutile_manifest_format));
    if (const std::string dsl = r.text(root, "dsl", 20); dsl != "cutile")
        r.fail("dsl", fmt::format("'{}': a cutile variant reads cuTile's exports", dsl));
    m.kernel = r.text(root, "kernel", 100);
    m.function = r.text(root, "function", 100);
    m.source = r.path(root, "source", project);
    m.source_sha256 = r.digest(root, "source_sha256");
    m.cutile_version = r.text(root, "cutile_version", 40);
    m.compiler = r.text(root, "compiler", 60);
    m.arch = static_cast<int>(r.integer(r.member(root, "target"), "target.arch", 50, 200));
    m.entry = r.symbol(root, "entry");
    if (const std::string convention = r.text(root, "calling_convention", 40); convention != cutile_calling_convention)
        r.fail("calling_convention", fmt::format("'{}' is not a calling convention this harness passes arguments in "
                                                 "({})",
                                                 convention, cutile_calling_convention));
    read_parameters(r, root, m);
    m.constants = root.contains("constants") ? root["constants"].dump() : "{}";
    read_launch(r, root, m);
    m.cubin = r.file_beside(root, "cubin", ".cubin", project);
    m.cubin_sha256 = r.digest(root, "cubin_sha256");
    m.ptx = r.file_beside(root, "ptx", ".ptx", project);
    m.ptx_sha256 = r.digest(root, "ptx_sha256");
    return m;
}

std::string cutile_staleness(const CutileManifest& m)
{
    std::error_code ec;
    if (!fs::is_regular_file(m.source, ec))
        return fmt::format("{}: no such file, which {} was exported from", m.source.string(), m.file.string());
    if (sha256_hex(read_input_file(m.source, max_manifest_bytes * 16, "cuTile source")) != m.source_sha256)
        return fmt::format("{} changed since {} was exported from it (its SHA-256 is not the one the manifest "
                           "records): export it again with ci/cutile_export.py (or give the variant `stale: allow`)",
                           m.source.string(), m.file.string());
    for (const auto& [file, digest, what] :
         {std::tuple{&m.cubin, &m.cubin_sha256, "cubin"}, std::tuple{&m.ptx, &m.ptx_sha256, "PTX"}}) {
        if (!fs::is_regular_file(*file, ec))
            return fmt::format("{}: no such file, which {} names", file->string(), m.file.string());
        if (sha256_hex(read_input_file(*file, max_exported_file_bytes, "cuTile export")) != *digest)
            return fmt::format("{} is not the {} {} was exported with (its SHA-256 differs): export it again",
                               file->string(), what, m.file.string());
    }
    return "";
}

} // namespace harness::suite
