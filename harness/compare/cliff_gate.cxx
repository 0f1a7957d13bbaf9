#include "harness/compare/cliff_gate.hxx"

#include "harness/cliff/steps.hxx"
#include "harness/compare/mann_whitney.hxx"
#include "harness/compare/rules.hxx"
#include "harness/core/metrics.hxx"
#include "harness/core/stats.hxx"
#include "harness/suite/sweep.hxx"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <map>
#include <optional>

namespace harness::compare {

namespace {

/// What an exact depth may differ by in rounding (as the step finder's exact tolerance).
constexpr double exact_depth_tolerance = 1e-9;
/// A noisy cliff deepened when its depth grew by more than this many of its noises.
constexpr double depth_noise_widths = 3.0;
/// A stretch of a noisy map counts as moved against the baseline's levels when this many
/// consecutive points or more moved. Between processes a whole map moves by up to 2 % and each
/// point by its noise: on synthetic staircases of 0.3-1 % noise, stretches of 3 points that moved
/// by half min_depth and three noises each turned up in about one clean rerun in ten, of 8 in none.
constexpr std::size_t level_shift_min_points = 8;
/// How many points either side of a gap the two series' ratio is taken over, to read one series'
/// step at the other's place.
constexpr std::size_t side_points = 12;

/// Judges one map: formats its figures and finds its points.
class MapJudge {
public:
    MapJudge(const CliffMap& map, const suite::Suite& suite) : map_(map), suite_(suite)
    {
        const auto info = find_metric(map.figure);
        unit_ = info ? std::string(info->unit) : map.unit;
    }

    /// "N=40..41"
    std::string place(double x_before, double x_after) const
    {
        return fmt::format("{}={}..{}", map_.axis, x_before, x_after);
    }
    /// "62.5 %", "1.2 us": a level in the figure's unit.
    std::string level(double v) const
    {
        const MetricInfo info{map_.figure, "",    unit_, Direction::neither, Stability::exact, Collector::derived,
                              "",          false, ""};
        return format_value(info, v);
    }
    static std::string percent(double depth) { return fmt::format("{:+.3g} %", depth * 100.0); }
    std::string step(const Cliff& c) const
    {
        return fmt::format("{} {} -> {} ({})", map_.figure, level(c.level_before), level(c.level_after),
                           percent(c.depth));
    }
    /// "occupancy: resident blocks 8 -> 7 per SM ...": the cause, with the launch model's words.
    static std::string cause(const Cliff& c)
    {
        const std::string name = cliff_cause_name(c.cause);
        if (c.explanation.empty()) return name;
        return c.explanation.starts_with(name) ? c.explanation : fmt::format("{}: {}", name, c.explanation);
    }

    /// The params text of the map's point at `x`; the map's first point when it has none there.
    std::string carrier(std::optional<double> x) const
    {
        double at = map_.x.empty() ? 0 : map_.x.front();
        if (x && std::find(map_.x.begin(), map_.x.end(), *x) != map_.x.end()) at = *x;
        return suite::point_text(suite_, map_.axis, static_cast<std::int64_t>(at), map_.other_params);
    }

    /// The noise of a depth between two points of the map, relative; 0 for an exact map.
    double depth_noise(const Cliff& c) const
    {
        if (map_.noise.empty()) return 0;
        const auto relative = [&](double x, double level) {
            const auto it = std::find(map_.x.begin(), map_.x.end(), x);
            if (it == map_.x.end() || level == 0) return 0.0;
            return map_.noise[static_cast<std::size_t>(it - map_.x.begin())] / std::abs(level);
        };
        const double before = relative(c.x_before, c.level_before), after = relative(c.x_after, c.level_after);
        return depth_noise_widths * (1 + std::abs(c.depth)) * std::hypot(before, after);
    }

