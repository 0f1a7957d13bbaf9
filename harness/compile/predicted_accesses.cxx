#include "harness/compile/predicted_accesses.hxx"

#include "harness/core/atomic_file.hxx"
#include "harness/core/metrics.hxx"
#include "harness/core/parallel.hxx"
#include "harness/core/sha256.hxx"
#include "harness/suite/compile_params.hxx"
#include "harness/suite/element_type.hxx"

#include <algorithm>
#include <cstdlib>
#include <cxxabi.h>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <tuple>

namespace harness::compile {

namespace {

namespace fs = std::filesystem;
using analysis::AccessKind;

std::array<std::uint32_t, 3> dimensions(const std::vector<suite::Expression>& exprs, const suite::Bindings& point,
                                        const std::string& what)
{
    std::array<std::uint32_t, 3> d{1, 1, 1};
    for (std::size_t i = 0; i < exprs.size() && i < 3; ++i) {
        const std::int64_t v = exprs[i].evaluate(point);
        if (v < 1 || v > 0x7fffffff) throw std::runtime_error(fmt::format("{}[{}] = {} is out of range", what, i, v));
        d[i] = static_cast<std::uint32_t>(v);
    }
    return d;
}

/// A scalar argument's bits as the runner passes them (run/buffer_data.cxx, scalar_bytes): integers
/// in two's complement truncated to the type's width, floats rounded to the type.
std::uint64_t scalar_bits(const suite::ArgSpec& a, const suite::Bindings& point)
{
    const std::size_t size = suite::element_size(a.scalar_type);
    if (a.literal) return suite::to_bits(a.scalar_type, *a.literal);
    const std::int64_t v = a.scalar.evaluate(point);
    if (!suite::is_integer(a.scalar_type)) return suite::to_bits(a.scalar_type, static_cast<double>(v));
    const auto bits = static_cast<std::uint64_t>(v);
    return size >= 8 ? bits : bits & ((std::uint64_t{1} << (8 * size)) - 1);
}

/// A path of the PTX's line table as reports name files. The compiler ran in a folder of its own
/// (compile/confinement.hxx), so the kernel's own file is named there: it is the launch's file
/// (relative to the project). A header elsewhere is named relative to the project when inside it.
std::string shown_file(const std::string& file, const CaseLaunch& launch, const fs::path& project_root)
{
    if (file.empty()) return file;
    const fs::path path(file);
    if (!launch.file.empty() && path.filename() == fs::path(launch.file).filename()) return launch.file;
    if (!path.is_absolute() || project_root.empty()) return file;
    std::error_code ec;
    const fs::path relative = fs::relative(path, project_root, ec);
    return ec || relative.empty() || relative.native().starts_with("..") ? file : relative.string();
}

/// `reason` with the paths of the launch's own file in the compiler's folder named as shown_file names them.
std::string shown_reason(std::string reason, const CaseLaunch& launch)
{
    if (launch.file.empty()) return reason;
    const std::string name = "/" + fs::path(launch.file).filename().string() + ":";
    for (std::size_t at = reason.find(name); at != std::string::npos; at = reason.find(name, at)) {
        const std::size_t start =
            reason.find_last_of(" \t", at) == std::string::npos ? 0 : reason.find_last_of(" \t", at) + 1;
        reason.replace(start, at + name.size() - 1 - start, launch.file);
        at = start + launch.file.size() + 1;
    }
    return reason;
}

/// A shared variable as its source names it: a function's static `__shared__` variable is named
/// in PTX by its mangled name (_ZZ14transpose_smemILi32ELi8EEvPKfPfiiE4tile: "tile").
std::string buffer_name(const std::string& name)
{
    if (!name.starts_with("_Z")) return name;
    int status = 0;
    std::unique_ptr<char, void (*)(void*)> demangled(abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status),
                                                     std::free);
    if (status != 0 || !demangled) return name;
    const std::string text = demangled.get();
    const auto at = text.rfind("::");
    return at == std::string::npos ? text : text.substr(at + 2);
}

/// One line's accesses as one: an unrolled loop repeats an access at its line, and a report reads
/// lines. Accesses of the same launch, line, kind and buffer are summed; the first keeps its rank.
void merge_lines(std::vector<PredictedAccess>& accesses)
{
    std::vector<PredictedAccess> merged;
    for (auto& a : accesses) {
        auto same = std::find_if(merged.begin(), merged.end(), [&](const PredictedAccess& m) {
            return std::tie(m.launch, m.file, m.line, m.access, m.buffer) ==
                   std::tie(a.launch, a.file, a.line, a.access, a.buffer);
        });
        if (same == merged.end()) {
            merged.push_back(std::move(a));
            continue;
        }
        same->requests += a.requests;
        same->sectors += a.sectors;
        same->ideal_sectors += a.ideal_sectors;
        same->wavefronts += a.wavefronts;
        same->ideal_wavefronts += a.ideal_wavefronts;
    }
    accesses = std::move(merged);
}

/// The reason without the access model's own "not predicted: " (reports add it once).
std::string reason_text(std::string reason)
{
    if (const auto at = reason.find(": not predicted: "); at != std::string::npos)
        reason.replace(at, std::string(": not predicted: ").size(), ": ");
    return reason;
}

void add(analysis::PredictedTotals& sum, const analysis::PredictedTotals& t)
{
    sum.global_ld_requests += t.global_ld_requests;
    sum.global_ld_sectors += t.global_ld_sectors;
    sum.global_st_requests += t.global_st_requests;
    sum.global_st_sectors += t.global_st_sectors;
    sum.global_sectors += t.global_sectors;
    sum.global_sectors_ideal += t.global_sectors_ideal;
    sum.shared_wavefronts += t.shared_wavefronts;
    sum.shared_wavefronts_ideal += t.shared_wavefronts_ideal;
}

/// The predicted_* figures of `t`, as the variant's own (`label` empty) or one launch's.
void write_figures(CaseResult& r, const analysis::PredictedTotals& t, const std::string& label)
{
    const auto set = [&](const char* name, double value) {
        r.set_metric(label.empty() ? std::string(name) : launch_metric_name(name, label), value);
    };
    set(metric::predicted_global_ld_requests, t.global_ld_requests);
    set(metric::predicted_global_ld_sectors, t.global_ld_sectors);
    set(metric::predicted_global_st_requests, t.global_st_requests);
    set(metric::predicted_global_st_sectors, t.global_st_sectors);
    set(metric::predicted_global_sectors, t.global_sectors);
    set(metric::predicted_global_sectors_ideal, t.global_sectors_ideal);
    set(metric::predicted_shared_wavefronts, t.shared_wavefronts);
    set(metric::predicted_shared_wavefronts_ideal, t.shared_wavefronts_ideal);
    // As the GPU's derived figures: no ratio without requests.
    if (t.global_ld_requests > 0)
        set(metric::predicted_global_ld_sectors_per_request, t.global_ld_sectors / t.global_ld_requests);
    if (t.global_st_requests > 0)
        set(metric::predicted_global_st_sectors_per_request, t.global_st_sectors / t.global_st_requests);
    set(metric::predicted_excess_global_sectors, t.global_sectors - t.global_sectors_ideal);
    set(metric::predicted_excess_shared_wavefronts, t.shared_wavefronts - t.shared_wavefronts_ideal);
}

/// Worst first: the largest excess, then the most sectors (or wavefronts) per request beyond the ideal.
bool worse(const PredictedAccess& a, const PredictedAccess& b)
{
    if (a.excess() != b.excess()) return a.excess() > b.excess();
    const auto ratio = [](const PredictedAccess& x) {
        const double actual = x.is_shared() ? x.wavefronts : x.sectors;
        const double ideal = x.is_shared() ? x.ideal_wavefronts : x.ideal_sectors;
        return ideal > 0 ? actual / ideal : 0.0;
    };
    if (ratio(a) != ratio(b)) return ratio(a) > ratio(b);
    return std::tie(a.launch, a.file, a.line) < std::tie(b.launch, b.file, b.line);
}

} // namespace

