#include "harness/compile/kernel_listing.hxx"

#include "harness/compile/compile_suite.hxx"
#include "harness/compile/cubin_info.hxx"
#include "harness/compile/nvrtc_compiler.hxx"
#include "harness/core/error.hxx"
#include "harness/core/input_files.hxx"
#include "harness/core/text.hxx"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cxxabi.h>
#include <fmt/format.h>
#include <memory>

namespace harness::compile {

namespace fs = std::filesystem;

namespace {

/// The largest module or source read for a listing.
constexpr std::size_t max_listed_file_bytes = 256 * 1024 * 1024;

/// `text` without the white space at its ends, as a string of its own (harness::trim gives a view).
std::string trimmed(std::string_view text)
{
    std::size_t first = 0, last = text.size();
    while (first < last && std::isspace(static_cast<unsigned char>(text[first])) != 0) ++first;
    while (last > first && std::isspace(static_cast<unsigned char>(text[last - 1])) != 0) --last;
    return std::string(text.substr(first, last - first));
}

/// Runs of white space as one space.
std::string squeeze(std::string_view text)
{
    std::string out;
    for (const char c : text) {
        const bool space = std::isspace(static_cast<unsigned char>(c)) != 0;
        if (space && (out.empty() || out.back() == ' ')) continue;
        out += space ? ' ' : c;
    }
    return trimmed(out);
}

/// `text` without comments; string and character literals kept as they are.
std::string without_comments(std::string_view text)
{
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '"' || c == '\'') {
            const std::size_t start = i++;
            while (i < text.size() && text[i] != c && text[i] != '\n') i += text[i] == '\\' ? 2 : 1;
            out.append(text.substr(start, std::min(i, text.size() - 1) - start + 1));
            continue;
        }
        if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
            while (i < text.size() && text[i] != '\n') ++i;
            out += '\n';
            continue;
        }
        if (c == '/' && i + 1 < text.size() && text[i + 1] == '*') {
            const std::size_t end = text.find("*/", i + 2);
            i = end == std::string_view::npos ? text.size() : end + 1;
            out += ' ';
            continue;
        }
        out += c;
    }
    return out;
}

/// The index just after the bracket that closes the one at `open`; npos when unbalanced.
std::size_t after_closing(std::string_view text, std::size_t open)
{
    int depth = 0;
    for (std::size_t i = open; i < text.size(); ++i) {
        if (text[i] == '(') ++depth;
        if (text[i] == ')' && --depth == 0) return i + 1;
    }
    return std::string_view::npos;
}

/// `list` split at commas outside brackets.
std::vector<std::string> split_top_level(std::string_view list)
{
    std::vector<std::string> parts;
    int depth = 0;
    std::string current;
    for (const char c : list) {
        if (c == '(' || c == '<' || c == '[' || c == '{') ++depth;
        if (c == ')' || c == '>' || c == ']' || c == '}') --depth;
        if (c == ',' && depth == 0) {
            parts.push_back(trimmed(current));
            current.clear();
            continue;
        }
        current += c;
    }
    if (!trimmed(current).empty()) parts.push_back(trimmed(current));
    return parts;
}

bool is_type_word(const std::string& word)
{
    static const char* const words[] = {"const",   "volatile", "unsigned",      "signed",       "int",       "float",
                                        "double",  "char",     "short",         "long",         "bool",      "void",
                                        "size_t",  "__half",   "__half2",       "half",         "float2",    "float4",
                                        "int2",    "int4",     "uint32_t",      "int32_t",      "uint64_t",  "int64_t",
                                        "uint8_t", "int8_t",   "__nv_bfloat16", "__restrict__", "__restrict"};
    return std::find(std::begin(words), std::end(words), word) != std::end(words);
}