    CliffVerdict verdict(double x_before, double x_after, std::optional<double> carrier_x, Verdict verdict,
                         std::string rule, std::string message) const
    {
        CliffVerdict v;
        v.x_before = x_before;
        v.x_after = x_after;
        v.carrier = carrier(carrier_x);
        v.judgement.metric = cliff_verdict_metric(map_.axis);
        v.judgement.verdict = verdict;
        v.judgement.rule = std::move(rule);
        v.judgement.message = std::move(message);
        return v;
    }

    const CliffMap& map_;
    const suite::Suite& suite_;
    std::string unit_;
};

/// How far a measured cliff's depth may move between processes, beyond its noise: a share
/// (depth_tolerance) of its depth, and of twice min_depth at least. A shallow cliff's depth moves
/// by as many points as a deeper one's between processes: on an H100 the 4.6-4.9 % first step of
/// row_staircase measured 6.2-6.8 % in 4 of 20 clean reruns, one tread of the scan 1.3 % faster
/// in one process than in another, where a quarter of its depth allowed 1.2 points.
double depth_allowance(const suite::CliffSpec& spec, double depth)
{
    return spec.depth_tolerance * std::max(std::abs(depth), 2 * spec.min_depth);
}

/// A baseline row as the cliff it records.
Cliff cliff_of(const CliffRow& r)
{
    Cliff c;
    c.x_before = r.x_before.value_or(0);
    c.x_after = r.x_after.value_or(0);
    c.level_before = r.level_before;
    c.level_after = r.level_after;
    c.depth = r.depth;
    c.cause = cliff_cause_from_name(r.cause).value_or(CliffCause::unexplained);
    return c;
}

/// A noisy map's points against the baseline's levels at the same axis values.
struct LevelComparison {
    std::vector<double> x;
    std::vector<double> ratio; ///< this run's value over the baseline's, less 1
    std::vector<double> noise; ///< of `ratio`: both points' relative noises together
    std::vector<double> base;  ///< the baseline's level
    std::vector<double> now;   ///< this run's value
};

LevelComparison compare_levels(const CliffMap& map, const std::vector<const LevelRow*>& levels)
{
    LevelComparison out;
    std::map<double, const LevelRow*> at;
    for (const LevelRow* r : levels) at.emplace(r->x, r);
    for (std::size_t i = 0; i < map.x.size() && i < map.values.size(); ++i) {
        const auto it = at.find(map.x[i]);
        if (it == at.end() || !(it->second->level > 0) || !(map.values[i] > 0)) continue;
        const double base = it->second->level, now = map.values[i];
        const double noise_now = i < map.noise.size() ? map.noise[i] / now : 0.0;
        out.x.push_back(map.x[i]);
        out.ratio.push_back(now / base - 1);
        out.noise.push_back((now / base) * std::hypot(noise_now, it->second->noise / base));
        out.base.push_back(base);
        out.now.push_back(now);
    }
    return out;
}

/// The ratio of the two series (this run's over the baseline's) on one side of a gap: its median
/// over up to side_points compared points, and that median's noise.
struct SideRatio {
    double median = 1;
    double noise = 0;
    std::size_t points = 0;
};

/// The side of the gap (x_before, x_after) before it (points at or below x_before, above `limit`)
/// or after it (at or above x_after, below `limit`), nearest the gap first.
SideRatio side_ratio(const LevelComparison& c, double x_before, double x_after, bool before, double limit)
{
    std::vector<double> ratios, noises;
    if (before) {
        for (std::size_t k = c.x.size(); k-- > 0 && ratios.size() < side_points;)
            if (c.x[k] <= x_before) {
                if (c.x[k] <= limit) break;
                ratios.push_back(1 + c.ratio[k]);
                noises.push_back(c.noise[k]);
            }
    } else {
        for (std::size_t k = 0; k < c.x.size() && ratios.size() < side_points; ++k)
            if (c.x[k] >= x_after) {
                if (c.x[k] >= limit) break;
                ratios.push_back(1 + c.ratio[k]);
                noises.push_back(c.noise[k]);
            }
    }
    SideRatio out;
    out.points = ratios.size();
    if (ratios.empty()) return out;
    out.median = median(ratios);
    std::vector<double> deviations;
    for (const double r : ratios) deviations.push_back(std::abs(r - out.median));
    // 1.4826 MADs make one standard deviation of normal scatter; the median of n has about
    // 1.25 / sqrt(n) of it. The MAD of a dozen points can come out low by half, so the points'
    // own measured noise bounds it from below.
    const double scatter = std::max(1.4826 * median(deviations), median(noises));
    out.noise = 1.25 * scatter / std::sqrt(static_cast<double>(ratios.size()));
    return out;
}

/// One series' step at the other's gap: the known depth across the gap and the two series'
/// ratio either side. Where the run steps by d and is r_before and r_after times the baseline
/// either side, the baseline steps by (1 + d) * r_before / r_after - 1 there, however shallow, at
/// the same place, whatever the trend (both series share it). The same reads the run's step at a
/// baseline cliff's place.
struct StepAcross {
    double depth = 0;        ///< of the other series at the gap
    double noise = 0;        ///< of that depth
    double ratio_before = 1; ///< the run over the baseline before the gap
    double ratio_after = 1;
    bool known = false; ///< false where either side has no compared point
};

StepAcross step_across(const LevelComparison& c, double x_before, double x_after, double depth, bool of_baseline,
                       double limit_before, double limit_after)
{
    StepAcross out;
    const SideRatio b = side_ratio(c, x_before, x_after, true, limit_before);
    const SideRatio a = side_ratio(c, x_before, x_after, false, limit_after);
    if (b.points == 0 || a.points == 0) return out;
    out.known = true;
    out.ratio_before = b.median;
    out.ratio_after = a.median;
    const double factor = of_baseline ? b.median / a.median : a.median / b.median;
    out.depth = (1 + depth) * factor - 1;
    out.noise = depth_noise_widths * std::abs(1 + out.depth) * std::hypot(b.noise / b.median, a.noise / a.median);
    return out;
}

/// Where the cliffs either side of the gap lie, in either series, so that a side's window stops
/// short of them.
std::pair<double, double> neighbours(double x_before, double x_after, const std::vector<Cliff>& run_cliffs,
                                     const std::vector<const CliffRow*>& recorded)
{
    double lower = -std::numeric_limits<double>::infinity(), upper = std::numeric_limits<double>::infinity();
    const auto take = [&](double b, double a) {
        if (a <= x_before) lower = std::max(lower, b);
        if (b >= x_after) upper = std::min(upper, a);
    };
    for (const auto& c : run_cliffs) take(c.x_before, c.x_after);
    for (const CliffRow* r : recorded) take(*r->x_before, *r->x_after);
    return {lower, upper};
}

/// Every step up of a noisy series, however shallow: without the baseline's levels, the run's own
/// step at a baseline cliff's place is what tells a cliff gone from one measured just under
/// min_depth.
std::vector<Cliff> every_step(const CliffMap& series)
{
    if (series.x.size() < 2) return {};
    cliff::StepOptions options;
    options.min_depth = 0;
    options.worse_only = true;
    return cliff::find_steps(series.x, series.values, series.noise, options);
}

/// The step of `steps` at the place of `c`, within one point of it.
const Cliff* step_near(const std::vector<Cliff>& steps, double x_before, double x_after)
{
    const double tolerance = x_after - x_before;
    const Cliff* best = nullptr;
    for (const auto& s : steps) {
        const double distance = std::max(std::abs(s.x_before - x_before), std::abs(s.x_after - x_after));
        if (distance <= tolerance &&
            (!best || distance < std::max(std::abs(best->x_before - x_before), std::abs(best->x_after - x_after))))
            best = &s;
    }
    return best;
}

/// Stretches of the axis where the run's levels moved against the baseline's (a level shift, even
/// where no step moved): at least level_shift_min_points consecutive points each at least half
/// of min_depth and three of their noises away in one direction, whose median moved min_depth or
/// more. Between processes a kernel's time moves as a whole by a few per cent (docs/cliffs.md), so
/// a stretch must move by a step's depth to count; higher is worse (time). A rise that starts at a
/// cliff already failing (new or deeper) is that cliff's level after it, not a second finding.
void judge_level_shifts(const MapJudge& j, const LevelComparison& levels, const suite::CliffSpec& spec,
                        const std::string& rule, std::vector<CliffVerdict>& out)
{
    const double min_depth = spec.min_depth;
    std::vector<std::pair<double, double>> failing_steps;
    for (const auto& v : out)
        if (v.judgement.verdict == Verdict::regressed && v.x_after > v.x_before)
            failing_steps.emplace_back(v.x_before, v.x_after);
    const auto starts_at_failing_step = [&](double first) {
        return std::any_of(failing_steps.begin(), failing_steps.end(), [&](const auto& step) {
            const double reach = step.second - step.first;
            return first >= step.first && first <= step.second + reach;
        });
    };
    const auto moved = [&](std::size_t i, int sign) {
        const double r = levels.ratio[i] * sign;
        return r >= min_depth / 2 && r >= depth_noise_widths * levels.noise[i];
    };
    for (const int sign : {+1, -1}) {
        std::size_t i = 0;
        while (i < levels.x.size()) {
            if (!moved(i, sign)) {
                ++i;
                continue;
            }
            std::size_t end = i;
            while (end < levels.x.size() && moved(end, sign)) ++end;
            const std::size_t count = end - i;
            const std::vector<double> stretch(levels.ratio.begin() + static_cast<std::ptrdiff_t>(i),
                                              levels.ratio.begin() + static_cast<std::ptrdiff_t>(end));
            const double middle = median(stretch);
            if (count >= level_shift_min_points && middle * sign >= min_depth &&
                !(sign > 0 && starts_at_failing_step(levels.x[i]))) {
                const double first = levels.x[i], last = levels.x[end - 1];
                const bool worse = sign > 0;
                std::vector<double> base(levels.base.begin() + static_cast<std::ptrdiff_t>(i),
                                         levels.base.begin() + static_cast<std::ptrdiff_t>(end));
                std::vector<double> now(levels.now.begin() + static_cast<std::ptrdiff_t>(i),
                                        levels.now.begin() + static_cast<std::ptrdiff_t>(end));
                auto v = j.verdict(
                    first, last, first, worse ? Verdict::regressed : Verdict::improved, rule,
                    fmt::format("level {} along {}={}..{} ({} of {} points): {} {} -> {} ({} against the baseline's "
                                "levels, median){}",
                                worse ? "rose" : "fell", j.map_.axis, first, last, count, levels.x.size(),
                                j.map_.figure, j.level(median(base)), j.level(median(now)), MapJudge::percent(middle),
                                worse ? fmt::format(", at least the suite's min_depth {}",
                                                    MapJudge::percent(min_depth).substr(1))
                                      : std::string()));
                v.judgement.value = middle;
                v.judgement.baseline = 0;
                out.push_back(std::move(v));
            }
            i = end;
        }
    }
}

/// What a map is judged against in its baseline file: the cliffs recorded there and, for a noisy
/// map, its levels; what one run's cliffs are matched with.
struct BaselineSide {
    const suite::CliffSpec& spec;
    bool exact = false;
    std::vector<const CliffRow*> recorded;
    LevelComparison compared;       ///< a noisy map's points against the baseline's levels, where it keeps them
    std::vector<Cliff> run_steps{}; ///< every step of the run, for a noisy map whose baseline keeps no levels
    std::string rule;
};

/// The nearest recorded cliff not yet matched at the place of this run's cliff `c`: the same points
/// for an exact map, within one point for a noisy one, whose edge the step finder may place a point off.
std::optional<std::size_t> matching_recorded_cliff(const BaselineSide& b, const Cliff& c,
                                                   const std::vector<bool>& matched)
{
    const double tolerance = b.exact ? 0.0 : c.x_after - c.x_before;
    std::optional<std::size_t> match;
    for (std::size_t i = 0; i < b.recorded.size(); ++i) {
        if (matched[i]) continue;
        const double distance =
            std::max(std::abs(*b.recorded[i]->x_before - c.x_before), std::abs(*b.recorded[i]->x_after - c.x_after));
        if (distance <= tolerance && (!match || distance < std::abs(*b.recorded[*match]->x_after - c.x_after)))
            match = i;
    }
    return match;
}

/// A cliff of this run that the baseline does not record.
CliffVerdict judge_new_cliff(const MapJudge& j, const BaselineSide& b, const Cliff& c)
{
    const double min_depth = b.spec.min_depth;
    const auto [lower, upper] = neighbours(c.x_before, c.x_after, j.map_.cliffs, b.recorded);
    if (const StepAcross own = step_across(b.compared, c.x_before, c.x_after, c.depth, true, lower, upper); own.known) {
        // The baseline's own step at this gap, read from its levels, however shallow: a step
        // that was there all along under min_depth is judged as a known cliff, so that it
        // does not flicker in and out around the threshold; where they are flat it is new.
        const double grew = std::abs(c.depth) - std::abs(own.depth);
        const double allowed = std::max(own.noise, depth_allowance(b.spec, own.depth));
        const bool deeper = grew > allowed && std::abs(c.depth) >= min_depth;
        auto v = j.verdict(
            c.x_before, c.x_after, c.x_after, deeper ? Verdict::regressed : Verdict::passed, b.rule,
            fmt::format(
                "{} at {}: {}; the baseline's levels step {} here{}; caused by {}", deeper ? "new cliff" : "cliff",
                j.place(c.x_before, c.x_after), j.step(c), MapJudge::percent(own.depth),
                deeper ? fmt::format(", {} deeper than allowed ({}), and at least the suite's "
                                     "min_depth {}",
                                     MapJudge::percent(grew).substr(1), MapJudge::percent(allowed).substr(1),
                                     MapJudge::percent(min_depth).substr(1))
                       : fmt::format(" (under the suite's min_depth {} when recorded): as deep "
                                     "within the allowed {}",
                                     MapJudge::percent(min_depth).substr(1), MapJudge::percent(allowed).substr(1)),
                MapJudge::cause(c)));
        v.judgement.value = c.depth;
        v.judgement.baseline = own.depth;
        return v;
    }
    const bool deep = std::abs(c.depth) >= min_depth;
    auto v = j.verdict(
        c.x_before, c.x_after, c.x_after, deep ? Verdict::regressed : Verdict::passed, b.rule,
        fmt::format("{} cliff at {}: {}, {}; caused by {}", deep ? "new" : "a shallow new",
                    j.place(c.x_before, c.x_after), j.step(c),
                    deep ? fmt::format("at least the suite's min_depth {}", MapJudge::percent(min_depth).substr(1))
                         : "below the suite's min_depth",
                    MapJudge::cause(c)));
    v.judgement.value = c.depth;
    return v;
}

/// A cliff of this run matched with the baseline's cliff `base`: deeper, shallower or as deep.
CliffVerdict judge_recorded_cliff(const MapJudge& j, const BaselineSide& b, const Cliff& c, const Cliff& base)
{
    const double grew = std::abs(c.depth) - std::abs(base.depth);
    const double allowed = b.exact ? exact_depth_tolerance * std::max(1.0, std::abs(base.depth))
                                   : std::max(j.depth_noise(c), depth_allowance(b.spec, base.depth));
    const Verdict verdict = grew > allowed ? Verdict::regressed : grew < -allowed ? Verdict::improved : Verdict::passed;
    const std::string where = j.place(c.x_before, c.x_after);
    const std::string moved = c.x_before == base.x_before && c.x_after == base.x_after
                                  ? ""
                                  : fmt::format(" (the baseline's at {})", j.place(base.x_before, base.x_after));
    const std::string cause_change =
        c.cause == base.cause ? "" : fmt::format(" (the baseline's cause: {})", cliff_cause_name(base.cause));
    std::string message;
    switch (verdict) {
    case Verdict::regressed:
        message =
            fmt::format("cliff at {}{} deepened: {} -> {}{}; {} (baseline {} -> {}); caused by {}{}", where, moved,
                        MapJudge::percent(base.depth), MapJudge::percent(c.depth),
                        b.exact ? "" : fmt::format(" (allowed {})", MapJudge::percent(allowed).substr(1)), j.step(c),
                        j.level(base.level_before), j.level(base.level_after), MapJudge::cause(c), cause_change);
        break;
    case Verdict::improved:
        message = fmt::format("cliff at {}{} shallower: {} -> {}; {}", where, moved, MapJudge::percent(base.depth),
                              MapJudge::percent(c.depth), j.step(c));
        break;
    default:
        message = fmt::format("cliff at {}{} as in the baseline: {}; caused by {}{}", where, moved, j.step(c),
                              MapJudge::cause(c), cause_change);
        break;
    }
    auto v = j.verdict(c.x_before, c.x_after, c.x_after, verdict, b.rule, std::move(message));
    v.judgement.value = c.depth;
    v.judgement.baseline = base.depth;
    return v;
}

/// A cliff of the baseline, `base`, that no cliff of this run matched: still there under
/// min_depth, gone because the level before it rose, or gone.
CliffVerdict judge_missing_cliff(const MapJudge& j, const BaselineSide& b, const Cliff& base)
{
    const double min_depth = b.spec.min_depth;
    const std::string where = j.place(base.x_before, base.x_after);
    // This run's step at the baseline cliff's place, however shallow: from the two series'
    // ratio either side where the baseline keeps levels, else from the run's own steps.
    std::optional<double> now_depth;
    double allowed = depth_allowance(b.spec, base.depth);
    StepAcross across;
    if (!b.compared.x.empty()) {
        const auto [lower, upper] = neighbours(base.x_before, base.x_after, j.map_.cliffs, b.recorded);
        across = step_across(b.compared, base.x_before, base.x_after, base.depth, false, lower, upper);
        if (across.known) {
            now_depth = across.depth;
            allowed = std::max(allowed, across.noise);
        }
    } else if (const Cliff* now = step_near(b.run_steps, base.x_before, base.x_after)) {
        now_depth = now->depth;
        allowed = std::max(allowed, j.depth_noise(*now));
    }
    if (now_depth && std::abs(*now_depth) - std::abs(base.depth) >= -allowed) {
        auto v = j.verdict(base.x_before, base.x_after, base.x_after, Verdict::passed, b.rule,
                           fmt::format("cliff at {} as in the baseline: {}, now {} (under the suite's min_depth "
                                       "{}, within the allowed {})",
                                       where, MapJudge::percent(base.depth), MapJudge::percent(*now_depth),
                                       MapJudge::percent(min_depth).substr(1), MapJudge::percent(allowed).substr(1)));
        v.judgement.value = *now_depth;
        v.judgement.baseline = base.depth;
        return v;
    }
    // Gone or shallower: because the level after it fell (better), or because the level
    // before it rose to meet it (worse: everything before the cliff got slower).
    // The level before must have risen, and against the level after, by half the cliff or more
    // (the cliff is mostly gone because of it): a whole map that moved between processes moves
    // both sides alike.
    const double rose = across.ratio_before - 1;
    const double rose_against_after = across.ratio_before / across.ratio_after - 1;
    const double needed = std::max(min_depth, std::abs(base.depth)) / 2;
    if (across.known && rose >= needed && rose_against_after >= needed) {
        auto v = j.verdict(base.x_before, base.x_after, base.x_after, Verdict::regressed, b.rule,
                           fmt::format("the cliff at {} of the baseline is gone because the level before it "
                                       "rose: {} {} -> {} ({} against the baseline's levels), where the "
                                       "baseline stepped {} ({}, {})",
                                       where, j.map_.figure, j.level(base.level_before),
                                       j.level(base.level_before * (1 + rose)), MapJudge::percent(rose),
                                       MapJudge::percent(base.depth), j.level(base.level_after),
                                       cliff_cause_name(base.cause)));
        v.judgement.value = now_depth.value_or(0);
        v.judgement.baseline = base.depth;
        return v;
    }
    auto v = j.verdict(base.x_before, base.x_after, base.x_after, Verdict::improved, b.rule,
                       fmt::format("the cliff at {} of the baseline is gone ({} -> {}, {}, {})", where,
                                   j.level(base.level_before), j.level(base.level_after), MapJudge::percent(base.depth),
                                   cliff_cause_name(base.cause)));
    v.judgement.baseline = base.depth;
    return v;
}

void judge_against_baseline(const MapJudge& j, const CliffBaselineFile& file, const suite::CliffSpec& spec,
                            std::vector<CliffVerdict>& out)
{
    const CliffMap& map = j.map_;
    const bool exact = is_exact_map(map);
    // A noisy map is also read against the baseline's levels where it keeps them, and at every
    // gap however shallow its step: a step near min_depth is judged against the other side's own
    // step there, not against min_depth alone, so that it does not flicker in and out.
    const std::vector<const LevelRow*> levels = exact ? std::vector<const LevelRow*>{} : file.levels_of(map);
    BaselineSide b{.spec = spec,
                   .exact = exact,
                   .recorded = file.cliffs_of(map),
                   .compared = compare_levels(map, levels),
                   .rule = fmt::format("cliffs (min_depth {})", spec.min_depth)};
    if (!exact && b.compared.x.empty()) b.run_steps = every_step(map);
    if (map.cliffs.empty() && b.recorded.empty()) {
        out.push_back(j.verdict(0, 0, std::nullopt, Verdict::passed, b.rule,
                                fmt::format("no cliff along {}, as in the baseline", map.axis)));
        if (!b.compared.x.empty()) judge_level_shifts(j, b.compared, spec, b.rule, out);
        return;
    }
    std::vector<bool> matched(b.recorded.size(), false);
    for (const auto& c : map.cliffs) {
        const auto match = matching_recorded_cliff(b, c, matched);
        if (!match) {
            out.push_back(judge_new_cliff(j, b, c));
            continue;
        }
        matched[*match] = true;
        out.push_back(judge_recorded_cliff(j, b, c, cliff_of(*b.recorded[*match])));
    }
    for (std::size_t i = 0; i < b.recorded.size(); ++i)
        if (!matched[i]) out.push_back(judge_missing_cliff(j, b, cliff_of(*b.recorded[i])));
    if (!b.compared.x.empty()) judge_level_shifts(j, b.compared, spec, b.rule, out);
}

void judge_expectations(const MapJudge& j, const suite::Suite& suite, std::vector<CliffVerdict>& out)
{
    const CliffMap& map = j.map_;
    const suite::VariantSpec* variant = suite.find_variant(map.variant);
    if (!variant) return;
    const MetricInfo depth_info{suite::cliff_depth_expectation,
                                "",
                                "fraction",
                                Direction::lower_is_better,
                                Stability::exact,
                                Collector::derived,
                                "",
                                false,
                                ""};
    const MetricInfo count_info{suite::cliff_count_expectation,
                                "",
                                "count",
                                Direction::neither,
                                Stability::exact,
                                Collector::derived,
                                "",
                                false,
                                ""};
    const bool exact = is_exact_map(map);
    for (const auto& e : suite.expectations_for(*variant)) {
        if (!suite::is_cliff_expectation(e.metric) || !e.judges_map(exact)) continue;
        // "on measured maps": the rule names the kind of map it was written for.
        const std::string maps = e.maps == suite::CliffMaps::all
                                     ? std::string()
                                     : fmt::format(" on {} maps", suite::cliff_maps_name(e.maps));
        const std::string rule = "expect " + e.metric + " " + e.rule.text + maps;
        if (e.metric == suite::cliff_count_expectation) {
            const double count = static_cast<double>(map.cliffs.size());
            const bool holds = expect_holds(e.rule, count);
            std::string places;
            for (const auto& c : map.cliffs) places += (places.empty() ? "" : ", ") + j.place(c.x_before, c.x_after);
            auto v =
                j.verdict(0, 0, std::nullopt, holds ? Verdict::passed : Verdict::expect_failed, rule,
                          holds ? ""
                                : fmt::format("{} cliffs along {}{}, expected cliff_count {}{} (suite line {})",
                                              map.cliffs.size(), map.axis, places.empty() ? "" : " (at " + places + ")",
                                              expect_condition_text(count_info, e.rule), maps, e.where.line));
            v.judgement.value = count;
            v.judgement.source = VerdictSource::expectation;
            out.push_back(std::move(v));
            continue;
        }
        // cliff_depth: the deepest cliff decides, for any operator.
        const Cliff* deepest = nullptr;
        for (const auto& c : map.cliffs)
            if (!deepest || std::abs(c.depth) > std::abs(deepest->depth)) deepest = &c;
        const double depth = deepest ? std::abs(deepest->depth) : 0.0;
        const bool holds = expect_holds(e.rule, depth);
        std::string message;
        if (!holds)
            message = deepest
                          ? fmt::format("the deepest cliff along {}, at {}, is {} deep ({}; caused by {}), expected "
                                        "cliff_depth {}{} (suite line {})",
                                        map.axis, j.place(deepest->x_before, deepest->x_after),
                                        format_value(depth_info, depth), j.step(*deepest), MapJudge::cause(*deepest),
                                        expect_condition_text(depth_info, e.rule), maps, e.where.line)
                          : fmt::format("no cliff along {}, expected cliff_depth {}{} (suite line {})", map.axis,
                                        expect_condition_text(depth_info, e.rule), maps, e.where.line);
        auto v = deepest ? j.verdict(deepest->x_before, deepest->x_after, deepest->x_after,
                                     holds ? Verdict::passed : Verdict::expect_failed, rule, std::move(message))
                         : j.verdict(0, 0, std::nullopt, holds ? Verdict::passed : Verdict::expect_failed, rule,
                                     std::move(message));
        v.judgement.value = depth;
        v.judgement.source = VerdictSource::expectation;
        out.push_back(std::move(v));
    }
}

} // namespace

std::vector<CliffVerdict> judge_cliff_map(const CliffMap& map, const suite::Suite& suite,
                                          const CliffBaselineFile* baseline, bool ci)
{
    const MapJudge j(map, suite);
    std::vector<CliffVerdict> out;
    if (baseline && baseline->holds(map)) {
        judge_against_baseline(j, *baseline, suite.cliffs, out);
    } else {
        // One verdict for the whole map: its cliffs are new as a whole, not one by one.
        std::string cliffs;
        for (const auto& c : map.cliffs)
            cliffs += fmt::format("{}{} {} {}", cliffs.empty() ? "" : "; ", j.place(c.x_before, c.x_after),
                                  MapJudge::percent(c.depth), cliff_cause_name(c.cause));
        out.push_back(j.verdict(0, 0, std::nullopt, ci ? Verdict::not_gated : Verdict::no_baseline,
                                fmt::format("cliffs (min_depth {})", suite.cliffs.min_depth),
                                fmt::format("the cliff map along {} is not in the baseline ({} cliffs{}): record it "
                                            "with `harness baseline update`",
                                            map.axis, map.cliffs.size(), cliffs.empty() ? "" : ": " + cliffs)));
    }
    judge_expectations(j, suite, out);
    std::stable_sort(out.begin(), out.end(),
                     [](const CliffVerdict& a, const CliffVerdict& b) { return a.x_before < b.x_before; });
    return out;
}

} // namespace harness::compare
