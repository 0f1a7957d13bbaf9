#include "harness/compare/rules.hxx"

#include "harness/compare/mann_whitney.hxx"
#include "harness/core/stats.hxx"

#include <cmath>
#include <fmt/format.h>
#include <stdexcept>

namespace harness::compare {

namespace {

/// True when `value` is worse than `baseline` for this metric (any change, for direction neither).
bool is_worse(Direction direction, double baseline, double value)
{
    switch (direction) {
    case Direction::lower_is_better: return value > baseline;
    case Direction::higher_is_better: return value < baseline;
    case Direction::neither: return value != baseline;
    }
    return true;
}

std::string change_text(const MetricInfo& metric, double baseline, double value)
{
    std::string text =
        fmt::format("{} {} -> {}", metric.name, format_value(metric, baseline), format_value(metric, value));
    if (baseline != 0.0) text += fmt::format(" ({:+.1f} %)", 100.0 * (value - baseline) / std::abs(baseline));
    return text;
}

} // namespace

std::string format_value(const MetricInfo& metric, double value)
{
    if (metric.unit == "fraction") {
        const double pct = value * 100.0;
        return std::abs(pct - std::round(pct)) < 1e-9 ? fmt::format("{:.0f} %", pct) : fmt::format("{:.1f} %", pct);
    }
    const std::string number = std::abs(value - std::round(value)) < 1e-9 && std::abs(value) < 1e15
                                   ? fmt::format("{:.0f}", value)
                                   : fmt::format("{:.4g}", value);
    if (metric.unit.empty() || metric.unit == "count") return number;
    return fmt::format("{} {}", number, metric.unit);
}

std::string expect_condition_text(const MetricInfo& metric, const ExpectRule& rule)
{
    const char* op = "==";
    switch (rule.op) {
    case ExpectOp::eq: op = "=="; break;
    case ExpectOp::ne: op = "!="; break;
    case ExpectOp::lt: op = "<"; break;
    case ExpectOp::le: op = "<="; break;
    case ExpectOp::gt: op = ">"; break;
    case ExpectOp::ge: op = ">="; break;
    }
    return fmt::format("{} {}", op, format_value(metric, rule.bound));
}

VerdictSource baseline_source(const Rule& rule)
{
    return rule.kind == RuleKind::report ? VerdictSource::drift : VerdictSource::baseline;
}

MetricVerdict judge_value(const MetricInfo& metric, const Rule& rule, double baseline, double value)
{
    MetricVerdict v;
    v.metric = std::string(metric.name);
    v.baseline = baseline;
    v.value = value;
    v.rule = rule.text;
    v.tolerance = tolerance_band(rule);
    v.source = baseline_source(rule);
    const double difference = std::abs(value - baseline);
    bool beyond = false;
    switch (rule.kind) {
    case RuleKind::exact:
    case RuleKind::report:
        // Baselines store 17 significant digits; allow only the rounding of derived ratios.
        beyond = difference > 1e-9 * std::max(1.0, std::abs(baseline));
        break;
    case RuleKind::relative:
        beyond = difference > rule.minimum &&
                 (baseline == 0.0 ? difference > 0.0 : difference / std::abs(baseline) > rule.tolerance);
        break;
    case RuleKind::absolute: beyond = difference > rule.tolerance; break;
    case RuleKind::samples:
    case RuleKind::ignore:
        v.verdict = Verdict::skipped;
        v.message = fmt::format("rule '{}' does not compare single values", rule.text);
        v.not_compared = v.message;
        return v;
    }
    if (!beyond) {
        v.verdict = Verdict::passed;
        return v;
    }
    const bool worse = is_worse(metric.direction, baseline, value);
    v.verdict = worse ? Verdict::regressed : Verdict::improved;
    v.message = change_text(metric, baseline, value);
    if (rule.kind == RuleKind::report) {
        v.verdict = Verdict::drifted;
        v.message += ": reported, not gated (it moves with most edits; --strict gates it)";
        return v;
    }
    if (metric.direction == Direction::neither) v.message += ": changed";
    if (rule.kind != RuleKind::exact) v.message += fmt::format(", beyond '{}'", rule.text);
    return v;
}

double relative_spread(const std::vector<double>& samples)
{
    if (samples.size() < 4) return 0.0;
    std::vector<double> v = samples;
    std::sort(v.begin(), v.end());
    const double mid = sorted_quantile(v, 0.5);
    // The interquartile range of a normal sample is 1.349 standard deviations.
    return mid > 0.0 ? (sorted_quantile(v, 0.75) - sorted_quantile(v, 0.25)) / 1.349 / mid : 0.0;
}

std::string p_value_text(double p)
{
    return p < 0.001 ? std::string("p < 0.001") : fmt::format("p = {:.2g}", p);
}

MetricVerdict judge_samples(const MetricInfo& metric, const Rule& rule, const std::vector<double>& baseline_samples,
                            const std::vector<double>& samples)
{
    MetricVerdict v;
    v.metric = std::string(metric.name);
    v.rule = rule.text;
    v.tolerance = tolerance_band(rule);
    v.source = baseline_source(rule);
    if (baseline_samples.size() < samples_minimum || samples.size() < samples_minimum) {
        v.verdict = Verdict::no_baseline;
        if (!baseline_samples.empty()) v.baseline = median(baseline_samples);
        if (!samples.empty()) v.value = median(samples);
        v.message = fmt::format("{}: too few samples to judge (baseline {}, this run {}; at least {} each)",
                                metric.name, baseline_samples.size(), samples.size(), samples_minimum);
        return v;
    }
    const double base_median = median(baseline_samples);
    const double run_median = median(samples);
    v.baseline = base_median;
    v.value = run_median;
    const MannWhitney test = mann_whitney(samples, baseline_samples);
    const bool lower_better = metric.direction != Direction::higher_is_better;
    // One-sided in each direction: the run's samples larger (worse for times) or smaller.
    const double p_worse = lower_better ? test.p_a_greater : test.p_a_less;
    const double p_better = lower_better ? test.p_a_less : test.p_a_greater;
    const double moved = base_median != 0.0 ? (run_median - base_median) / std::abs(base_median) : 0.0;
    const double moved_worse = lower_better ? moved : -moved;
    v.rule = fmt::format("{} ({})", rule.text, p_value_text(std::min(p_worse, p_better)));
    const std::string detail =
        fmt::format("{} median {} -> {} ({:+.1f} %), Mann-Whitney {} on {} vs {} samples", metric.name,
                    format_value(metric, base_median), format_value(metric, run_median), 100.0 * moved,
                    p_value_text(std::min(p_worse, p_better)), samples.size(), baseline_samples.size());
    const bool large_enough = std::abs(run_median - base_median) > rule.minimum;
    // The effect must also stand clear of the baseline's own spread: a noisy kernel needs a larger
    // move than a steady one.
    const double effect = std::max(rule.tolerance, samples_noise_widths * relative_spread(baseline_samples));
    if (p_worse < samples_alpha && moved_worse > effect && large_enough) {
        v.verdict = Verdict::regressed;
        v.message = detail;
        if (effect > rule.tolerance)
            v.message += fmt::format(" (beyond {:.1f} %, {} widths of the baseline's spread)", 100.0 * effect,
                                     samples_noise_widths);
    } else if (p_better < samples_alpha && -moved_worse > effect && large_enough) {
        v.verdict = Verdict::improved;
        v.message = detail;
    } else {
        v.verdict = Verdict::passed;
        // Moved beyond the rule, but not shown by the samples: unsure, not the same.
        if (std::abs(moved) > effect && large_enough) {
            v.unsure = true;
            v.message = detail + fmt::format(": unsure, the move is not significant (p >= {:g})", samples_alpha);
        }
    }
    return v;
}

} // namespace harness::compare
