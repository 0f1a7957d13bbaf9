#include "harness/compare/sass_gate.hxx"

#include "harness/compare/sass_baseline.hxx"
#include "harness/core/metrics.hxx"

#include <algorithm>
#include <array>
#include <filesystem>
#include <fmt/format.h>
#include <map>

namespace harness::compare {

namespace {

/// The accesses whose width is gated, with their figures from narrow to wide.
struct WidthFamily {
    std::string_view label;
    std::array<std::string_view, 3> metrics; ///< 32, 64, 128 bits
};
constexpr std::array<WidthFamily, 4> width_families = {{
    {"global loads", {"sass_global_ld_32", "sass_global_ld_64", "sass_global_ld_128"}},
    {"global stores", {"sass_global_st_32", "sass_global_st_64", "sass_global_st_128"}},
    {"shared loads", {"sass_shared_ld_32", "sass_shared_ld_64", "sass_shared_ld_128"}},
    {"shared stores", {"sass_shared_st_32", "sass_shared_st_64", "sass_shared_st_128"}},
}};
constexpr std::array<int, 3> widths = {32, 64, 128};

using Counts = std::map<std::string, int>;

int count(const Counts& counts, std::string_view metric)
{
    const auto it = counts.find(std::string(metric));
    return it == counts.end() ? 0 : it->second;
}

/// What matching compares: the gated classes of a line.
Counts signature(const SassLine& line)
{
    Counts gated;
    for (const auto& [metric, n] : line.counts)
        if (is_gated_sass_class(metric)) gated.emplace(metric, n);
    return gated;
}

/// The gated lines of one kernel in one file, in line order.
using Lines = std::vector<const SassLine*>;

/// Pairs of indices of `a` and `b` whose signatures are equal, in order: their longest common
/// subsequence. Lines moved by an edit keep what they hold and so match.
std::vector<std::pair<std::size_t, std::size_t>> matched_lines(const Lines& a, const Lines& b)
{
    const std::size_t n = a.size(), m = b.size();
    if (n * m > 4'000'000) return {}; // no anchors: the kernel is judged as one gap
    std::vector<std::vector<int>> longest(n + 1, std::vector<int>(m + 1, 0));
    std::vector<Counts> sa(n), sb(m);
    for (std::size_t i = 0; i < n; ++i) sa[i] = signature(*a[i]);
    for (std::size_t j = 0; j < m; ++j) sb[j] = signature(*b[j]);
    for (std::size_t i = n; i-- > 0;)
        for (std::size_t j = m; j-- > 0;)
            longest[i][j] = sa[i] == sb[j] ? longest[i + 1][j + 1] + 1 : std::max(longest[i + 1][j], longest[i][j + 1]);
    std::vector<std::pair<std::size_t, std::size_t>> pairs;
    for (std::size_t i = 0, j = 0; i < n && j < m;) {
        if (sa[i] == sb[j]) {
            pairs.emplace_back(i++, j++);
        } else if (longest[i + 1][j] >= longest[i][j + 1]) {
            ++i;
        } else {
            ++j;
        }
    }
    return pairs;
}

std::string where(const SassLine& line)
{
    return fmt::format("{}:{}", line.file, line.line);
}

/// Accesses narrowed within one gap between matched lines: baseline lines `before`, current `after`.
void narrowed_accesses(const Lines& before, const Lines& after, std::vector<SassFinding>& out)
{
    for (const auto& family : width_families) {
        std::array<int, 3> was{}, now{};
        for (std::size_t w = 0; w < widths.size(); ++w) {
            for (const SassLine* l : before) was[w] += count(l->counts, family.metrics[w]);
            for (const SassLine* l : after) now[w] += count(l->counts, family.metrics[w]);
        }
        const auto widest = [](const std::array<int, 3>& c) {
            for (std::size_t w = c.size(); w-- > 0;)
                if (c[w] > 0) return static_cast<int>(w);
            return -1;
        };
        const int wide = widest(was), narrow = widest(now);
        if (wide < 0 || narrow < 0 || narrow >= wide) continue;
        // The line that now holds most of the narrow accesses.
        const SassLine* at = nullptr;
        for (const SassLine* l : after)
            if (!at || count(l->counts, family.metrics[narrow]) > count(at->counts, family.metrics[narrow])) at = l;
        SassFinding f;
        f.metric = std::string(family.metrics[wide]);
        f.kernel = at->kernel;
        f.location = where(*at);
        f.message = fmt::format("{}: {} {}-bit -> {}-bit ({} -> {} instructions)", f.location, family.label,
                                widths[wide], widths[narrow], was[wide], now[narrow]);
        out.push_back(std::move(f));
    }
}

using Metrics = std::vector<std::string_view>;

int total(const std::vector<const SassLine*>& lines, const Metrics& metrics)
{
    int n = 0;
    for (const SassLine* l : lines)
        for (const auto m : metrics) n += count(l->counts, m);
    return n;
}

/// Tensor-core instructions or asynchronous copies that a kernel had and has no more; local
/// memory in a kernel that had none.
void kernel_pathologies(const std::vector<const SassLine*>& before, const std::vector<const SassLine*>& after,
                        std::vector<SassFinding>& out)
{
    struct Gone {
        std::string_view metric;
        Metrics classes;
        std::string_view label;
        Metrics replacement;                ///< what takes their place: FP32 arithmetic, plain loads
        std::string_view replacement_label; ///< of one; "s" makes several
    };
    const Gone gone[] = {
        {"sass_tensor", {"sass_tensor"}, "tensor-core instructions", {"sass_fp32"}, "FP32 instruction"},
        {"sass_async_copies",
         {"sass_async_copies", "sass_tma"},
         "asynchronous copies (LDGSTS, TMA)",
         {"sass_global_ld_32", "sass_global_ld_64", "sass_global_ld_128"},
         "plain load"},
    };
    for (const auto& g : gone) {
        const int was = total(before, g.classes);
        if (was == 0 || total(after, g.classes) > 0) continue;
        const SassLine* first = nullptr;
        for (const SassLine* l : before)
            if (total({l}, g.classes) > 0) {
                first = l;
                break;
            }
        // What took their place: the current line of the same file with the most FP32 arithmetic
        // (tensor cores) or global loads (copies).
        const Metrics& replacement = g.replacement;
        // Tensor-core instructions come from the toolkit's inlined headers (mma.hpp): a line of the
        // project's files stands for them there.
        const bool in_project = !std::filesystem::path(first->file).is_absolute();
        const SassLine* at = nullptr;
        for (const SassLine* l : after)
            if ((in_project ? l->file == first->file : !std::filesystem::path(l->file).is_absolute()) &&
                total({l}, replacement) > 0 && (!at || total({l}, replacement) > total({at}, replacement)))
                at = l;
        SassFinding f;
        f.metric = std::string(g.metric);
        f.kernel = first->kernel;
        f.location = where(at ? *at : *first);
        f.message = fmt::format("{}: {} {} -> none{}", f.location, g.label, was,
                                at ? fmt::format(" ({} {}{} at this line)", total({at}, replacement),
                                                 g.replacement_label, total({at}, replacement) == 1 ? "" : "s")
                                   : fmt::format(" (the kernel had them at line {})", first->line));
        out.push_back(std::move(f));
    }
    if (total(before, {"sass_local_ld", "sass_local_st"}) > 0) return;
    const int loads = total(after, {"sass_local_ld"}), stores = total(after, {"sass_local_st"});
    if (loads + stores == 0) return;
    // The line with the most of them: where the array indexed at run time is, rather than its
    // declaration's zero fill (the first of equals).
    const SassLine* at = nullptr;
    for (const SassLine* l : after)
        if (!at || total({l}, {"sass_local_ld", "sass_local_st"}) > total({at}, {"sass_local_ld", "sass_local_st"}))
            at = l;
    SassFinding f;
    f.metric = loads > 0 ? metric::sass_local_ld : metric::sass_local_st;
    f.kernel = at->kernel;
    f.location = where(*at);
    f.message = fmt::format("{}: local loads and stores none -> {} instructions ({} LDL, {} STL in the kernel)",
                            f.location, total({at}, {"sass_local_ld", "sass_local_st"}), loads, stores);
    out.push_back(std::move(f));
}

} // namespace

std::vector<SassFinding> sass_findings(const std::vector<SassLine>& baseline, const std::vector<SassLine>& current)
{
    std::vector<std::string> kernels;
    std::map<std::string, std::map<std::string, std::pair<Lines, Lines>>> by_kernel; // kernel -> file -> lines
    for (const auto& l : current) {
        if (!by_kernel.contains(l.kernel)) kernels.push_back(l.kernel);
        if (!signature(l).empty()) by_kernel[l.kernel][l.file].second.push_back(&l);
        by_kernel[l.kernel];
    }
    std::map<std::string, std::pair<std::vector<const SassLine*>, std::vector<const SassLine*>>> all;
    for (const auto& l : baseline) {
        if (!by_kernel.contains(l.kernel)) continue; // a kernel no longer launched: nothing to judge
        if (!signature(l).empty()) by_kernel[l.kernel][l.file].first.push_back(&l);
        all[l.kernel].first.push_back(&l);
    }
    for (const auto& l : current) all[l.kernel].second.push_back(&l);

    std::vector<SassFinding> out;
    for (const auto& kernel : kernels) {
        if (all[kernel].first.empty()) continue; // new to the baseline: nothing to compare with
        for (auto& [file, sides] : by_kernel[kernel]) {
            auto& [before, after] = sides;
            const auto by_line = [](const SassLine* a, const SassLine* b) { return a->line < b->line; };
            std::stable_sort(before.begin(), before.end(), by_line);
            std::stable_sort(after.begin(), after.end(), by_line);
            std::size_t i = 0, j = 0;
            auto pairs = matched_lines(before, after);
            pairs.emplace_back(before.size(), after.size());
            for (const auto& [mi, mj] : pairs) {
                narrowed_accesses(Lines(before.begin() + i, before.begin() + mi),
                                  Lines(after.begin() + j, after.begin() + mj), out);
                i = mi + 1;
                j = mj + 1;
            }
        }
        kernel_pathologies(all[kernel].first, all[kernel].second, out);
    }
    return out;
}

void judge_sass(CaseResult& r, const suite::Suite& suite, const suite::VariantSpec& spec,
                const std::vector<SassLine>* baseline, const BaselineFile* exact, const CompareOptions& options)
{
    if (!r.sass_not_measured.empty()) {
        const bool expected = exact && std::any_of(exact->rows.begin(), exact->rows.end(), [&](const BaselineRow& row) {
                                  const auto info = find_metric(row.metric);
                                  return row.variant == r.variant && row.params == r.params_text && info &&
                                         info->collector == Collector::disassembly;
                              });
        if (!expected) return;
        MetricVerdict v;
        v.metric = metric::sass_instructions;
        v.verdict = options.ci ? Verdict::not_measured : Verdict::skipped;
        v.rule = "measured";
        v.message = fmt::format("{}: SASS figures not measured{}: {}", v.metric,
                                options.ci ? " (CI mode: the gate fails)" : "", r.sass_not_measured);
        if (v.verdict == Verdict::skipped) v.not_compared = "SASS figures not measured: " + r.sass_not_measured;
        r.verdicts.push_back(std::move(v));
        return;
    }
    if (!baseline) return;
    for (auto& f : sass_findings(*baseline, r.sass_lines)) {
        if (suite.rule_for(spec, f.metric).kind == suite::RuleKind::ignore) continue;
        MetricVerdict v;
        v.metric = f.metric;
        v.verdict = Verdict::regressed;
        v.value = r.metric(f.metric);
        v.rule = "sass";
        v.location = f.location;
        v.message = fmt::format("{}: {}", f.kernel, f.message);
        // In place of the figure's own verdict (drift, or an exact rule's regression without a
        // line): the same change, now named as a pathology at its line.
        const auto drift = std::find_if(r.verdicts.begin(), r.verdicts.end(), [&](const MetricVerdict& d) {
            return d.metric == f.metric && d.rule != "sass";
        });
        if (drift != r.verdicts.end()) {
            v.baseline = drift->baseline;
            *drift = std::move(v);
        } else {
            r.verdicts.push_back(std::move(v));
        }
    }
}

} // namespace harness::compare
