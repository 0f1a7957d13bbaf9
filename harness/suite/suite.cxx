// The Suite's own queries: buffers, rules and expectations of a variant, verification tolerance.

#include "harness/suite/suite.hxx"

#include "harness/core/enum_names.hxx"
#include "harness/core/metrics.hxx"

#include <algorithm>

namespace harness::suite {

Tolerance verification_tolerance(const BufferSpec& output, ElementType reference_type, const Tolerance& suite_tolerance)
{
    if (output.tolerance) return *output.tolerance;
    if (is_integer(output.type) && is_integer(reference_type)) return {0.0, 0.0};
    Tolerance t = suite_tolerance;
    for (const ElementType type : {output.type, reference_type}) {
        const auto& info = element_type_info(type);
        t.rel = std::max(t.rel, info.tolerance_rel);
        t.abs = std::max(t.abs, info.tolerance_abs);
    }
    return t;
}

const VariantSpec* Suite::find_variant(const std::string& variant_name) const
{
    for (const auto& v : variants)
        if (v.name == variant_name) return &v;
    return nullptr;
}

std::vector<BufferSpec> Suite::buffers_of(const VariantSpec& variant) const
{
    std::vector<BufferSpec> all = buffers;
    for (const auto& b : variant.buffers) {
        auto same = std::find_if(all.begin(), all.end(), [&](const BufferSpec& x) { return x.name == b.name; });
        if (same != all.end())
            *same = b;
        else
            all.push_back(b);
    }
    return all;
}

bool uses_buffer(const VariantSpec& variant, const std::string& buffer)
{
    for (const auto& l : variant.launches)
        for (const auto& a : l.args)
            if (a.buffer == buffer) return true;
    return false;
}

Rule Suite::rule_for(const VariantSpec& variant, const std::string& name) const
{
    const auto [metric, launch] = split_launch_metric(name);
    const auto info = find_metric(metric);
    // A launch's own figure follows its metric's rule where the metric is exact. A noisy one
    // (time, DRAM bytes, achieved occupancy) is kept and shown but not gated launch by launch: the
    // variant's total is gated, and a gate per launch would multiply its false alarms.
    if (!launch.empty() && (!info || info->stability == Stability::noisy)) return parse_rule("ignore");
    for (const auto* specs : {&variant.compare, &compare})
        for (const auto& c : *specs)
            if (c.metric == metric) return c.rule;
    return parse_rule(info ? info->default_rule : "ignore");
}

std::vector<ExpectSpec> Suite::expectations_for(const VariantSpec& variant) const
{
    std::vector<ExpectSpec> all = variant.expect;
    for (const auto& e : expect)
        if (std::none_of(variant.expect.begin(), variant.expect.end(),
                         [&](const ExpectSpec& x) { return x.metric == e.metric; }))
            all.push_back(e);
    return all;
}

const char* cliff_maps_name(CliffMaps maps)
{
    constexpr EnumName<CliffMaps> names[] = {
        {CliffMaps::all, ""}, {CliffMaps::measured, "measured"}, {CliffMaps::exact, "exact"}};
    return enum_name(names, maps, "");
}

const char* variant_kind_key(VariantKind kind)
{
    switch (kind) {
    case VariantKind::source: return "source";
    case VariantKind::module: return "module";
    case VariantKind::triton: return "triton";
    case VariantKind::cutile: return "cutile";
    case VariantKind::builtin: return "builtin";
    }
    return "?";
}

bool runs_module_kernels(VariantKind kind)
{
    switch (kind) {
    case VariantKind::source:
    case VariantKind::module:
    case VariantKind::triton:
    case VariantKind::cutile: return true;
    case VariantKind::builtin: return false;
    }
    return false;
}

bool names_files_as_built(VariantKind kind)
{
    switch (kind) {
    case VariantKind::source: return false;
    case VariantKind::module:
    case VariantKind::triton:
    case VariantKind::cutile:
    case VariantKind::builtin: return true; // no line table: nothing is looked up
    }
    return true;
}

bool is_cliff_expectation(std::string_view name)
{
    return name == cliff_depth_expectation || name == cliff_count_expectation;
}

const ParamSpec* Suite::scanned_param() const
{
    for (const auto& p : params)
        if (p.scanned) return &p;
    return nullptr;
}

} // namespace harness::suite