analysis::LaunchShape predicted_launch_shape(const suite::Suite& suite, const suite::VariantSpec& variant,
                                             std::size_t index, const suite::Bindings& point)
{
    const suite::LaunchSpec& spec = variant.launches.at(index);
    const std::string where = variant.launches.size() > 1 ? fmt::format("launches[{}].", index) : "";
    analysis::LaunchShape shape;
    try {
        shape.grid = dimensions(spec.grid, point, where + "grid");
        shape.block = dimensions(spec.block, point, where + "block");
        const std::int64_t shared = spec.shared_bytes.evaluate(point);
        if (shared < 0 || shared > 0x7fffffff)
            throw std::runtime_error(fmt::format("{}shared_bytes = {} is out of range", where, shared));
        shape.dynamic_shared_bytes = static_cast<std::uint32_t>(shared);
        // The runner allocates the buffers the variant's launches pass, in the suite's order
        // (run/case_runner.cxx, prepare): each is a cudaMalloc'ed block, 256-byte aligned.
        std::vector<std::string> allocated;
        for (const auto& b : suite.buffers_of(variant))
            if (suite::uses_buffer(variant, b.name)) allocated.push_back(b.name);
        for (std::size_t ai = 0; ai < spec.args.size(); ++ai) {
            const suite::ArgSpec& a = spec.args[ai];
            analysis::KernelArgument arg;
            if (a.is_buffer()) {
                const auto at = std::find(allocated.begin(), allocated.end(), a.buffer);
                if (at == allocated.end())
                    throw std::runtime_error(fmt::format("{}args[{}]: no buffer {}", where, ai, a.buffer));
                arg.kind = analysis::KernelArgument::Kind::buffer;
                arg.name = a.buffer;
                arg.value = analysis::model_buffer_address(static_cast<std::size_t>(at - allocated.begin()));
            } else {
                arg.name = a.literal ? fmt::format("{}", *a.literal) : a.scalar.text();
                arg.value = scalar_bits(a, point);
            }
            shape.args.push_back(std::move(arg));
        }
    } catch (const suite::ExpressionError& e) {
        throw std::runtime_error(fmt::format("{}: {}", where.empty() ? "launch" : where, e.what()));
    }
    return shape;
}

