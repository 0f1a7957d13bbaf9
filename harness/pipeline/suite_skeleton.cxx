#include "harness/pipeline/suite_skeleton.hxx"

#include "harness/suite/element_type.hxx"

#include <algorithm>
#include <cctype>
#include <fmt/format.h>
#include <map>
#include <set>
#include <yaml-cpp/yaml.h>

namespace harness::pipeline {

namespace fs = std::filesystem;

namespace {

/// C++ spellings a kernel may use for an element type besides the table's own (cuda_type).
const std::map<std::string, std::string, std::less<>> type_aliases = {
    {"unsigned", "u32"},     {"uint32_t", "u32"},      {"int32_t", "i32"}, {"int64_t", "i64"}, {"uint64_t", "u64"},
    {"long", "i64"},         {"unsigned long", "u64"}, {"size_t", "u64"},  {"int16_t", "i16"}, {"uint16_t", "u16"},
    {"int8_t", "i8"},        {"uint8_t", "u8"},        {"char", "i8"},     {"half", "f16"},    {"__half_raw", "f16"},
    {"nv_bfloat16", "bf16"}, {"bool", "u8"},           {"floatX", "f32"},
};

std::string without_qualifiers(std::string type)
{
    for (const std::string word : {"const ", "volatile ", "struct "})
        for (std::size_t at; (at = type.find(word)) != std::string::npos;) type.erase(at, word.size());
    while (!type.empty() && (type.back() == ' ' || type.back() == '&')) type.pop_back();
    if (type.ends_with(" const")) type.resize(type.size() - 6);
    return type;
}

std::string relative_to_suite(const fs::path& file, const fs::path& suite_file)
{
    std::error_code ec;
    const fs::path from = fs::absolute(suite_file, ec).parent_path();
    const fs::path rel = fs::absolute(file, ec).lexically_normal().lexically_relative(from);
    return rel.empty() ? file.generic_string() : rel.generic_string();
}

/// A scalar argument for a value parameter: its element type where known, else one of its size.
std::string scalar_argument(const compile::ListedParameter& p)
{
    if (const auto type = element_type_for(p.type)) return fmt::format("{{{}: {}}}", *type, placeholder);
    switch (p.size_bytes) {
    case 1: return fmt::format("{{u8: {}}}", placeholder);
    case 2: return fmt::format("{{u16: {}}}", placeholder);
    case 4: return fmt::format("{{i32: {}}}", placeholder);
    case 8: return fmt::format("{{i64: {}}}", placeholder);
    default: return placeholder;
    }
}

struct Buffer {
    std::string name, type, declared;
    bool written = false;
};

} // namespace

std::optional<std::string> element_type_for(const std::string& cpp_type)
{
    const std::string type = without_qualifiers(cpp_type);
    for (const auto& info : suite::element_type_table())
        if (type == info.cuda_type) return std::string(info.name);
    if (const auto it = type_aliases.find(type); it != type_aliases.end()) return it->second;
    return std::nullopt;
}

std::string suite_skeleton(const SkeletonRequest& request)
{
    const std::string kernel_path = relative_to_suite(request.kernel_file, request.suite_file);
    std::string out =
        fmt::format("# A suite skeleton for {} (harness scaffold). Every {} is yours to fill in; `harness check {}`\n"
                    "# names each one left, by file, line and field, and then compiles every variant.\n"
                    "# Kernels found ({}):\n",
                    kernel_path, placeholder, request.suite_file.generic_string(), request.arch);
    for (const auto& k : request.kernels)
        out += fmt::format("#   {}: {} registers, {} bytes of static shared memory\n", k.signature, k.registers,
                           k.static_shared_bytes);
    out += "# What to check before trusting it:\n"
           "#   - block and grid: the launch each kernel expects (its own benchmark or host code says);\n"
           "#   - buffer counts: elements, not bytes; every kernel of a variant reads within them;\n"
           "#   - roles: `in` is read only, `out` is written and compared with the reference's output,\n"
           "#     `inout` both (restored before each run); give scratch buffers role `in`;\n"
           "#   - reference: the simplest, trusted version; every other variant must match its outputs\n"
           "#     within `tolerance`.\n";
    out += fmt::format("suite: {}\n", request.suite_name);
    out += fmt::format("description: {} what these kernels compute\n", placeholder);
    out += "params:\n";
    out += fmt::format("  N: [{}]   # problem sizes, e.g. [1048576, 16777216]; add a parameter per dimension\n",
                       placeholder);
    if (request.kernels.empty()) return out;
    // Variant names: the kernel's name, its template arguments joined on ("scale<256>": scale_256).
    std::vector<std::string> variant_names;
    for (const auto& k : request.kernels) {
        std::string variant = k.name;
        const auto colon = variant.substr(0, variant.find('<')).rfind(':');
        if (colon != std::string::npos) variant = variant.substr(colon + 1);
        for (char& c : variant)
            if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
        while (!variant.empty() && variant.back() == '_') variant.pop_back();
        while (std::find(variant_names.begin(), variant_names.end(), variant) != variant_names.end()) variant += "_";
        variant_names.push_back(variant);
    }
    out += fmt::format("reference: {}   # the variant every other one is checked against\n", variant_names.front());
    out += "tolerance: {rel: 1e-5, abs: 1e-6}   # how close outputs must be to the reference's\n";

    // Buffers: one per pointer parameter name; a name used with another type gets the kernel's name.
    std::vector<Buffer> buffers;
    std::map<std::pair<std::string, std::string>, std::string> buffer_of; // (kernel, parameter) -> buffer
    for (const auto& k : request.kernels)
        for (const auto& p : k.parameters) {
            if (!p.pointer) continue;
            const std::string type = element_type_for(p.pointee).value_or(placeholder);
            std::string name = p.name;
            auto same = std::find_if(buffers.begin(), buffers.end(), [&](const Buffer& b) { return b.name == name; });
            if (same != buffers.end() && same->type != type) {
                name = k.name.substr(0, k.name.find('<')) + "_" + p.name;
                same = std::find_if(buffers.begin(), buffers.end(), [&](const Buffer& b) { return b.name == name; });
            }
            if (same == buffers.end()) {
                buffers.push_back({name, type, p.type + " " + p.name, !p.const_pointee});
            } else {
                same->written = same->written || !p.const_pointee;
            }
            buffer_of[{k.symbol, p.name}] = name;
        }
    out += "buffers:\n";
    if (buffers.empty()) out += "  {}\n";
    for (const auto& b : buffers) {
        const std::string init =
            b.written ? "init: zeros, role: out" : "init: uniform, seed: 1, min: -1, max: 1, role: in";
        out +=
            fmt::format("  {}: {{type: {}, count: {}, {}}}   # {}{}\n", b.name, b.type, placeholder, init, b.declared,
                        b.written ? ": written, so `out`; `inout` if the kernel also reads it" : ": read only");
    }

    out += "variants:\n";
    for (std::size_t i = 0; i < request.kernels.size(); ++i) {
        const auto& k = request.kernels[i];
        out += fmt::format("  {}:\n", variant_names[i]);
        if (request.module) {
            out += fmt::format("    module: {}\n", kernel_path);
            if (request.module_source)
                out += fmt::format("    built_from: [{}]\n",
                                   relative_to_suite(*request.module_source, request.suite_file));
        } else {
            out += fmt::format("    source: {}\n", kernel_path);
        }
        out += fmt::format("    entry: {}\n", k.name);
        out += "    block: [256]   # threads per block, as the kernel expects\n";
        out += fmt::format("    grid: [{}]   # blocks, e.g. ceil_div(N, 256)\n", placeholder);
        std::string args;
        std::string comment;
        for (const auto& p : k.parameters) {
            args += args.empty() ? "" : ", ";
            if (p.pointer) {
                args += buffer_of.at({k.symbol, p.name});
            } else {
                args += scalar_argument(p);
                comment += fmt::format("{}{} {}", comment.empty() ? "" : "; ",
                                       p.type.empty() ? fmt::format("{} bytes", p.size_bytes) : p.type, p.name);
            }
        }
        out += fmt::format("    args: [{}]{}\n", args, comment.empty() ? "" : "   # " + comment);
    }
    return out;
}

std::vector<std::string> placeholder_errors(const std::string& text, const std::string& file)
{
    if (text.find(placeholder) == std::string::npos) return {};
    std::vector<std::string> out;
    YAML::Node root;
    try {
        root = YAML::Load(text);
    } catch (const YAML::Exception&) {
        return {}; // the loader says what is wrong with the YAML itself
    }
    const auto visit = [&](const auto& self, const YAML::Node& node, const std::string& field) -> void {
        if (node.IsScalar()) {
            const std::string value = node.Scalar();
            if (value.find(placeholder) != std::string::npos)
                out.push_back(fmt::format("{}:{}:{}: {}: still a placeholder ('{}'): fill it in", file,
                                          node.Mark().line + 1, node.Mark().column + 1, field, value.substr(0, 80)));
            return;
        }
        if (node.IsSequence()) {
            for (std::size_t i = 0; i < node.size(); ++i) self(self, node[i], fmt::format("{}[{}]", field, i));
            return;
        }
        if (node.IsMap())
            for (const auto& entry : node) {
                const std::string key = entry.first.IsScalar() ? entry.first.Scalar() : "?";
                if (key.find(placeholder) != std::string::npos)
                    out.push_back(fmt::format("{}:{}:{}: {}: still a placeholder ('{}'): fill it in", file,
                                              entry.first.Mark().line + 1, entry.first.Mark().column + 1, field,
                                              key.substr(0, 80)));
                self(self, entry.second, field.empty() ? key : field + "." + key);
            }
    };
    visit(visit, root, "");
    return out;
}

} // namespace harness::pipeline
