#include "harness/compile/static_tier.hxx"

#include "harness/compile/compile_suite.hxx"
#include "harness/compile/cubin_info.hxx"
#include "harness/compile/kernel_arguments.hxx"
#include "harness/compile/launch_bounds.hxx"
#include "harness/compile/launch_resources.hxx"
#include "harness/compile/occupancy.hxx"
#include "harness/compile/predicted_accesses.hxx"
#include "harness/compile/sass_case_code.hxx"
#include "harness/compile/sass_figures.hxx"
#include "harness/core/metrics.hxx"
#include "harness/core/parallel.hxx"
#include "harness/suite/compile_params.hxx"
#include "harness/suite/sweep.hxx"

#include <algorithm>
#include <fmt/format.h>

namespace harness::compile {

namespace {

/// Static figures of one launch at one point; throws std::runtime_error for bad geometry.
struct LaunchFigures {
    KernelResources kernel;
    Occupancy occupancy;
    int dynamic_shared = 0;
};

LaunchFigures launch_figures(const ArchLimits& limits, const KernelResources& kernel, const suite::LaunchSpec& launch,
                             const suite::Bindings& params)
{
    std::int64_t threads = 1;
    for (const auto& dim : launch.block) threads *= dim.evaluate(params);
    const std::int64_t dynamic = launch.shared_bytes.evaluate(params);
    if (threads < 1 || threads > limits.max_threads_per_block)
        throw std::runtime_error(fmt::format("block of {} threads for {}", threads, launch.entry));
    OccupancyOptions options;
    options.barriers_per_block = kernel.barriers;
    options.shared_opt_in = dynamic + kernel.static_shared_bytes > 48 * 1024;
    LaunchFigures f{kernel,
                    theoretical_occupancy(limits, static_cast<int>(threads), kernel.registers,
                                          kernel.static_shared_bytes + static_cast<int>(dynamic), options),
                    static_cast<int>(dynamic)};
    return f;
}

} // namespace

std::vector<CaseResult> run_static_tier(const suite::Suite& suite, const std::vector<std::string>& archs,
                                        const CompileCache* cache)
{
    return run_static_tier(suite, suite::expand_cases(suite), archs, cache);
}

std::vector<CaseResult> run_static_tier(const suite::Suite& suite, const std::vector<suite::Case>& cases,
                                        const std::vector<std::string>& archs, const CompileCache* cache,
                                        bool predict_accesses, std::map<std::string, SassCodeFile>* sass_code,
                                        bool count_sass)
{
    std::vector<CaseResult> results;
    for (const auto& arch : archs) {
        const ArchLimits& limits = arch_limits(arch);
        const SuiteModules compiled = compile_suite(suite, cases, arch, cache);
        check_kernel_arguments(suite, compiled);
        check_launch_bounds(suite, cases, compiled);
        PtxModules ptx(cache);
        std::map<std::string, CubinInfo> infos;
        std::map<std::string, std::string> read_errors;
        std::map<std::string, ModuleSass> sass;
        SassCodeFile* code = nullptr;
        if (sass_code) {
            code = &(*sass_code)[arch];
            code->suite = suite.name;
            code->arch = arch;
        }
        if (count_sass) {
            // Each disassembly is a process of its own (nvdisasm): as many at once as there are cores.
            std::vector<const std::pair<const std::string, CompiledModule>*> modules;
            for (const auto& entry : compiled.modules) modules.push_back(&entry);
            std::vector<ModuleSass> disassembled(modules.size());
            for_each_index(modules.size(), 0, [&](std::size_t m) {
                const auto& [name, module] = *modules[m];
                disassembled[m] = module_sass(module, fmt::format("the {} cubin of {}", arch, name), cache);
            });
            for (std::size_t m = 0; m < modules.size(); ++m)
                sass.emplace(modules[m]->first, std::move(disassembled[m]));
        }
        for (const auto& [name, module] : compiled.modules) {
            try {
                CubinInfo info = read_cubin_info(module.cubin);
                merge_ptxas_log(info, parse_ptxas_log(module.log));
                infos.emplace(name, std::move(info));
            } catch (const std::exception& e) {
                read_errors.emplace(name, e.what());
            }
        }
        if (predict_accesses) predict_ahead(suite, cases, compiled.modules, ptx);
        for (const auto& c : cases) {
            const auto& variant = suite.variants[c.variant];
            CaseResult r;
            r.suite = suite.name;
            r.variant = variant.name;
            r.arch = arch;
            r.params = {c.params.begin(), c.params.end()};
            r.params_text = c.params_text;
            r.point = c.point;
            r.launches = suite::case_launches(suite, variant, c.params);
            switch (variant.kind) {
            case suite::VariantKind::builtin:
                r.status = CaseStatus::skipped;
                r.message = "built-in library call: no static figures";
                results.push_back(std::move(r));
                continue;
            case suite::VariantKind::source:
            case suite::VariantKind::module:
            case suite::VariantKind::triton:
            case suite::VariantKind::cutile: break; // its cubin, read below
            }
            const std::string key = suite::compile_key(variant, c.params);
            if (auto e = compiled.errors.find(key); e != compiled.errors.end()) {
                r.status = CaseStatus::compile_error;
                r.message = e->second;
                results.push_back(std::move(r));
                continue;
            }
            if (auto e = read_errors.find(key); e != read_errors.end()) {
                r.status = CaseStatus::compile_error;
                r.message = "cannot read the cubin: " + e->second;
                results.push_back(std::move(r));
                continue;
            }
            const CubinInfo& info = infos.at(key);
            const CompiledModule& module = compiled.modules.at(key);
            try {
                ResourceTotals totals;
                const std::vector<KernelResources> reported = parse_ptxas_log(module.log);
                for (std::size_t li = 0; li < variant.launches.size(); ++li) {
                    const auto& launch = variant.launches[li];
                    const KernelResources& k =
                        info.kernel(module.lowered_names.at(suite::resolve_entry(launch.entry, c.params)));
                    // ptxas' report states spills, for the kernels it names; a module file comes
                    // without one, and a report without this kernel leaves them unmeasured.
                    const bool from_log = std::any_of(reported.begin(), reported.end(),
                                                      [&](const KernelResources& r) { return r.name == k.name; });
                    const LaunchFigures f = launch_figures(limits, k, launch, c.params);
                    totals.add({.registers = k.registers,
                                .static_shared_bytes = k.static_shared_bytes,
                                .dynamic_shared_bytes = f.dynamic_shared,
                                .local_bytes = k.local_bytes,
                                .barriers = k.barriers,
                                .spill_store_bytes = from_log ? k.spill_store_bytes.value_or(0) : std::optional<int>(),
                                .spill_load_bytes = from_log ? k.spill_load_bytes.value_or(0) : std::optional<int>(),
                                .blocks_per_sm = f.occupancy.blocks_per_sm,
                                .occupancy = f.occupancy.occupancy,
                                .limiter = f.occupancy.limiter,
                                .impossible_reason = f.occupancy.impossible_reason},
                               r.launches[li].label);
                }
                totals.write(r);
                if (predict_accesses) add_predicted_accesses(r, suite, variant, c.params, module, key, ptx);
                const auto& worst = *totals.least_occupied();
                r.status = CaseStatus::passed;
                if (worst.blocks_per_sm == 0) {
                    r.status = CaseStatus::launch_error;
                    r.message = "cannot launch: " + worst.impossible_reason;
                }
                if (count_sass) {
                    add_case_sass(r, suite, variant, c.params, module, sass.at(key));
                    if (code && r.status == CaseStatus::passed)
                        if (auto c_code = add_case_code(*code, suite, variant, c.params, arch, module, sass.at(key));
                            !c_code.hash.empty())
                            code->cases[{r.variant, r.params_text}].first = std::move(c_code);
                }
            } catch (const std::exception& e) {
                r.status = CaseStatus::launch_error;
                r.message = e.what();
            }
            results.push_back(std::move(r));
        }
    }
    return results;
}

} // namespace harness::compile