const analysis::PtxModule* PtxModules::find(const std::string& key, const CompiledModule& module, std::string& why)
{
    const std::lock_guard lock(mutex_);
    auto it = parsed_.find(key);
    if (it == parsed_.end()) {
        Parsed p;
        if (module.ptx.empty()) {
            p.error = "the module has no PTX";
        } else {
            try {
                p.module = std::make_unique<analysis::PtxModule>(analysis::parse_ptx(module.ptx, key + ".ptx"));
            } catch (const std::exception& e) {
                p.error = fmt::format("its PTX does not parse: {}", e.what());
            }
        }
        it = parsed_.emplace(key, std::move(p)).first;
    }
    why = it->second.error;
    return it->second.module.get();
}

namespace {

/// The cache key of one launch's prediction: the module's cache key (what was compiled, from
/// what), the kernel, the launch, where the sources lie, and the model's version (a change of the
/// model misses).
std::string prediction_key(const CompiledModule& module, const std::string& symbol, const analysis::LaunchShape& l)
{
    // The model's version: raise it when what the model predicts changes, so that cached
    // predictions of the old model miss.
    constexpr int model_version = 3;
    std::string text =
        fmt::format("access model {}\n{}\n{}\n{} {} {} {} {} {} {}\n", model_version, module.cache_key, symbol,
                    l.grid[0], l.grid[1], l.grid[2], l.block[0], l.block[1], l.block[2], l.dynamic_shared_bytes);
    for (const auto& a : l.args) text += fmt::format("{} {}\n", static_cast<int>(a.kind), a.value);
    // Where its sources lie: a prediction names their files as the PTX does, so the same kernel in
    // another checkout (another project root) has predictions of its own.
    for (const auto& source : module.sources) text += source.path.string() + "\n";
    return sha256_hex(text);
}

nlohmann::json to_cached(const LaunchPrediction& p)
{
    const analysis::PredictedTotals& t = p.totals;
    return {{"complete", p.complete},
            {"reasons", p.reasons},
            {"totals",
             {t.global_ld_requests, t.global_ld_sectors, t.global_st_requests, t.global_st_sectors, t.global_sectors,
              t.global_sectors_ideal, t.shared_wavefronts, t.shared_wavefronts_ideal}},
            {"accesses", p.accesses}};
}

std::optional<LaunchPrediction> from_cached(const std::string& text)
{
    try {
        const auto j = nlohmann::json::parse(text);
        LaunchPrediction p;
        p.complete = j.at("complete").get<bool>();
        p.reasons = j.at("reasons").get<std::vector<std::string>>();
        const auto t = j.at("totals").get<std::vector<double>>();
        if (t.size() != 8) return std::nullopt;
        p.totals = {t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7]};
        p.accesses = j.at("accesses").get<std::vector<PredictedAccess>>();
        return p;
    } catch (const std::exception&) {
        return std::nullopt; // a damaged entry is a miss
    }
}

} // namespace

