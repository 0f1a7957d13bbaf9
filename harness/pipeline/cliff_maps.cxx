#include "harness/pipeline/cliff_maps.hxx"

#include "harness/cliff/launch_model.hxx"
#include "harness/cliff/steps.hxx"
#include "harness/core/metrics.hxx"
#include "harness/suite/sweep.hxx"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <tuple>

namespace harness::pipeline {

namespace {

/// The launch of a case at its point, as the launch model reads it. A variant of several launches
/// is drawn by its first: its resources are the most demanding launch's (ResourceTotals).
cliff::LaunchShape launch_shape(const suite::VariantSpec& variant, const CaseResult& r, const suite::ParamSpec& axis)
{
    cliff::LaunchShape shape;
    const suite::Bindings point(r.params.begin(), r.params.end());
    shape.x = static_cast<double>(r.params.at(axis.name));
    if (!variant.launches.empty()) {
        const auto& launch = variant.launches.front();
        for (std::size_t d = 0; d < launch.grid.size() && d < 3; ++d)
            shape.grid[d] = static_cast<std::uint64_t>(launch.grid[d].evaluate(point));
        for (std::size_t d = 0; d < launch.block.size() && d < 3; ++d)
            shape.block[d] = static_cast<std::uint64_t>(launch.block[d].evaluate(point));
    }
    shape.blocks_per_sm = static_cast<int>(r.metric(metric::blocks_per_sm).value_or(0));
    shape.limiter = occupancy_limiter_text(r.occupancy_limiter);
    shape.registers_per_thread = static_cast<int>(r.metric(metric::registers).value_or(0));
    shape.shared_bytes = static_cast<std::uint64_t>(r.metric(metric::static_shared_bytes).value_or(0) +
                                                    r.metric(metric::dynamic_shared_bytes).value_or(0));
    if (axis.pitch) shape.pitch_bytes = static_cast<std::uint64_t>(axis.pitch->evaluate(point));
    return shape;
}

} // namespace

std::vector<CliffMap> static_cliff_maps(const suite::Suite& suite, const harness::RunReport& report)
{
    const suite::ParamSpec* axis = suite.scanned_param();
    if (!axis) return {};
    const char* figure = metric::theoretical_occupancy;
    const auto info = find_metric(figure);

    // The points of each map, in the order the results first name it.
    using MapKey = std::tuple<std::string, std::string, std::string>; // variant, arch, others
    std::map<MapKey, std::size_t> index;
    std::vector<std::pair<CliffMap, std::vector<const CaseResult*>>> maps;
    for (const auto& r : report.results) {
        if (r.status != CaseStatus::passed || !r.metric(figure) || !r.params.contains(axis->name)) continue;
        const suite::Bindings point(r.params.begin(), r.params.end());
        const std::string others = suite::others_text(suite, point, axis->name);
        const auto [it, fresh] = index.emplace(MapKey{r.variant, r.arch, others}, maps.size());
        if (fresh) {
            CliffMap m;
            m.variant = r.variant;
            m.axis = axis->name;
            m.others = others;
            m.other_params = suite::other_params(point, axis->name);
            m.arch = r.arch;
            m.figure = figure;
            m.unit = info ? std::string(info->unit) : "";
            maps.emplace_back(std::move(m), std::vector<const CaseResult*>{});
        }
        maps[it->second].second.push_back(&r);
    }

    std::map<std::string, std::size_t> variant_order;
    for (const auto& v : suite.variants) variant_order.emplace(v.name, variant_order.size());
    std::vector<CliffMap> out;
    for (auto& [map, cases] : maps) {
        const suite::VariantSpec* variant = suite.find_variant(map.variant);
        if (!variant || cases.size() < 2) continue;
        std::sort(cases.begin(), cases.end(), [&](const CaseResult* a, const CaseResult* b) {
            return a->params.at(axis->name) < b->params.at(axis->name);
        });
        std::vector<cliff::LaunchShape> shapes;
        for (const auto* r : cases) {
            map.x.push_back(static_cast<double>(r->params.at(axis->name)));
            map.values.push_back(*r->metric(figure));
            shapes.push_back(launch_shape(*variant, *r, *axis));
        }
        cliff::StepOptions options;
        options.min_depth = suite.cliffs.min_depth;
        options.higher_is_better = true;
        // A cliff is where occupancy drops along the axis; where it recovers is the next level.
        options.worse_only = true;
        map.cliffs = cliff::find_steps(map.x, map.values, {}, options);
        // The static tier knows no SM count: waves are not judged (GpuShape{}).
        for (auto& c : map.cliffs) cliff::explain_cliff(c, shapes, cliff::GpuShape{});
        out.push_back(std::move(map));
    }
    std::stable_sort(out.begin(), out.end(), [&](const CliffMap& a, const CliffMap& b) {
        return variant_order.at(a.variant) < variant_order.at(b.variant);
    });
    return out;
}

void add_static_cliff_maps(harness::RunReport& report, const suite::Suite& suite)
{
    if (report.mode != RunMode::static_tier || !report.cliff_maps.empty() || !suite.scanned_param()) return;
    if (report.shard.sharded()) {
        const std::string note = fmt::format("cliff maps: none for shard {}: it holds only some points along {}; "
                                             "`harness merge --gate` draws them for the whole run",
                                             report.shard.text(), suite.scanned_param()->name);
        if (std::find(report.notes.begin(), report.notes.end(), note) == report.notes.end())
            report.notes.push_back(note);
        return;
    }
    report.cliff_maps = static_cliff_maps(suite, report);
}

} // namespace harness::pipeline
