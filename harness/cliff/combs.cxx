#include "harness/cliff/combs.hxx"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <numeric>
#include <set>

// Why residue classes.
//
// Rows of W floats packed at a pitch of W x 4 bytes start on a sector at every 8th width only;
// the others straddle one sector more per row, by how far they are from alignment (W % 8 == 4
// less than W % 4 == 2, less than an odd W). So where a pitch starts to grow with the axis, the
// series turns from a level into a comb of four levels. find_steps fits lines to a dozen points
// either side of each gap and takes the series' own scatter for its noise: the comb's spread is
// that scatter, its aligned points pull the levels back, and a step of +24 % at the odd widths
// passes for noise (an H100, rows padded to 448 floats, showed no cliff at 448 -> 449). Every
// point of one residue of the period, though, has the same alignment: each class alone is a level
// that steps to its comb level, and find_steps finds that step against the class's own scatter.
//
// One alignment change steps in every class that it misaligns (7 of 8 at 4 bytes per point, at
// least the odd half for any element size), so a step needs half the classes or more; each
// bracketing the edge between its own points a period apart: brackets that share a gap are one
// step, placed between the last point before it and the first after it that any class saw.
// Where find_steps found a cliff over the whole series, it stands: the comb finder adds only what
// the whole series hides, so maps (and their baselines) where it finds the step keep it as it was.
// Only axes with a pitch are split: each class is a test of its own, and their false steps add up.

namespace harness::cliff {

namespace {

/// A point's index along the axis: its distance from the first point in axis steps (the smallest
/// distance between adjacent points), so that a point left out does not shift the residues of the
/// points after it.
class AxisIndex {
public:
    explicit AxisIndex(const std::vector<double>& x)
    {
        if (x.empty()) return;
        first_ = x.front();
        for (std::size_t i = 1; i < x.size(); ++i)
            if (x[i] > x[i - 1]) step_ = std::min(step_, x[i] - x[i - 1]);
        if (!std::isfinite(step_)) step_ = 1.0;
    }