LaunchPrediction PtxModules::predict(const std::string& key, const CompiledModule& module, const std::string& symbol,
                                     const analysis::LaunchShape& launch)
{
    std::string memo =
        fmt::format("{}\n{}\n{} {} {} {} {} {} {}", key, symbol, launch.grid[0], launch.grid[1], launch.grid[2],
                    launch.block[0], launch.block[1], launch.block[2], launch.dynamic_shared_bytes);
    for (const auto& a : launch.args) memo += fmt::format("\n{} {}", static_cast<int>(a.kind), a.value);
    {
        const std::lock_guard lock(mutex_);
        if (auto it = predicted_.find(memo); it != predicted_.end()) {
            if (const auto* failed = std::get_if<std::string>(&it->second)) throw std::runtime_error(*failed);
            return std::get<LaunchPrediction>(it->second);
        }
    }
    Outcome outcome;
    try {
        outcome = evaluate(key, module, symbol, launch);
    } catch (const std::exception& e) {
        outcome = std::string(e.what());
    }
    const std::lock_guard lock(mutex_);
    const Outcome& kept = predicted_.emplace(std::move(memo), std::move(outcome)).first->second;
    if (const auto* failed = std::get_if<std::string>(&kept)) throw std::runtime_error(*failed);
    return std::get<LaunchPrediction>(kept);
}

LaunchPrediction PtxModules::evaluate(const std::string& key, const CompiledModule& module, const std::string& symbol,
                                      const analysis::LaunchShape& launch)
{
    // Only a module the compile cache keeps has a key that says what it was compiled from.
    const bool cached = cache_ && !module.cache_key.empty() && !module.sources.empty();
    const fs::path entry =
        cached ? cache_->dir() / "predictions" / (prediction_key(module, symbol, launch) + ".json") : fs::path();
    if (cached) {
        std::ifstream in(entry, std::ios::binary);
        if (in) {
            const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
            if (auto hit = from_cached(text)) return std::move(*hit);
        }
    }
    std::string why;
    const analysis::PtxModule* parsed = find(key, module, why);
    const analysis::PtxKernel* kernel = parsed ? parsed->find(symbol) : nullptr;
    if (!kernel) throw std::runtime_error(why.empty() ? "the kernel is not in the module's PTX" : why);
    const analysis::KernelPrediction k = analysis::predict_accesses(*parsed, *kernel, launch);
    LaunchPrediction p;
    p.complete = k.complete;
    for (const auto& reason : k.reasons) p.reasons.push_back(reason_text(reason));
    p.totals = k.totals;
    for (const auto& a : k.accesses) {
        if (!a.predicted || !(analysis::is_global(a.kind) || analysis::is_shared(a.kind))) continue;
        p.accesses.push_back({.kernel = {},
                              .launch = {},
                              .file = a.file,
                              .line = a.line,
                              .access = analysis::to_string(a.kind),
                              .buffer = buffer_name(a.buffer),
                              .order = a.order,
                              .opcode = a.opcode,
                              .requests = a.requests,
                              .sectors = a.sectors,
                              .ideal_sectors = a.ideal_sectors,
                              .wavefronts = a.wavefronts,
                              .ideal_wavefronts = a.ideal_wavefronts});
    }
    if (cached) {
        try {
            write_file_atomically(entry, to_cached(p).dump());
        } catch (const std::exception&) {
            // The cache is an optimisation: a prediction that cannot be kept is evaluated again.
        }
    }
    return p;
}

