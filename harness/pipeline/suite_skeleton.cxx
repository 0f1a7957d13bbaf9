#include "harness/pipeline/suite_skeleton.hxx"

#include "harness/core/text.hxx"
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

/// `text` as a YAML scalar that reads back as exactly `text`: plain where it is a C++-like name or
/// a path ("scale<256>", "../kernels/k.cu"), else double-quoted with every character that could end
/// the line, the string or the comment, or show as something else, escaped; nullopt for text that
/// is not UTF-8, which YAML cannot hold.
std::optional<std::string> yaml_scalar(std::string_view text)
{
    const auto plain_char = [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) != 0 ||
               std::string_view("_./<>:+-").find(c) != std::string_view::npos;
    };
    if (!text.empty() && std::all_of(text.begin(), text.end(), plain_char) &&
        (std::isalnum(static_cast<unsigned char>(text.front())) != 0 || text.front() == '_' || text.front() == '.' ||
         text.front() == '/') &&
        text.back() != ':')
        return std::string(text);
    std::string out = "\"";
    for (std::size_t i = 0; i < text.size();) {
        const auto point = utf8_code_point(text, i);
        if (!point) return std::nullopt;
        const auto [code, length] = *point;
        if (code == '"' || code == '\\')
            out += {'\\', static_cast<char>(code)};
        else if (code >= 0x20 && code < 0x7F)
            out += static_cast<char>(code);
        else if (code < 0x80)
            out += fmt::format("\\x{:02x}", static_cast<unsigned>(code));
        else
            out += code <= 0xFFFF ? fmt::format("\\u{:04x}", static_cast<unsigned>(code))
                                  : fmt::format("\\U{:08x}", static_cast<unsigned>(code));
        i += length;
    }
    return out + "\"";
}

/// `text` as a YAML key and name of the suite's: letters, digits and '_' ("scale<256>": scale_256);
/// `otherwise` where nothing is left.
std::string identifier_of(std::string_view text, std::string_view otherwise)
{
    std::string out(text);
    for (char& c : out)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
    while (!out.empty() && out.back() == '_') out.pop_back();
    return out.empty() ? std::string(otherwise) : out;
}

/// The `block:` line of a kernel's variant, and the threads a block it writes for the grid's example:
/// the block `.reqntid` demands, the most `__launch_bounds__` allows (a smaller block fits too), or,
/// where the kernel declares neither, a placeholder: a block size guessed here would read as known,
/// and a launch the driver refuses (more threads than the bounds) as measured.
std::pair<std::string, int> skeleton_block(const compile::ListedKernel& k)
{
    const auto dims = [](const std::array<int, 3>& d) {
        return d[2] > 1   ? fmt::format("{}, {}, {}", d[0], d[1], d[2])
               : d[1] > 1 ? fmt::format("{}, {}", d[0], d[1])
                          : fmt::format("{}", d[0]);
    };
    if (const auto& r = k.required_threads)
        return {
            fmt::format("    block: [{}]   # the block the kernel requires (.reqntid {}, {}, {}): no other launches\n",
                        dims(*r), (*r)[0], (*r)[1], (*r)[2]),
            (*r)[0] * (*r)[1] * (*r)[2]};
    if (const auto& m = k.max_threads)
        return {
            fmt::format("    block: [{}]   # the most the kernel's __launch_bounds__ allows{}; a smaller block fits "
                        "too, a larger one fails `harness check`\n",
                        dims(*m), k.min_blocks ? fmt::format(" ({} blocks per SM asked)", *k.min_blocks) : ""),
            (*m)[0] * (*m)[1] * (*m)[2]};
    return {fmt::format("    block: [{}]   # threads per block, as the kernel expects (it declares no "
                        "__launch_bounds__ to take them from), e.g. [256]\n",
                        placeholder),
            256};
}

} // namespace

std::string shown_name(std::string_view text)
{
    std::string out;
    for (const char c : escape_control_characters(text)) {
        if (c == '\n')
            out += "\\x0a";
        else if (c == '\t')
            out += "\\x09";
        else
            out += c;
    }
    return out;
}

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
                    shown_name(kernel_path), placeholder, shown_name(request.suite_file.generic_string()),
                    shown_name(request.arch));
    for (const auto& k : request.kernels) {
        const std::string bounds = compile::launch_bounds_text(k);
        out += fmt::format("#   {}: {} registers, {} bytes of static shared memory{}\n", shown_name(k.signature),
                           k.registers, k.static_shared_bytes, bounds.empty() ? "" : "; " + bounds);
    }
    out += "# What to check before trusting it:\n"
           "#   - block and grid: the launch each kernel expects (its own benchmark or host code says); a\n"
           "#     block comes from the kernel's launch bounds where it declares them, else it is yours;\n"
           "#   - buffer counts: elements, not bytes; every kernel of a variant reads within them;\n"
           "#   - roles: `in` is read only, `out` is written and compared with the reference's output,\n"
           "#     `inout` both (restored before each run); give scratch buffers role `in`;\n"
           "#   - reference: the simplest, trusted version; every other variant must match its outputs\n"
           "#     within `tolerance`.\n";
    out += fmt::format("suite: {}\n", yaml_scalar(request.suite_name).value_or(placeholder));
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
        variant = identifier_of(variant, "kernel");
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
            std::string name = identifier_of(p.name, "buffer");
            auto same = std::find_if(buffers.begin(), buffers.end(), [&](const Buffer& b) { return b.name == name; });
            if (same != buffers.end() && same->type != type) {
                name = identifier_of(k.name.substr(0, k.name.find('<')) + "_" + p.name, "buffer");
                same = std::find_if(buffers.begin(), buffers.end(), [&](const Buffer& b) { return b.name == name; });
            }
            if (same == buffers.end()) {
                buffers.push_back({name, type, shown_name(p.type + " " + p.name), !p.const_pointee});
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
        const auto path_scalar = [](const std::string& path) { return yaml_scalar(path).value_or(placeholder); };
        if (request.module) {
            out += fmt::format("    module: {}\n", path_scalar(kernel_path));
            if (request.module_source)
                out += fmt::format("    built_from: [{}]\n",
                                   path_scalar(relative_to_suite(*request.module_source, request.suite_file)));
        } else {
            out += fmt::format("    source: {}\n", path_scalar(kernel_path));
        }
        // A symbol that is not UTF-8 cannot be named in a suite: the placeholder says so.
        if (const auto entry = yaml_scalar(k.name))
            out += fmt::format("    entry: {}\n", *entry);
        else
            out += fmt::format("    entry: {}   # not UTF-8, which a suite cannot name: {}\n", placeholder,
                               shown_name(k.name));
        const auto [block, threads] = skeleton_block(k);
        out += block;
        out += fmt::format("    grid: [{}]   # blocks, e.g. ceil_div(N, {})\n", placeholder, threads);
        std::string args;
        std::string comment;
        for (const auto& p : k.parameters) {
            args += args.empty() ? "" : ", ";
            if (p.pointer) {
                args += buffer_of.at({k.symbol, p.name});
            } else {
                args += scalar_argument(p);
                comment += fmt::format("{}{} {}", comment.empty() ? "" : "; ",
                                       p.type.empty() ? fmt::format("{} bytes", p.size_bytes) : shown_name(p.type),
                                       shown_name(p.name));
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