    std::size_t operator()(double x) const { return static_cast<std::size_t>(std::llround((x - first_) / step_)); }
    /// Whether `a` and `b` are one axis step apart.
    bool adjacent(double a, double b) const { return (*this)(b) == (*this)(a) + 1; }

private:
    double first_ = 0;
    double step_ = std::numeric_limits<double>::infinity();
};

/// How many points lie between two spans of points (0 where they share a point or a gap).
std::size_t points_apart(std::size_t a_first, std::size_t a_last, std::size_t b_first, std::size_t b_last)
{
    const std::size_t first = std::max(a_first, b_first), last = std::min(a_last, b_last);
    return first > last ? first - last : 0;
}

/// A step of one residue class, by its points' indices along the axis.
struct ClassStep {
    std::size_t residue = 0, before = 0, after = 0;
    Cliff cliff;
};

/// One step over the whole axis from class steps whose brackets share a gap.
CombStep merged(const std::vector<ClassStep>& steps, std::size_t period)
{
    const auto first_after = std::min_element(
        steps.begin(), steps.end(), [](const auto& a, const auto& b) { return a.cliff.x_after < b.cliff.x_after; });
    const auto deepest = std::max_element(steps.begin(), steps.end(), [](const auto& a, const auto& b) {
        return std::fabs(a.cliff.depth) < std::fabs(b.cliff.depth);
    });
    CombStep out;
    out.cliff = deepest->cliff;
    out.cliff.x_after = first_after->cliff.x_after;
    out.cliff.x_before = first_after->cliff.x_before;
    std::set<std::size_t> residues;
    for (const auto& s : steps) {
        residues.insert(s.residue);
        if (s.cliff.x_before < out.cliff.x_after) out.cliff.x_before = std::max(out.cliff.x_before, s.cliff.x_before);
    }
    out.residues = residues.size();
    out.period = period;
    return out;
}

} // namespace

std::size_t comb_period(const std::vector<LaunchShape>& shapes)
{
    std::vector<double> x;
    for (const auto& s : shapes) x.push_back(s.x);
    const AxisIndex index(x);
    std::uint64_t sectors_gcd = sector_bytes;
    for (std::size_t i = 1; i < shapes.size(); ++i) {
        const auto& a = shapes[i - 1].pitch_bytes;
        const auto& b = shapes[i].pitch_bytes;
        if (!a || !b || *a == *b || !index.adjacent(shapes[i - 1].x, shapes[i].x)) continue;
        sectors_gcd = std::gcd(sectors_gcd, *a > *b ? *a - *b : *b - *a);
    }
    return static_cast<std::size_t>(sector_bytes / sectors_gcd);
}

std::vector<CombStep> find_comb_steps(const std::vector<double>& x, const std::vector<double>& values,
                                      const std::vector<double>& noise, std::size_t period, const StepOptions& options)
{
    if (period < 2 || x.size() != values.size() || (!noise.empty() && noise.size() != x.size())) return {};
    const AxisIndex index(x);
    std::vector<ClassStep> steps;
    for (std::size_t residue = 0; residue < period; ++residue) {
        std::vector<double> class_x, class_values, class_noise;
        for (std::size_t i = 0; i < x.size(); ++i) {
            if (index(x[i]) % period != residue) continue;
            class_x.push_back(x[i]);
            class_values.push_back(values[i]);
            if (!noise.empty()) class_noise.push_back(noise[i]);
        }
        for (auto& c : find_steps(class_x, class_values, class_noise, options))
            steps.push_back({residue, index(c.x_before), index(c.x_after), std::move(c)});
    }
    std::sort(steps.begin(), steps.end(), [](const ClassStep& a, const ClassStep& b) { return a.before < b.before; });

    // Brackets that share a gap are one step.
    std::vector<CombStep> out;
    std::vector<ClassStep> group;
    std::size_t group_end = 0;
    for (auto& s : steps) {
        if (!group.empty() && s.before >= group_end) {
            out.push_back(merged(group, period));
            group.clear();
        }
        group_end = group.empty() ? s.after : std::max(group_end, s.after);
        group.push_back(std::move(s));
    }
    if (!group.empty()) out.push_back(merged(group, period));
    return out;
}

void add_comb_steps(std::vector<Cliff>& cliffs, const std::vector<double>& x, const std::vector<double>& values,
                    const std::vector<double>& noise, const std::vector<LaunchShape>& shapes, const GpuShape& gpu,
                    std::string_view axis, const StepOptions& options)
{
    const std::size_t period = comb_period(shapes);
    if (period < 2) return;
    const AxisIndex index(x);
    const std::size_t whole_series = cliffs.size();
    for (auto& step : find_comb_steps(x, values, noise, period, options)) {
        Cliff& c = step.cliff;
        const bool known = std::any_of(cliffs.begin(), cliffs.begin() + static_cast<std::ptrdiff_t>(whole_series),
                                       [&](const Cliff& found) {
                                           return points_apart(index(found.x_before), index(found.x_after),
                                                               index(c.x_before), index(c.x_after)) <= period;
                                       });
        // An alignment change steps in most residues; one residue alone stepping is its noise
        // (an H100's clean re-scans showed a +5.4 % step in 1 of 8).
        if (known || 2 * step.residues < period) continue;
        explain_cliff(c, shapes, gpu, axis);
        c.explanation += fmt::format("; a comb along {}: the step shows in {} of its {} residues (the pitch's "
                                     "alignment repeats every {} points)",
                                     axis, step.residues, period, period);
        cliffs.push_back(std::move(c));
    }
    std::stable_sort(cliffs.begin(), cliffs.end(),
                     [](const Cliff& a, const Cliff& b) { return a.x_before < b.x_before; });
}

} // namespace harness::cliff
