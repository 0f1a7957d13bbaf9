#include "harness/compile/launch_bounds.hxx"

#include "harness/core/error.hxx"
#include "harness/core/text.hxx"
#include "harness/suite/compile_params.hxx"

#include <fmt/format.h>
#include <map>
#include <tuple>

namespace harness::compile {

namespace {

std::string dims_text(const std::array<int, 3>& dims)
{
    return fmt::format("{}, {}, {}", dims[0], dims[1], dims[2]);
}

std::string dims_text(const std::array<std::int64_t, 3>& dims)
{
    return fmt::format("{} x {} x {}", dims[0], dims[1], dims[2]);
}

/// The block of a launch at a point, x, y, z (dimensions not written are 1).
std::array<std::int64_t, 3> block_at(const suite::LaunchSpec& launch, const suite::Bindings& params)
{
    std::array<std::int64_t, 3> block{1, 1, 1};
    for (std::size_t i = 0; i < launch.block.size() && i < block.size(); ++i)
        block[i] = launch.block[i].evaluate(params);
    return block;
}

/// One block that does not fit, with the sweep points it is launched at.
struct Misfit {
    std::string problem;
    std::string first_point;
    std::size_t points = 0;
};

} // namespace

std::optional<std::string> launch_bound_problem(const KernelResources& kernel, const std::string& entry,
                                                const std::array<std::int64_t, 3>& block)
{
    const std::int64_t threads = block[0] * block[1] * block[2];
    if (const auto& required = kernel.required_threads;
        required && (block[0] != (*required)[0] || block[1] != (*required)[1] || block[2] != (*required)[2]))
        return fmt::format("a block of {} is not the one kernel {} takes: it requires blocks of exactly {} x {} x {} "
                           "threads (.reqntid {}), and the driver refuses any other",
                           dims_text(block), entry, (*required)[0], (*required)[1], (*required)[2],
                           dims_text(*required));
    if (const auto& maximum = kernel.max_threads) {
        const std::int64_t allowed = std::int64_t{(*maximum)[0]} * (*maximum)[1] * (*maximum)[2];
        if (threads > allowed)
            return fmt::format("a block of {} threads ({}) is more than kernel {} allows: its __launch_bounds__ "
                               "declares at most {} threads a block (.maxntid {}), and the driver refuses the launch; "
                               "launch at most {} threads, or raise the bound in the kernel",
                               threads, dims_text(block), entry, allowed, dims_text(*maximum), allowed);
    }
    return std::nullopt;
}

void check_launch_bounds(const suite::Suite& suite, const std::vector<suite::Case>& cases, const SuiteModules& compiled)
{
    std::map<std::string, CubinInfo> infos;
    // By (variant, launch, block), in the order first met: each misfit once, with its points counted.
    std::map<std::tuple<std::size_t, std::size_t, std::array<std::int64_t, 3>>, std::size_t> seen;
    std::vector<std::pair<const suite::LaunchSpec*, Misfit>> misfits;
    std::vector<std::string> fields;
    for (const auto& c : cases) {
        const suite::VariantSpec& variant = suite.variants[c.variant];
        switch (variant.kind) {
        case suite::VariantKind::builtin: continue; // a library's kernels, launched as it chooses
        case suite::VariantKind::source:
        case suite::VariantKind::module:
        case suite::VariantKind::triton:
        case suite::VariantKind::cutile: break;
        }
        const std::string key = suite::compile_key(variant, c.params);
        const auto module = compiled.modules.find(key);
        if (module == compiled.modules.end()) continue;
        auto info = infos.find(key);
        if (info == infos.end()) {
            try {
                info = infos.emplace(key, read_cubin_info(module->second.cubin)).first;
            } catch (const std::exception&) {
                continue; // reported where the cubin's resources are read, or when the module is loaded
            }
        }
        for (std::size_t li = 0; li < variant.launches.size(); ++li) {
            const suite::LaunchSpec& launch = variant.launches[li];
            const std::string entry = suite::resolve_entry(launch.entry, c.params);
            const auto lowered = module->second.lowered_names.find(entry);
            const KernelResources* kernel =
                info->second.find(lowered == module->second.lowered_names.end() ? entry : lowered->second);
            if (!kernel) continue;
            const auto block = block_at(launch, c.params);
            const auto problem = launch_bound_problem(*kernel, entry, block);
            if (!problem) continue;
            const auto [at, fresh] = seen.try_emplace({c.variant, li, block}, misfits.size());
            if (fresh) {
                misfits.push_back({&launch, {*problem, c.params_text, 0}});
                fields.push_back(variant.launches.size() == 1
                                     ? fmt::format("variants.{}.block", variant.name)
                                     : fmt::format("variants.{}.launches[{}].block", variant.name, li));
            }
            ++misfits[at->second].second.points;
        }
    }
    if (misfits.empty()) return;
    std::vector<std::string> problems;
    for (std::size_t i = 0; i < misfits.size(); ++i) {
        const auto& [launch, misfit] = misfits[i];
        const suite::SourceLocation at = launch->block_where.line > 0 ? launch->block_where : launch->where;
        const std::string points =
            misfit.first_point.empty() ? ""
            : misfit.points > 1 ? fmt::format("at {} (and {} more points): ", misfit.first_point, misfit.points - 1)
                                : fmt::format("at {}: ", misfit.first_point);
        problems.push_back(
            InputError(suite.file.string(), at.line, at.column, fields[i], points + misfit.problem).what());
    }
    throw Error(ErrorKind::bad_input, join(problems, "\n"));
}

} // namespace harness::compile