/// A declared parameter: "const float* __restrict__ a" -> type "const float*", name "a".
ListedParameter parameter_of(const std::string& declared, std::size_t ordinal)
{
    std::string text = trimmed(declared.substr(0, declared.find('=')));
    ListedParameter p;
    // The name is the last identifier, where there is one besides the type.
    std::size_t end = text.size();
    std::size_t start = end;
    while (start > 0 && is_identifier_char(text[start - 1])) --start;
    const std::string last = text.substr(start, end - start);
    const std::string rest = trimmed(text.substr(0, start));
    if (!last.empty() && !rest.empty() && !is_type_word(last) && !std::isdigit(static_cast<unsigned char>(last[0])))
        p.name = last, text = rest;
    else
        p.name = fmt::format("arg{}", ordinal);
    std::string type;
    for (const auto& word : {std::string("__restrict__"), std::string("__restrict")})
        for (std::size_t at; (at = text.find(word)) != std::string::npos;) text.erase(at, word.size());
    type = squeeze(text);
    // "float *" and "float*" alike.
    for (std::size_t at; (at = type.find(" *")) != std::string::npos;) type.erase(at, 1);
    p.type = type;
    p.pointer = type.find('*') != std::string::npos;
    if (p.pointer) {
        p.pointee = pointee_type(type);
        const std::string before_star = type.substr(0, type.rfind('*'));
        p.const_pointee = before_star.find("const") != std::string::npos;
    }
    return p;
}

std::string demangle(const std::string& symbol)
{
    int status = 0;
    std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(symbol.c_str(), nullptr, nullptr, &status),
                                               std::free);
    return status == 0 && out ? std::string(out.get()) : symbol;
}

/// "void ns::gemm<32>(float*, int)" -> {"ns::gemm<32>", "float*, int"}; an extern "C" name as it is.
std::pair<std::string, std::optional<std::string>> split_demangled(const std::string& demangled)
{
    if (demangled.empty() || demangled.back() != ')') return {demangled, std::nullopt};
    int depth = 0;
    std::size_t open = std::string::npos;
    for (std::size_t i = demangled.size(); i-- > 0;) {
        if (demangled[i] == ')') ++depth;
        if (demangled[i] == '(' && --depth == 0) {
            open = i;
            break;
        }
    }
    if (open == std::string::npos) return {demangled, std::nullopt};
    std::string name = demangled.substr(0, open);
    // Template kernels carry their return type ("void gemm<32>"); plain ones do not.
    if (name.starts_with("void ")) name = name.substr(5);
    return {trimmed(name), demangled.substr(open + 1, demangled.size() - open - 2)};
}

std::string read_whole(const fs::path& file, const char* what)
{
    return read_input_file(file, max_listed_file_bytes, what);
}

bool is_source(const fs::path& file)
{
    const std::string ext = file.extension().string();
    return ext == ".cu" || ext == ".cuh" || ext == ".cpp" || ext == ".cc";
}

/// The cubin of `file` for `arch`, compiled as a suite's variant is (compile_confined): a source
/// by NVRTC, a module's PTX by the JIT linker, in a confined process that may read the file's
/// project (project_root(), never the working folder) and the toolkit. Throws Error naming the
/// file when it does not compile.
CompiledModule compile_for_listing(const fs::path& file, const std::string& arch)
{
    CompileRequest request;
    request.arch = arch;
    const fs::path project = project_root(file);
    request.readable_roots = {project};
    if (is_source(file)) {
        request.source = file;
        // As a suite compiles it: the project's kernels/ folder is an include folder
        // ("reduce/block_sum_shuffle.cuh"), and so is the source's own folder.
        request.include_dirs = {fs::absolute(file).parent_path()};
        std::error_code ec;
        if (fs::is_directory(project / "kernels", ec)) request.include_dirs.push_back(project / "kernels");
    } else {
        // No entries to find and no sources to compare with: the listing names what the module holds.
        request.module_file = file;
        request.allow_stale_module = true;
    }
    auto compiled = compile_confined({request}, suite::CompileLimits{}, nullptr, 1,
                                     fmt::format("listing the kernels of {}", file.string()));
    if (auto* failure = std::get_if<CompileFailure>(&compiled.front())) throw Error(failure->kind, failure->message);
    return std::move(std::get<CompiledModule>(compiled.front()));
}

} // namespace

