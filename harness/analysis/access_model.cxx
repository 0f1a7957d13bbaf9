#include "harness/analysis/access_model.hxx"

#include "harness/analysis/warp_evaluator.hxx"
#include "harness/core/error.hxx"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <set>

namespace harness::analysis {

namespace {

/// A block index along one grid dimension that stands for `weight` blocks of its `category`:
/// the first and the last block are their own; the interior ones are represented by three.
struct DimensionSample {
    std::uint32_t index = 0;
    double weight = 1;
    int category = 0;
};

std::vector<DimensionSample> dimension_samples(std::uint32_t extent)
{
    std::vector<DimensionSample> samples;
    if (extent <= 6) {
        for (std::uint32_t i = 0; i < extent; ++i) samples.push_back({i, 1, static_cast<int>(i)});
        return samples;
    }
    const double interior = (extent - 2) / 3.0;
    samples.push_back({0, 1, 0});
    for (const std::uint32_t i : {1u, extent / 2, extent - 2}) samples.push_back({i, interior, 1});
    samples.push_back({extent - 1, 1, 2});
    return samples;
}

std::string describe_samples(const std::vector<DimensionSample>& samples)
{
    std::string out;
    for (const auto& s : samples) out += (out.empty() ? "" : ", ") + std::to_string(s.index);
    return out;
}

void add_totals(PredictedTotals& t, const AccessPrediction& a)
{
    switch (a.kind) {
    case AccessKind::global_load:
        t.global_ld_requests += a.requests;
        t.global_ld_sectors += a.sectors;
        break;
    case AccessKind::global_store:
        t.global_st_requests += a.requests;
        t.global_st_sectors += a.sectors;
        break;
    default: break;
    }
    if (is_global(a.kind)) {
        t.global_sectors += a.sectors;
        t.global_sectors_ideal += a.ideal_sectors;
    }
    if (is_shared(a.kind)) {
        t.shared_wavefronts += a.wavefronts;
        t.shared_wavefronts_ideal += a.ideal_wavefronts;
    }
}

/// The figures of the sampled blocks, weighted, onto the kernel's accesses; their totals.
void finish(KernelPrediction& p, const std::vector<AccessTally>& any, const std::vector<std::vector<double>>& sums)
{
    std::map<std::pair<AccessKind, std::string>, int> rank;
    for (std::size_t i = 0; i < p.accesses.size(); ++i) {
        auto& a = p.accesses[i];
        const AccessTally& t = any[i];
        if (t.kind != AccessKind::other) a.kind = t.kind;
        if (!t.buffer.empty()) a.buffer = t.buffer;
        if (t.unpredicted && a.predicted) {
            a.predicted = false;
            a.reason = t.reason;
        }
        a.requests = sums[i][0];
        a.sectors = sums[i][1];
        a.ideal_sectors = sums[i][2];
        a.wavefronts = sums[i][3];
        a.ideal_wavefronts = sums[i][4];
        a.order = rank[{a.kind, a.buffer}]++;
        if (!a.predicted) {
            p.complete = false;
            const std::string where =
                a.file.empty() ? fmt::format("PTX line {}", a.ptx_line) : fmt::format("{}:{}", a.file, a.line);
            p.reasons.push_back(fmt::format("{} {}{}: not predicted: {}", where, to_string(a.kind),
                                            a.buffer.empty() ? "" : " " + a.buffer + "[]", a.reason));
            continue;
        }
        if (a.kind == AccessKind::local || a.kind == AccessKind::other) continue;
        add_totals(p.totals, a);
    }
}

/// One sampled warp's tally added to its block's: figures summed, the first kind and buffer kept, an
/// access that could not be predicted in any warp not predicted.
void add_warp(AccessTally& block, const AccessTally& warp)
{
    block.requests += warp.requests;
    block.sectors += warp.sectors;
    block.ideal_sectors += warp.ideal_sectors;
    block.wavefronts += warp.wavefronts;
    block.ideal_wavefronts += warp.ideal_wavefronts;
    if (block.kind == AccessKind::other && warp.kind != AccessKind::other) {
        block.kind = warp.kind;
        block.buffer = warp.buffer;
    } else if (warp.kind != AccessKind::other && (warp.kind != block.kind || warp.buffer != block.buffer)) {
        block.unpredicted = true;
        if (block.reason.empty()) block.reason = "its address points into different buffers in different warps";
    }
    if (warp.unpredicted && !block.unpredicted) {
        block.unpredicted = true;
        block.reason = warp.reason;
    }
}

/// After the first block: true, with the reason in `p`, when the blocks sampled would need more
/// than half as much again as the budget at the first block's cost, so that a kernel that cannot
/// be predicted does not spend the whole budget to find out.
bool past_budget(KernelPrediction& p, std::uint64_t sampled_blocks, const EvaluationBudget& budget)
{
    if (sampled_blocks <= 1) return false;
    const double need = static_cast<double>(p.instructions_evaluated) * static_cast<double>(sampled_blocks);
    if (need <= 1.5 * static_cast<double>(budget.instructions_per_kernel)) return false;
    p.complete = false;
    p.reasons.push_back(fmt::format("the {} blocks sampled would need about {:.1f} million instructions at the "
                                    "first one's {}, past the budget of {}",
                                    sampled_blocks, need / 1e6, p.instructions_evaluated,
                                    budget.instructions_per_kernel));
    return true;
}

/// The sampled warps of one block, or every warp of it when warps that stand for one another
/// differ (an edge block's partial rows): `block`, the sums of the warps evaluated, and `weighted`,
/// their figures weighted to stand for every warp. False when a warp was not followed to its end,
/// with the reason in `p`.
bool evaluate_block(WarpEvaluator& evaluator, const std::array<std::uint32_t, 3>& at, std::uint32_t warps,
                    const std::vector<DimensionSample>& warp_samples, const EvaluationBudget& budget,
                    KernelPrediction& p, std::vector<AccessTally>& block, std::vector<std::vector<double>>& weighted)
{
    const std::size_t n = block.size();
    const auto run = [&](std::uint32_t w, std::vector<AccessTally>& warp) {
        const std::uint64_t left = budget.instructions_per_kernel > p.instructions_evaluated
                                       ? budget.instructions_per_kernel - p.instructions_evaluated
                                       : 0;
        const WarpOutcome o = evaluator.run(at, w, warp, std::min(budget.instructions_per_warp, left));
        ++p.warps_evaluated;
        p.instructions_evaluated += o.instructions;
        p.instructions_extrapolated += o.extrapolated;
        if (o.followed && p.instructions_evaluated <= budget.instructions_per_kernel) return true;
        const std::string reason = o.followed ? fmt::format("the kernel ran past the budget of {} instructions",
                                                            budget.instructions_per_kernel)
                                              : o.reason;
        p.complete = false;
        p.reasons.push_back(fmt::format("warp {} of block ({}, {}, {}): {}", w, at[0], at[1], at[2], reason));
        return false;
    };
    const auto add = [&](const std::vector<AccessTally>& warp, double weight) {
        for (std::size_t i = 0; i < n; ++i) {
            add_warp(block[i], warp[i]);
            const AccessTally& t = warp[i];
            weighted[i][0] += weight * static_cast<double>(t.requests);
            weighted[i][1] += weight * static_cast<double>(t.sectors);
            weighted[i][2] += weight * static_cast<double>(t.ideal_sectors);
            weighted[i][3] += weight * static_cast<double>(t.wavefronts);
            weighted[i][4] += weight * static_cast<double>(t.ideal_wavefronts);
        }
    };
    std::vector<std::vector<AccessTally>> sampled;
    std::map<int, std::size_t> first_of_category;
    bool agree = true;
    for (const auto& ws : warp_samples) {
        sampled.emplace_back(n);
        if (!run(ws.index, sampled.back())) return false;
        const auto [it, added] = first_of_category.try_emplace(ws.category, sampled.size() - 1);
        if (!added && sampled[it->second] != sampled.back()) agree = false;
    }
    if (agree) {
        for (std::size_t k = 0; k < sampled.size(); ++k) add(sampled[k], warp_samples[k].weight);
        return true;
    }
    std::set<std::uint32_t> done;
    for (std::size_t k = 0; k < sampled.size(); ++k) {
        add(sampled[k], 1);
        done.insert(warp_samples[k].index);
    }
    for (std::uint32_t w = 0; w < warps; ++w) {
        if (done.count(w) != 0) continue;
        std::vector<AccessTally> warp(n);
        if (!run(w, warp)) return false;
        add(warp, 1);
    }
    return true;
}

} // namespace

KernelPrediction predict_accesses(const PtxModule& module, const PtxKernel& kernel, const LaunchShape& launch,
                                  const EvaluationBudget& budget)
{
    if (launch.args.size() != kernel.params.size())
        throw Error(ErrorKind::bad_input,
                    fmt::format("{}: kernel {} takes {} parameters, the launch passes {}", module.origin, kernel.name,
                                kernel.params.size(), launch.args.size()));
    for (int d = 0; d < 3; ++d)
        if (launch.grid[d] == 0 || launch.block[d] == 0)
            throw Error(ErrorKind::bad_input,
                        fmt::format("{}: kernel {}: a launch of grid {}x{}x{}, block {}x{}x{}", module.origin,
                                    kernel.name, launch.grid[0], launch.grid[1], launch.grid[2], launch.block[0],
                                    launch.block[1], launch.block[2]));
    KernelPrediction p;
    p.kernel = kernel.name;
    WarpEvaluator evaluator(module, kernel, launch, budget);
    p.accesses = evaluator.accesses();
    const std::size_t n = p.accesses.size();
    std::vector<AccessTally> any(n);
    std::vector<std::vector<double>> sums(n, std::vector<double>(5, 0.0));
    if (!evaluator.unsupported().empty()) {
        p.complete = false;
        p.reasons.push_back(evaluator.unsupported());
        for (auto& a : p.accesses) a.predicted = false, a.reason = evaluator.unsupported();
        finish(p, any, sums);
        return p;
    }

    const std::array<std::vector<DimensionSample>, 3> samples = {
        dimension_samples(launch.grid[0]), dimension_samples(launch.grid[1]), dimension_samples(launch.grid[2])};
    const std::uint64_t threads = std::uint64_t{launch.block[0]} * launch.block[1] * launch.block[2];
    const auto warps = static_cast<std::uint32_t>((threads + 31) / 32);
    // The warps of a block are sampled as the blocks of a grid dimension are: the first and the last
    // (perhaps partial) stand for themselves, three interior ones for the rest.
    const std::vector<DimensionSample> warp_samples = dimension_samples(warps);
    // Blocks of one category (first, interior or last along each dimension) must agree for the
    // scaled totals to be exact.
    std::map<std::array<int, 3>, std::vector<AccessTally>> first_of_category;
    std::uint64_t blocks = 0;
    for (const auto& z : samples[2])
        for (const auto& y : samples[1])
            for (const auto& x : samples[0]) {
                std::vector<AccessTally> block(n);
                std::vector<std::vector<double>> weighted(n, std::vector<double>(5, 0.0));
                const std::uint64_t sampled_blocks = samples[0].size() * samples[1].size() * samples[2].size();
                if (!evaluate_block(evaluator, {x.index, y.index, z.index}, warps, warp_samples, budget, p, block,
                                    weighted) ||
                    past_budget(p, blocks == 0 ? sampled_blocks : 0, budget)) {
                    for (auto& a : p.accesses)
                        if (a.predicted) a.predicted = false, a.reason = "the warps were not followed to their end";
                    finish(p, any, sums);
                    return p;
                }
                ++blocks;
                const double weight = x.weight * y.weight * z.weight;
                for (std::size_t i = 0; i < n; ++i) {
                    const AccessTally& t = block[i];
                    for (std::size_t f = 0; f < 5; ++f) sums[i][f] += weight * weighted[i][f];
                    if (any[i].kind == AccessKind::other && t.kind != AccessKind::other) {
                        any[i].kind = t.kind;
                        any[i].buffer = t.buffer;
                    } else if (t.kind != AccessKind::other && (t.kind != any[i].kind || t.buffer != any[i].buffer)) {
                        any[i].unpredicted = true;
                        any[i].reason = "its address points into different buffers in different blocks";
                    }
                    if (t.unpredicted && !any[i].unpredicted) {
                        any[i].unpredicted = true;
                        any[i].reason = t.reason;
                    }
                }
                const auto [it, added] = first_of_category.try_emplace({x.category, y.category, z.category}, block);
                if (!added && it->second != block) p.exact = false;
            }
    // Equal samples scaled by weights of thirds: whole numbers, up to rounding.
    if (p.exact)
        for (auto& figures : sums)
            for (auto& f : figures) f = std::round(f);
    p.sampling = fmt::format(
        "{} of {} blocks (x {}; y {}; z {}), warps {} of {} of each (all of a block whose warps differ): {} warps, {} "
        "instructions{}; "
        "interior blocks {}",
        blocks, std::uint64_t{launch.grid[0]} * launch.grid[1] * launch.grid[2], describe_samples(samples[0]),
        describe_samples(samples[1]), describe_samples(samples[2]), describe_samples(warp_samples), warps,
        p.warps_evaluated, p.instructions_evaluated,
        p.instructions_extrapolated == 0
            ? ""
            : fmt::format(" and {} more in loop iterations that repeat, skipped", p.instructions_extrapolated),
        p.exact ? "agree, so the totals are exact" : "differ, so the totals are their mean, scaled");
    finish(p, any, sums);
    return p;
}

} // namespace harness::analysis
