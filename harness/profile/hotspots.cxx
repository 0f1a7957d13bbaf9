#include "harness/profile/hotspots.hxx"

#include "harness/core/error.hxx"
#include "harness/core/metrics.hxx"
#include "harness/core/text.hxx"

#include <algorithm>
#include <fmt/format.h>
#include <fstream>
#include <tuple>

namespace harness::profile {

namespace {

// What tells a load from a store and an atomic: the instruction counts of stores, atomics and
// reductions of any memory space, and a load is what has sectors or wavefronts and none of those.
// Counting loads instead instruments every load, the hottest instructions of most kernels: on an
// H100 it made gemm's instrumented runs 19.2 s instead of 17.2 s, naive N=2048 0.86 s instead of
// 0.52 s. A reduction (RED) counts as neither a store nor an atomic (measured), so it has its own.
constexpr const char* stores = "smsp__sass_inst_executed_op_st";
constexpr const char* atomics = "smsp__sass_inst_executed_op_atom";
constexpr const char* reductions = "smsp__sass_inst_executed_op_global_red";

double value(const AttributedInstruction& i, const std::string& metric)
{
    const auto it = i.values.find(metric);
    return it == i.values.end() ? 0.0 : it->second;
}

/// "load", "store" or "atomic" (atomics and reductions).
std::string access_kind(const AttributedInstruction& i)
{
    if (value(i, stores) > 0) return "store";
    if (value(i, atomics) > 0 || value(i, reductions) > 0) return "atomic";
    return "load";
}

/// A figure that ranks source lines (MetricRoles::lines), with the SASS metrics it is counted from
/// per instruction: its actual count and the ideal one (none: the count is all excess).
struct RankedFigure {
    const MetricInfo* row = nullptr;
    std::string actual;
    std::string ideal;
};

/// The SASS metric of the table row named `name`; throws Error(internal) when it is none: a ranked
/// figure must be counted per instruction.
std::string sass_source(std::string_view name, std::string_view ranked)
{
    const auto input = find_metric(name);
    if (!input || input->collector != Collector::sass_metrics)
        throw Error(ErrorKind::internal,
                    fmt::format("metric table: {} ranks source lines from {}, which is no SASS metric", ranked, name));
    return std::string(input->source);
}

std::vector<RankedFigure> ranked_figures()
{
    std::vector<RankedFigure> figures;
    for (const auto& m : metric_table()) {
        if (m.roles.lines.access.empty()) continue;
        RankedFigure f{&m, {}, {}};
        if (m.collector == Collector::sass_metrics) {
            f.actual = std::string(m.source);
        } else {
            // An excess: its formula's two inputs, actual and ideal.
            const Formula& formula = m.roles.formula;
            if (m.collector != Collector::derived || formula.input_count() != 2)
                throw Error(ErrorKind::internal,
                            fmt::format("metric table: {} ranks source lines but is neither a SASS metric nor an "
                                        "excess of two",
                                        m.name));
            f.actual = sass_source(formula.inputs[0], m.name);
            f.ideal = sass_source(formula.inputs[1], m.name);
        }
        figures.push_back(std::move(f));
    }
    return figures;
}

} // namespace

std::vector<std::string> hotspot_sass_metrics()
{
    std::vector<std::string> metrics;
    for (const auto& m : metric_table())
        if (m.collector == Collector::sass_metrics) metrics.emplace_back(m.source);
    for (const char* classifier : {stores, atomics, reductions}) metrics.emplace_back(classifier);
    return metrics;
}

std::vector<Hotspot> rank_hotspots(const std::vector<AttributedInstruction>& instructions, std::size_t per_metric)
{
    // (metric, kernel, file, line, access) -> summed actual and ideal
    using Key = std::tuple<std::string, std::string, std::string, int, std::string>;
    std::map<Key, std::pair<double, double>> lines;
    const std::vector<RankedFigure> figures = ranked_figures();
    for (const auto& i : instructions)
        for (const auto& f : figures) {
            const double actual = value(i, f.actual);
            const double ideal = f.ideal.empty() ? 0.0 : value(i, f.ideal);
            if (actual <= 0 && ideal <= 0) continue;
            const LineRanking& ranking = f.row->roles.lines;
            const std::string access = ranking.by_instruction_kind ? std::string(ranking.access) + " " + access_kind(i)
                                                                   : std::string(ranking.access);
            auto& sum = lines[{std::string(f.row->name), i.kernel, i.file, i.line, access}];
            sum.first += actual;
            sum.second += ideal;
        }

    std::map<std::string, std::vector<Hotspot>> by_metric;
    for (const auto& [key, sum] : lines) {
        const auto& [metric, kernel, file, line, access] = key;
        Hotspot h;
        h.metric = metric;
        h.access = access;
        h.kernel = kernel_name(kernel); // as the source writes it, not the mangled symbol
        h.file = file;
        h.line = line;
        h.actual = sum.first;
        h.ideal = sum.second;
        h.excess = sum.first - sum.second;
        if (h.excess <= 0) continue;
        by_metric[metric].push_back(std::move(h));
    }
    std::vector<Hotspot> out;
    for (auto& [metric, list] : by_metric) {
        std::stable_sort(list.begin(), list.end(),
                         [](const Hotspot& a, const Hotspot& b) { return a.excess > b.excess; });
        if (list.size() > per_metric) list.resize(per_metric);
        out.insert(out.end(), list.begin(), list.end());
    }
    std::stable_sort(out.begin(), out.end(), [](const Hotspot& a, const Hotspot& b) { return a.excess > b.excess; });
    return out;
}

void attach_snippet(Hotspot& h, const std::filesystem::path& file, int context)
{
    if (h.line <= 0) return;
    std::ifstream in(file);
    if (!in) return;
    const int first = std::max(1, h.line - context);
    const int last = h.line + context;
    std::string text;
    for (int n = 1; n <= last && std::getline(in, text); ++n) {
        if (n < first) continue;
        if (h.snippet.empty()) h.snippet_first_line = n;
        h.snippet.push_back(text);
    }
}

} // namespace harness::profile