std::string pointee_type(const std::string& type)
{
    std::string text = type.substr(0, type.rfind('*'));
    for (const auto& word : {std::string("const"), std::string("volatile"), std::string("__restrict__")}) {
        for (std::size_t at = 0; (at = text.find(word, at)) != std::string::npos;) {
            const bool whole = (at == 0 || !is_identifier_char(text[at - 1])) &&
                               (at + word.size() == text.size() || !is_identifier_char(text[at + word.size()]));
            if (whole)
                text.erase(at, word.size());
            else
                at += word.size();
        }
    }
    return squeeze(text);
}

std::optional<std::vector<ListedParameter>> declared_parameters(const std::string& source_text, const std::string& name)
{
    const std::string text = without_comments(source_text);
    for (std::size_t at = text.find("__global__"); at != std::string::npos; at = text.find("__global__", at + 1)) {
        // The identifier before the first '(' that is not __launch_bounds__(...) names the kernel.
        std::size_t cursor = at + 10;
        while (cursor < text.size()) {
            const std::size_t open = text.find('(', cursor);
            if (open == std::string::npos) break;
            std::size_t end = open;
            while (end > cursor && std::isspace(static_cast<unsigned char>(text[end - 1])) != 0) --end;
            std::size_t start = end;
            while (start > cursor && is_identifier_char(text[start - 1])) --start;
            const std::string found = text.substr(start, end - start);
            const std::size_t close = after_closing(text, open);
            if (close == std::string::npos) return std::nullopt;
            if (found == "__launch_bounds__" || found == "__maxnreg__" || found == "__cluster_dims__") {
                cursor = close;
                continue;
            }
            if (found != name) break;
            std::vector<ListedParameter> parameters;
            const auto parts = split_top_level(std::string_view(text).substr(open + 1, close - open - 2));
            for (std::size_t i = 0; i < parts.size(); ++i) {
                if (parts.size() == 1 && squeeze(parts[i]) == "void") break;
                parameters.push_back(parameter_of(parts[i], i));
            }
            return parameters;
        }
    }
    return std::nullopt;
}

std::vector<ListedKernel> list_kernels(const fs::path& file, const std::string& arch,
                                       const std::optional<fs::path>& source, std::vector<std::string>& notes)
{
    const CompiledModule compiled = compile_for_listing(file, arch);
    std::optional<std::string> source_text;
    if (is_source(file)) {
        source_text = read_whole(file, "kernel source");
        if (source_text->find("template") != std::string::npos)
            notes.push_back(fmt::format(
                "{}: template kernels are compiled only when named: list each one you "
                "want as `entry: name<arguments>`; the skeleton holds the kernels compiled without being named",
                file.string()));
    } else if (source) {
        source_text = read_whole(*source, "kernel source");
    }
    auto out = list_cubin_kernels(compiled.cubin, file, source_text, compiled.ptx);
    if (out.empty()) notes.push_back(fmt::format("{}: no kernel (entry function) for {}", file.string(), arch));
    return out;
}

std::optional<int> declared_min_blocks(std::string_view ptx, std::string_view symbol)
{
    // ".entry <symbol>(" then its parameter list, then the performance directives up to the body's '{'.
    for (std::size_t at = ptx.find(".entry "); at != std::string_view::npos; at = ptx.find(".entry ", at + 1)) {
        std::size_t name = at + 7;
        while (name < ptx.size() && ptx[name] == ' ') ++name;
        if (ptx.substr(name, symbol.size()) != symbol || name + symbol.size() >= ptx.size()) continue;
        const char after = ptx[name + symbol.size()];
        if (after != '(' && after != ' ' && after != '\n' && after != '\r' && after != '\t') continue;
        const std::size_t body = ptx.find('{', name);
        const std::size_t close = ptx.find(')', name);
        if (body == std::string_view::npos || close == std::string_view::npos || close > body) return std::nullopt;
        const std::string_view directives = ptx.substr(close, body - close);
        const std::size_t directive = directives.find(".minnctapersm");
        if (directive == std::string_view::npos) return std::nullopt;
        std::size_t digit = directive + 13;
        while (digit < directives.size() && directives[digit] == ' ') ++digit;
        int value = 0;
        const auto [end, ec] = std::from_chars(directives.data() + digit, directives.data() + directives.size(), value);
        if (ec != std::errc() || end == directives.data() + digit || value < 1) return std::nullopt;
        return value;
    }
    return std::nullopt;
}

