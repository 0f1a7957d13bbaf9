#pragma once
// The syntax of gating rules: how a metric is compared with its baseline ("exact", "rel 5%",
// "abs 0.05", "samples 5%", "report", "ignore") and `expect:` conditions that hold without one
// ("<= 64", "== 0"). Suites are written in it, and results files of version 3 or older kept a
// verdict's tolerance only in its rule's text, so the one parser sits here, below both. Judging
// figures by rules is compare/'s job.

#include <optional>
#include <string>
#include <string_view>

namespace harness {

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
    double percent = 0.0;   ///< relative / samples: the tolerance as written, in percent ("5%" -> 5)
    /// "rel 5% min 1048576", "samples 5% min 1": changes smaller than this (in the metric's unit)
    /// never count, however large relatively (tiny kernels drift by a few tenths of a microsecond).
    double minimum = 0.0;
    std::string text; ///< as written, for reports
};

/// Parses "exact", "rel 5%", "abs 0.05", "samples 5%", "report", "ignore" (rel and samples take an optional
/// "min <value>"); throws std::invalid_argument
/// with a message that says what is wrong and what is allowed.
Rule parse_rule(std::string_view text);

/// The band around the baseline within which a figure passes its rule, as a verdict keeps it for
/// the reports (MetricVerdict::tolerance).
struct ToleranceBand {
    enum class Kind {
        relative, ///< `amount` percent of the baseline either way ("rel 5%", "samples 5%": 5; "exact": 0)
        absolute, ///< `amount` in the figure's unit either way ("abs 0.05")
    };
    Kind kind = Kind::relative;
    double amount = 0.0;
    bool operator==(const ToleranceBand&) const = default;
};

/// The band of `rule`; none for "report" (a drift figure is shown, not held to a band) and "ignore".
std::optional<ToleranceBand> tolerance_band(const Rule& rule);

/// "relative", "absolute", as results files write a band's kind.
const char* tolerance_kind_name(ToleranceBand::Kind kind);
/// The kind named `name`; nullopt for another name.
std::optional<ToleranceBand::Kind> tolerance_kind_from_name(std::string_view name);

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

} // namespace harness
