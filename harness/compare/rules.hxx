#pragma once
// Judging figures by gating rules (core/rule_syntax.hxx): a value against its baseline value, time
// samples against the baseline's samples.

#include "harness/core/case_result.hxx"
#include "harness/core/metrics.hxx"
#include "harness/core/rule_syntax.hxx"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace harness::compare {

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

/// What a verdict under `rule` judges against: the baseline, drift for the rule "report".
VerdictSource baseline_source(const Rule& rule);

/// The verdict of one figure against its baseline value under a scalar rule (not "samples").
/// `verdict.message` says what changed and by how much; the caller adds cliffs and locations.
MetricVerdict judge_value(const MetricInfo& metric, const Rule& rule, double baseline, double value);

/// The verdict of a noisy figure from its samples (rule kind "samples"): regressed only if the
/// Mann-Whitney test in the worse direction gives p < samples_alpha AND the median moved that way
/// by more than the rule's tolerance, by more than samples_noise_widths x the baseline's relative
/// spread, and by more than the rule's minimum; improved likewise the other way. A median that
/// moved that far while the test does not reach samples_alpha passes, marked `unsure`: neither
/// clearly the same nor clearly different, which more samples decide (pipeline::resample_unsure).
MetricVerdict judge_samples(const MetricInfo& metric, const Rule& rule, const std::vector<double>& baseline_samples,
                            const std::vector<double>& samples);

/// "p = 0.034", "p < 0.001": a p-value as reports show it (never "p=0").
std::string p_value_text(double p);

/// "1.23 us", "4096 sectors", "75 %": a figure with its unit, for messages.
std::string format_value(const MetricInfo& metric, double value);

/// "== 100 %", "<= 4 sectors/request": an `expect:` condition with its bound shown as format_value
/// shows the figure, so that a message never compares a percentage with a fraction.
std::string expect_condition_text(const MetricInfo& metric, const ExpectRule& rule);

} // namespace harness::compare