std::string launch_bounds_text(const ListedKernel& k)
{
    if (k.required_threads) {
        const auto& r = *k.required_threads;
        return fmt::format("exactly {} x {} x {} threads a block (.reqntid)", r[0], r[1], r[2]);
    }
    if (!k.max_threads) return {};
    const auto& m = *k.max_threads;
    const int threads = m[0] * m[1] * m[2];
    if (!k.min_blocks) return fmt::format("at most {} threads a block (__launch_bounds__({}))", threads, threads);
    return fmt::format("at most {} threads a block, at least {} resident blocks asked (__launch_bounds__({}, {}))",
                       threads, *k.min_blocks, threads, *k.min_blocks);
}

std::vector<ListedKernel> list_cubin_kernels(std::string_view cubin, const fs::path& file,
                                             const std::optional<std::string>& source_text, std::string_view ptx)
{
    CubinInfo info;
    try {
        info = read_cubin_info(cubin);
    } catch (const CubinError& e) {
        throw Error(ErrorKind::bad_input, fmt::format("{}: {}", file.string(), e.what()));
    }
    std::vector<ListedKernel> out;
    for (const auto& k : info.kernels) {
        ListedKernel listed;
        listed.symbol = k.name;
        listed.registers = k.registers;
        listed.static_shared_bytes = k.static_shared_bytes;
        listed.max_threads = k.max_threads;
        listed.required_threads = k.required_threads;
        if (k.max_threads && !ptx.empty()) listed.min_blocks = declared_min_blocks(ptx, k.name);
        const auto [name, demangled_parameters] = split_demangled(demangle(k.name));
        listed.name = name;
        std::optional<std::vector<ListedParameter>> declared;
        if (source_text)
            declared = declared_parameters(
                *source_text, demangled_base_name(k.name).substr(demangled_base_name(k.name).rfind(':') + 1));
        const std::size_t count = k.parameters ? k.parameters->size() : declared ? declared->size() : 0;
        if (declared && declared->size() == count) {
            listed.parameters = *declared;
        } else if (demangled_parameters) {
            const auto parts = split_top_level(*demangled_parameters);
            for (std::size_t i = 0; i < parts.size(); ++i) listed.parameters.push_back(parameter_of(parts[i], i));
        }
        if (k.parameters) {
            // The cubin is what the launch must match: its count decides, and its sizes are kept.
            listed.parameters.resize(k.parameters->size());
            for (const auto& p : *k.parameters) {
                if (p.ordinal < 0 || static_cast<std::size_t>(p.ordinal) >= listed.parameters.size()) continue;
                auto& listed_parameter = listed.parameters[static_cast<std::size_t>(p.ordinal)];
                listed_parameter.size_bytes = p.size_bytes;
                if (listed_parameter.name.empty()) listed_parameter.name = fmt::format("arg{}", p.ordinal);
            }
        }
        std::string parameters;
        for (const auto& p : listed.parameters)
            parameters += fmt::format("{}{}{}", parameters.empty() ? "" : ", ",
                                      p.type.empty() ? fmt::format("<{} bytes>", p.size_bytes) : p.type,
                                      p.name.starts_with("arg") && p.type.empty() ? "" : " " + p.name);
        listed.signature = fmt::format("{}({})", listed.name, parameters);
        out.push_back(std::move(listed));
    }
    return out;
}

} // namespace harness::compile
