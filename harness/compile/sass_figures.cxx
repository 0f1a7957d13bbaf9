#include "harness/compile/sass_figures.hxx"

#include "harness/compile/sass_normalise.hxx"
#include "harness/core/atomic_file.hxx"
#include "harness/core/text.hxx"

#include <fmt/format.h>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <xxhash.h>

namespace harness::compile {

namespace fs = std::filesystem;

namespace {

/// Version of the cache entry's layout; another one is a miss.
constexpr int sass_entry_format = 2; // 2: the normalised code too

std::string cubin_hash(const std::string& cubin)
{
    const XXH128_hash_t hash = XXH3_128bits(cubin.data(), cubin.size());
    return fmt::format("{:016x}{:016x}", hash.high64, hash.low64);
}

nlohmann::json counts_json(const SassCounts& counts)
{
    nlohmann::json j = nlohmann::json::object();
    for (const auto& c : sass_class_table())
        if (counts[c.id] != 0) j[std::string(c.metric)] = counts[c.id];
    j[std::string(sass_total_metric)] = counts.total;
    return j;
}

SassCounts counts_of(const nlohmann::json& j)
{
    SassCounts counts;
    for (const auto& [name, value] : j.items()) {
        if (name == sass_total_metric) {
            counts.total = value.get<int>();
        } else if (const auto c = sass_class_of_metric(name)) {
            counts[*c] = value.get<int>();
        } else {
            throw std::runtime_error("unknown class " + name);
        }
    }
    return counts;
}

fs::path entry_path(const CompileCache& cache, const CompiledModule& module)
{
    return cache.dir() / (module.cache_key + ".sass.json");
}

/// The normalised code of a module's functions as the cache keeps it: a SASS code file's text.
std::string code_text(const std::vector<SassKernelCode>& code)
{
    SassCodeFile file;
    for (const auto& k : code) file.add_kernel(k);
    return sass_code_text(file);
}

std::vector<SassKernelCode> code_of(const std::string& text)
{
    std::vector<SassKernelCode> code;
    for (auto& [id, k] : parse_sass_code(text, "the cache entry").kernels) code.push_back(std::move(k));
    return code;
}

/// The cached counts and code of this cubin from this nvdisasm, or nullopt.
std::optional<ModuleSass> load_entry(const fs::path& path, const std::string& identity)
{
    std::ifstream in(path, std::ios::binary);
    if (!in) return std::nullopt;
    std::ostringstream text;
    text << in.rdbuf();
    try {
        const auto j = nlohmann::json::parse(text.str());
        if (j.at("format").get<int>() != sass_entry_format || j.at("identity").get<std::string>() != identity)
            return std::nullopt;
        auto counts = sass_counts_from_json(j.at("kernels").dump());
        if (!counts) return std::nullopt;
        ModuleSass sass;
        sass.kernels = std::move(*counts);
        sass.code = code_of(j.at("code").get<std::string>());
        sass.from_cache = true;
        return sass;
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

} // namespace

std::string sass_counts_json(const std::vector<SassKernelCounts>& kernels)
{
    nlohmann::json list = nlohmann::json::array();
    for (const auto& k : kernels) {
        nlohmann::json lines = nlohmann::json::array();
        for (const auto& l : k.lines)
            lines.push_back({{"file", l.file}, {"line", l.line}, {"counts", counts_json(l.counts)}});
        list.push_back({{"kernel", k.kernel}, {"counts", counts_json(k.counts)}, {"lines", lines}});
    }
    return list.dump();
}

std::optional<std::vector<SassKernelCounts>> sass_counts_from_json(const std::string& text)
{
    try {
        std::vector<SassKernelCounts> kernels;
        for (const auto& k : nlohmann::json::parse(text)) {
            SassKernelCounts counts{k.at("kernel").get<std::string>(), counts_of(k.at("counts")), {}};
            for (const auto& l : k.at("lines"))
                counts.lines.push_back(
                    {l.at("file").get<std::string>(), l.at("line").get<int>(), counts_of(l.at("counts"))});
            kernels.push_back(std::move(counts));
        }
        return kernels;
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

ModuleSass module_sass(const CompiledModule& module, const std::string& name, const CompileCache* cache,
                       const DisassemblyLimits& limits)
{
    ModuleSass sass;
    const NvdisasmLocation& nvdisasm = find_nvdisasm();
    if (nvdisasm.program.empty()) {
        sass.not_measured = nvdisasm.not_found_reason;
        return sass;
    }
    // An entry holds for one cubin and one nvdisasm: a newer one may print another SASS.
    const std::string identity = fmt::format("{} {}", cubin_hash(module.cubin), nvdisasm.version);
    if (cache && !module.cache_key.empty())
        if (auto cached = load_entry(entry_path(*cache, module), identity)) return std::move(*cached);
    try {
        // The output is let go once read: at most the output, or the instructions, are held.
        const auto functions = parse_disassembly(disassemble_cubin(nvdisasm.program, module.cubin, name, limits), name,
                                                 limits.max_instructions);
        sass.kernels = count_classes(functions);
        for (const auto& f : functions) sass.code.push_back(normalise_sass(f));
    } catch (const Error& e) {
        if (e.kind() != ErrorKind::bad_input) throw;
        sass.error = e.what();
        return sass;
    }
    if (cache && !module.cache_key.empty()) {
        const nlohmann::json entry = {{"format", sass_entry_format},
                                      {"identity", identity},
                                      {"kernels", nlohmann::json::parse(sass_counts_json(sass.kernels))},
                                      {"code", code_text(sass.code)}};
        try {
            write_file_atomically(entry_path(*cache, module), entry.dump());
        } catch (const std::exception&) {
            // The cache is an optimisation: a failed write costs the next run a disassembly.
        }
    }
    return sass;
}

std::string sass_source_name(const suite::Suite& suite, const suite::VariantSpec& variant, const std::string& file)
{
    const fs::path recorded(file);
    std::error_code ec;
    const auto inside_project = [&](const fs::path& path) -> std::optional<std::string> {
        const fs::path relative = fs::relative(path, suite.project_root, ec);
        if (ec || relative.empty() || relative.native().starts_with("..")) return std::nullopt;
        return relative.string();
    };
    // NVRTC names the kernel file by the name it was given, in its working folder (the compiler's
    // empty folder in the static tier): no file of that name there is another one.
    if (!suite::names_files_as_built(variant.kind) && recorded.filename() == variant.source.filename() &&
        (recorded.is_relative() || recorded == variant.source || !fs::exists(recorded, ec)))
        return inside_project(variant.source).value_or(variant.source.string());
    if (recorded.is_absolute() && fs::is_regular_file(recorded, ec))
        if (auto relative = inside_project(recorded)) return *relative;
    // Built in another folder or on another machine: the longest end of the path inside the project.
    std::vector<fs::path> parts(recorded.begin(), recorded.end());
    for (std::size_t skip = 1; skip < parts.size(); ++skip) {
        fs::path tail;
        for (std::size_t k = skip; k < parts.size(); ++k) tail /= parts[k];
        if (tail.is_relative() && fs::is_regular_file(suite.project_root / tail, ec)) return tail.string();
    }
    return file;
}

void add_sass_figures(CaseResult& r, const suite::Suite& suite, const suite::VariantSpec& variant,
                      const ModuleSass& sass, const std::vector<std::string>& symbols)
{
    if (!sass.not_measured.empty()) {
        r.sass_not_measured = sass.not_measured;
        return;
    }
    SassCounts total;
    std::set<std::string> seen;
    bool found = false;
    for (const auto& symbol : symbols) {
        if (!seen.insert(symbol).second) continue;
        const auto k = std::find_if(sass.kernels.begin(), sass.kernels.end(),
                                    [&](const SassKernelCounts& c) { return c.kernel == symbol; });
        if (k == sass.kernels.end()) continue;
        found = true;
        for (std::size_t i = 0; i < sass_class_count; ++i) total.by_class[i] += k->counts.by_class[i];
        total.total += k->counts.total;
        for (const auto& line : k->lines) {
            SassLine out{kernel_name(symbol), sass_source_name(suite, variant, line.file), line.line, {}};
            for (const auto& c : sass_class_table())
                if (line.counts[c.id] != 0) out.counts[std::string(c.metric)] = line.counts[c.id];
            if (!out.counts.empty()) r.sass_lines.push_back(std::move(out));
        }
    }
    if (!found) return;
    for (const auto& c : sass_class_table()) r.set_metric(std::string(c.metric), total[c.id]);
    r.set_metric(std::string(sass_total_metric), total.total);
}

void add_case_sass(CaseResult& r, const suite::Suite& suite, const suite::VariantSpec& variant,
                   const suite::Bindings& params, const CompiledModule& module, const ModuleSass& sass)
{
    if (!sass.error.empty()) {
        r.status = CaseStatus::compile_error;
        r.message = "cannot disassemble the cubin: " + sass.error;
        return;
    }
    std::vector<std::string> symbols;
    for (const auto& launch : variant.launches)
        if (auto lowered = module.lowered_names.find(suite::resolve_entry(launch.entry, params));
            lowered != module.lowered_names.end())
            symbols.push_back(lowered->second);
    add_sass_figures(r, suite, variant, sass, symbols);
}

} // namespace harness::compile