namespace {

/// Why a module of `kind` comes without PTX, for the reason a case is not predicted.
std::string why_no_ptx(suite::VariantKind kind)
{
    switch (kind) {
    case suite::VariantKind::triton:
    case suite::VariantKind::cutile:
        // Their cubins keep the PTX they were compiled from (.nv_debug_ptx_txt), read in its place.
        return ": the export's cubin keeps no PTX text (.nv_debug_ptx_txt)";
    case suite::VariantKind::source:
    case suite::VariantKind::module:
    case suite::VariantKind::builtin: return "";
    }
    return "";
}

} // namespace

void predict_ahead(const suite::Suite& suite, const std::vector<suite::Case>& cases,
                   const std::map<std::string, CompiledModule>& modules, PtxModules& ptx)
{
    struct Ask {
        std::string key;
        const CompiledModule* module;
        std::string symbol;
        analysis::LaunchShape launch;
    };
    std::vector<Ask> asks;
    for (const auto& c : cases) {
        const auto& variant = suite.variants[c.variant];
        if (variant.kind == suite::VariantKind::builtin) continue;
        const std::string key = suite::compile_key(variant, c.params);
        const auto module = modules.find(key);
        if (module == modules.end() || module->second.ptx.empty()) continue;
        for (std::size_t li = 0; li < variant.launches.size(); ++li) {
            const auto symbol =
                module->second.lowered_names.find(suite::resolve_entry(variant.launches[li].entry, c.params));
            if (symbol == module->second.lowered_names.end()) continue;
            try {
                asks.push_back(
                    {key, &module->second, symbol->second, predicted_launch_shape(suite, variant, li, c.params)});
            } catch (const std::exception&) {
                // The case's own call says why this launch is not predicted.
            }
        }
    }
    for_each_index(asks.size(), 0, [&](std::size_t i) {
        try {
            ptx.predict(asks[i].key, *asks[i].module, asks[i].symbol, asks[i].launch);
        } catch (const std::exception&) {
            // Kept with the prediction; the case's own call gets it.
        }
    });
}

void add_predicted_accesses(CaseResult& r, const suite::Suite& suite, const suite::VariantSpec& variant,
                            const suite::Bindings& point, const CompiledModule& module, const std::string& module_key,
                            PtxModules& ptx)
{
    if (module.ptx.empty()) {
        r.not_predicted.push_back(!module.no_ptx.empty() ? "its PTX cannot be read: " + module.no_ptx
                                                         : "the module has no PTX" + why_no_ptx(variant.kind));
        return;
    }
    analysis::PredictedTotals sum;
    bool every_launch = true;
    for (std::size_t li = 0; li < variant.launches.size() && li < r.launches.size(); ++li) {
        const CaseLaunch& launch = r.launches[li];
        const std::string kernel = fmt::format("kernel {}", launch.entry);
        const auto symbol = module.lowered_names.find(suite::resolve_entry(variant.launches[li].entry, point));
        LaunchPrediction p;
        try {
            if (symbol == module.lowered_names.end()) throw std::runtime_error("the kernel is not in the module");
            p = ptx.predict(module_key, module, symbol->second, predicted_launch_shape(suite, variant, li, point));
        } catch (const std::exception& e) {
            every_launch = false;
            r.not_predicted.push_back(fmt::format("{}: {}", kernel, e.what()));
            continue;
        }
        for (auto& a : p.accesses) {
            a.kernel = launch.entry;
            a.launch = launch.label;
            a.file = shown_file(a.file, launch, suite.project_root);
            r.predicted_accesses.push_back(std::move(a));
        }
        if (!p.complete) {
            every_launch = false;
            for (const auto& reason : p.reasons)
                r.not_predicted.push_back(kernel + ": " + shown_reason(reason, launch));
            continue;
        }
        if (!launch.label.empty()) write_figures(r, p.totals, launch.label);
        add(sum, p.totals);
    }
    if (every_launch) write_figures(r, sum, "");
    merge_lines(r.predicted_accesses);
    std::stable_sort(r.predicted_accesses.begin(), r.predicted_accesses.end(), worse);
}

} // namespace harness::compile
