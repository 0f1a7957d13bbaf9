#include "harness/compare/cliff_gate.hxx"

#include "harness/compare/rules.hxx"
#include "harness/core/metrics.hxx"
#include "harness/suite/sweep.hxx"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <optional>

namespace harness::compare {

namespace {

/// What an exact depth may differ by in rounding (as the step finder's exact tolerance).
constexpr double exact_depth_tolerance = 1e-9;
/// A noisy cliff deepened when its depth grew by more than this many of its noises.
constexpr double depth_noise_widths = 3.0;

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
        return suite::point_text(suite_, map_.axis, static_cast<std::int64_t>(at), map_.others);
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

void judge_against_baseline(const MapJudge& j, const std::vector<const CliffRow*>& recorded,
                            const suite::CliffSpec& spec, std::vector<CliffVerdict>& out)
{
    const double min_depth = spec.min_depth;
    const CliffMap& map = j.map_;
    const bool exact = is_exact_map(map);
    const std::string rule = fmt::format("cliffs (min_depth {})", min_depth);
    if (map.cliffs.empty() && recorded.empty()) {
        out.push_back(j.verdict(0, 0, std::nullopt, Verdict::passed, rule,
                                fmt::format("no cliff along {}, as in the baseline", map.axis)));
        return;
    }
    std::vector<bool> matched(recorded.size(), false);
    for (const auto& c : map.cliffs) {
        // The nearest recorded cliff at this place: the same points for an exact map, within one
        // point for a noisy one, whose edge the step finder may place a point off.
        const double tolerance = exact ? 0.0 : c.x_after - c.x_before;
        std::optional<std::size_t> match;
        for (std::size_t i = 0; i < recorded.size(); ++i) {
            if (matched[i]) continue;
            const double distance =
                std::max(std::abs(*recorded[i]->x_before - c.x_before), std::abs(*recorded[i]->x_after - c.x_after));
            if (distance <= tolerance && (!match || distance < std::abs(*recorded[*match]->x_after - c.x_after)))
                match = i;
        }
        if (!match) {
            const bool deep = std::abs(c.depth) >= min_depth;
            auto v = j.verdict(c.x_before, c.x_after, c.x_after, deep ? Verdict::regressed : Verdict::passed, rule,
                               fmt::format("{} cliff at {}: {}, {}; caused by {}", deep ? "new" : "a shallow new",
                                           j.place(c.x_before, c.x_after), j.step(c),
                                           deep ? fmt::format("at least the suite's min_depth {}",
                                                              MapJudge::percent(min_depth).substr(1))
                                                : "below the suite's min_depth",
                                           MapJudge::cause(c)));
            v.judgement.value = c.depth;
            out.push_back(std::move(v));
            continue;
        }
        matched[*match] = true;
        const Cliff base = cliff_of(*recorded[*match]);
        const double grew = std::abs(c.depth) - std::abs(base.depth);
        const double allowed = exact ? exact_depth_tolerance * std::max(1.0, std::abs(base.depth))
                                     : std::max(j.depth_noise(c), spec.depth_tolerance * std::abs(base.depth));
        const Verdict verdict = grew > allowed    ? Verdict::regressed
                                : grew < -allowed ? Verdict::improved
                                                  : Verdict::passed;
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
                            exact ? "" : fmt::format(" (allowed {})", MapJudge::percent(allowed).substr(1)), j.step(c),
                            j.level(base.level_before), j.level(base.level_after), MapJudge::cause(c), cause_change);
            break;
        case Verdict::improved:
            message = fmt::format("cliff at {}{} shallower: {} -> {}; {}; the baseline is stale: run `harness "
                                  "baseline update`",
                                  where, moved, MapJudge::percent(base.depth), MapJudge::percent(c.depth), j.step(c));
            break;
        default:
            message = fmt::format("cliff at {}{} as in the baseline: {}; caused by {}{}", where, moved, j.step(c),
                                  MapJudge::cause(c), cause_change);
            break;
        }
        auto v = j.verdict(c.x_before, c.x_after, c.x_after, verdict, rule, std::move(message));
        v.judgement.value = c.depth;
        v.judgement.baseline = base.depth;
        out.push_back(std::move(v));
    }
    for (std::size_t i = 0; i < recorded.size(); ++i) {
        if (matched[i]) continue;
        const Cliff base = cliff_of(*recorded[i]);
        auto v = j.verdict(base.x_before, base.x_after, base.x_after, Verdict::improved, rule,
                           fmt::format("the cliff at {} of the baseline is gone ({} -> {}, {}, {}); the baseline is "
                                       "stale: run `harness baseline update`",
                                       j.place(base.x_before, base.x_after), j.level(base.level_before),
                                       j.level(base.level_after), MapJudge::percent(base.depth),
                                       cliff_cause_name(base.cause)));
        v.judgement.baseline = base.depth;
        out.push_back(std::move(v));
    }
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
        judge_against_baseline(j, baseline->cliffs_of(map), suite.cliffs, out);
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
