#pragma once
// Gating rules in the suite's syntax: how a metric is compared with its baseline ("exact",
// "rel 5%", "abs 0.05", "samples 5%", "ignore") and `expect:` conditions that hold without one
// ("<= 64", "== 0").

#include "harness/core/case_result.hxx"
#include "harness/core/metrics.hxx"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace harness::compare {

/// What a baseline rule compares.
enum class RuleKind {
    exact,    ///< any change beyond rounding
    relative, ///< |value - baseline| / |baseline| beyond `tolerance`
    absolute, ///< |value - baseline| beyond `tolerance`
    samples,  ///< Mann-Whitney U on the time samples (p < 0.01) plus a minimum effect on the medians
    report,   ///< compared exactly, but a change is only reported (drift), never a failure
    ignore,   ///< not compared
};

/// A parsed baseline rule.
struct Rule {
    RuleKind kind = RuleKind::exact;
    double tolerance = 0.0; ///< a fraction for relative / samples ("5%" -> 0.05), a value for absolute
    /// "rel 5% min 1048576", "samples 5% min 1": changes smaller than this (in the metric's unit)
    /// never count, however large relatively (tiny kernels drift by a few tenths of a microsecond).
    double minimum = 0.0;
    std::string text; ///< as written, for reports
};

/// Parses "exact", "rel 5%", "abs 0.05", "samples 5%", "report", "ignore" (rel and samples take an optional
/// "min <value>"); throws std::invalid_argument
/// with a message that says what is wrong and what is allowed.
Rule parse_rule(std::string_view text);

/// The comparison operator of an `expect:` rule.
enum class ExpectOp { eq, ne, lt, le, gt, ge };

/// A parsed `expect:` condition on a metric, e.g. "<= 64".
struct ExpectRule {
    ExpectOp op = ExpectOp::eq;
    double bound = 0.0;
    std::string text; ///< as written, normalised: "<= 64"
};

/// Parses "== 0", "<= 4", ">= 0.75" ...; throws std::invalid_argument.
ExpectRule parse_expect(std::string_view text);

/// Whether `value` satisfies the condition.
bool expect_holds(const ExpectRule& rule, double value);

/// Significance level of the "samples" rule.
inline constexpr double samples_alpha = 0.01;
/// Fewest samples on each side for the "samples" rule to judge at all.
inline constexpr std::size_t samples_minimum = 5;
/// The "samples" rule's effect must also exceed this many robust standard deviations of the
/// baseline samples (relative to their median).
inline constexpr double samples_noise_widths = 4.0;

/// Robust relative standard deviation of a sample: interquartile range / 1.349 / median (0 for
/// fewer than 4 values).
double relative_spread(const std::vector<double>& samples);

/// The verdict of one figure against its baseline value under a scalar rule (not "samples").
/// `verdict.message` says what changed and by how much; the caller adds cliffs and locations.
MetricVerdict judge_value(const MetricInfo& metric, const Rule& rule, double baseline, double value);

/// The verdict of a noisy figure from its samples (rule kind "samples"): regressed only if the
/// Mann-Whitney test in the worse direction gives p < samples_alpha AND the median moved that way
/// by more than the rule's tolerance, by more than samples_noise_widths x the baseline's relative
/// spread, and by more than the rule's minimum; improved likewise the other way.
MetricVerdict judge_samples(const MetricInfo& metric, const Rule& rule, const std::vector<double>& baseline_samples,
                            const std::vector<double>& samples);

/// "1.23 us", "4096 sectors", "75 %": a figure with its unit, for messages.
std::string format_value(const MetricInfo& metric, double value);

} // namespace harness::compare
