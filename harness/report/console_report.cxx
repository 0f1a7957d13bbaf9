#include "harness/report/reporters.hxx"

#include "harness/core/metrics.hxx"
#include "harness/core/text.hxx"
#include "harness/report/cliff_text.hxx"

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ostream.h>
#include <fmt/ranges.h>
#include <map>
#include <sstream>
#include <tuple>
#include <vector>

namespace harness::report {

namespace {

/// One word for the table: the case status, or the worst verdict of a case that ran; a case that
/// `--changed-only` carried is "unchanged".
std::string status_word(const CaseResult& r)
{
    if (r.unchanged) return "unchanged";
    if (r.status != CaseStatus::passed) return case_status_name(r.status);
    const auto worst = worst_verdict(r);
    if (worst && (*worst == Verdict::regressed || *worst == Verdict::expect_failed)) return "REGRESS";
    if (worst && *worst == Verdict::not_measured) return "not_measured";
    if (worst && *worst == Verdict::not_gated) return "not_gated";
    if (worst && *worst == Verdict::waived) return "waived";
    return "ok";
}

/// The status column's width: its longest word in full ("compile_error", "failed_verification"),
/// at least 8.
std::size_t status_width(const RunReport& report)
{
    std::size_t width = 8;
    for (const auto& r : report.results) width = std::max(width, status_word(r).size());
    return width;
}

std::string metric_text(const CaseResult& r, const char* name, const char* format)
{
    const auto v = r.metric(name);
    return v ? fmt::format(fmt::runtime(format), *v) : "-";
}

std::string time_text(const CaseResult& r)
{
    const auto v = r.metric(metric::time_median);
    if (!v) return "-";
    if (*v >= 1e4) return fmt::format("{:.2f} ms", *v / 1e3);
    return fmt::format("{:.2f} us", *v);
}

/// Shared memory per block, static and dynamic together; "-" where the static figure is unknown.
std::string shared_memory_text(const CaseResult& r)
{
    const auto smem = r.metric(metric::static_shared_bytes);
    return smem ? fmt::format("{:.0f}", *smem + r.metric(metric::dynamic_shared_bytes).value_or(0)) : "-";
}

std::string occupancy_text(const CaseResult& r)
{
    const auto occupancy = r.metric(metric::theoretical_occupancy);
    return occupancy ? fmt::format("{:.0f}%", *occupancy * 100) : "-";
}

/// A table's heading, underlined.
void write_heading(std::ostream& out, const std::string& heading)
{
    fmt::print(out, "{}\n{}\n", heading, std::string(heading.size(), '-'));
}

/// Verdicts of one kind that say the same thing of one variant on one architecture, as one line:
/// a register change that crosses an occupancy cliff gives blocks_per_sm and theoretical_occupancy
/// the same message in every case it moves, which is one finding.
struct VerdictLine {
    std::string variant;
    std::string arch;
    std::vector<std::string> cases;   ///< params_text, each once, in run order
    std::vector<std::string> metrics; ///< each once, in table order
    std::string message;
    std::string rule;
};

void add_once(std::vector<std::string>& list, const std::string& item)
{
    if (std::find(list.begin(), list.end(), item) == list.end()) list.push_back(item);
}

std::vector<VerdictLine> verdict_lines(const RunReport& report, Verdict verdict)
{
    std::vector<VerdictLine> lines;
    std::map<std::tuple<std::string, std::string, std::string, std::string>, std::size_t> line_of;
    for (const auto& r : report.results)
        for (const auto& v : r.verdicts) {
            if (v.verdict != verdict) continue;
            const auto [at, fresh] = line_of.try_emplace({r.variant, r.arch, v.message, v.rule}, lines.size());
            if (fresh) lines.push_back({r.variant, r.arch, {}, {}, v.message, v.rule});
            add_once(lines[at->second].cases, r.params_text);
            add_once(lines[at->second].metrics, v.metric);
        }
    return lines;
}

/// What a verdict line says after its case: "<metrics>: <message>", where a message that already
/// begins with its one figure's name ("registers 32 -> 40", "sass_instructions: SASS figures not
/// measured") stands alone rather than after that name again.
std::string verdict_text(const VerdictLine& line)
{
    if (line.metrics.size() == 1) {
        const std::string& name = line.metrics.front();
        const std::string_view message = line.message;
        if (message.starts_with(name) &&
            (message.size() == name.size() || message[name.size()] == ' ' || message[name.size()] == ':'))
            return line.message;
    }
    return fmt::format("{}: {}", fmt::join(line.metrics, ", "), line.message);
}

/// "N=256", or "N=256, N=1024, N=4096 (3 cases)", naming at most eight.
std::string cases_text(const std::vector<std::string>& cases)
{
    constexpr std::size_t named = 8;
    if (cases.size() == 1) return cases.front();
    const std::vector<std::string> first(cases.begin(), cases.begin() + std::min(cases.size(), named));
    return fmt::format("{}{} ({} cases)", fmt::join(first, ", "),
                       cases.size() > named ? fmt::format(" and {} more", cases.size() - named) : "", cases.size());
}

/// The cases the baselines hold and the suite no longer has, one line per variant and baseline file.
void write_removed_lines(const RunReport& report, std::ostream& out)
{
    if (report.removed.empty()) return;
    const bool fails = std::any_of(report.removed.begin(), report.removed.end(), [](const auto& r) { return r.fails; });
    fmt::print(out, "\nremoved (cases the baseline holds and the suite no longer has: {}):\n",
               fails ? "CI mode fails them until `harness baseline update` drops their rows, in the same change"
                     : "reported; CI mode fails them until `harness baseline update` drops their rows");
    std::vector<std::pair<std::string, std::string>> order; // (variant, baseline file) as first met
    std::map<std::pair<std::string, std::string>, std::pair<std::vector<std::string>, std::size_t>> lines;
    for (const auto& r : report.removed) {
        const auto key = std::pair(r.variant, r.baseline);
        if (!lines.contains(key)) order.push_back(key);
        auto& [cases, rows] = lines[key];
        cases.push_back(r.params_text);
        rows += r.rows;
    }
    for (const auto& key : order) {
        const auto& [cases, rows] = lines.at(key);
        fmt::print(out, "  {} {}: {} rows in {}\n", key.first, cases_text(cases), rows, key.second);
    }
}

/// One line per cliff map: how many cliffs, the deepest, where and why, and what the gate said.
void write_cliff_map_lines(const RunReport& report, std::ostream& out)
{
    if (report.cliff_maps.empty()) return;
    fmt::print(out, "\ncliff maps:\n");
    for (const auto& map : report.cliff_maps) {
        const Cliff* deepest = deepest_cliff(map);
        const std::string verdicts = cliff_verdict_counts(map);
        fmt::print(out, "  {}: {}{}\n", cliff_map_title(map),
                   deepest ? fmt::format("{} cliff{}, deepest {} at {}", map.cliffs.size(),
                                         map.cliffs.size() == 1 ? "" : "s", cliff_label(*deepest),
                                         cliff_position_text(map, *deepest, "->"))
                           : std::string("no cliff"),
                   verdicts.empty() ? "" : "; " + verdicts);
    }
}

} // namespace

namespace {

/// Under a case of several launches, one line per launch with its own figures, where measured.
void write_launch_rows(const CaseResult& r, std::ostream& out)
{
    for (std::size_t i = 0; i < r.launches.size(); ++i) {
        const CaseLaunch& l = r.launches[i];
        if (l.label.empty()) continue;
        // The parts are the metric table's (MetricRoles::console), in its order.
        std::vector<std::string> parts;
        for (const auto& m : report_metrics(&MetricRoles::console)) {
            const auto value = shown_figure(r, m, m.roles.console, l.label);
            if (!value || (m.roles.console.only_when_nonzero && *value == 0)) continue;
            // A fraction reads as a percentage; the limiter is what holds the occupancy down.
            std::string part =
                fmt::format(fmt::runtime(m.roles.console.label), m.unit == "fraction" ? *value * 100 : *value);
            if (m.name == metric::theoretical_occupancy && l.occupancy_limiter)
                part += fmt::format(" ({})", occupancy_limiter_name(*l.occupancy_limiter));
            parts.push_back(std::move(part));
        }
        fmt::print(out, "    {}. {}: {}\n", i + 1, l.label, parts.empty() ? "-" : join(parts, ", "));
    }
}

void write_static_table(const RunReport& report, std::ostream& out, std::size_t variant_width, std::size_t params_width)
{
    const std::size_t status_columns = status_width(report);
    write_heading(out, fmt::format("{:<{}}  {:<{}}  {:<6}  {:<{}}  {:>4}  {:>6}  {:>6}  {:>6}  {:>6}  {:>5}  {}",
                                   "variant", variant_width, "params", params_width, "arch", "status", status_columns,
                                   "regs", "spill", "smem", "local", "blocks", "occ", "limiter"));
    for (const auto& r : report.results) {
        // Spills are known from ptxas' report only: a module built by the project's own compiler
        // has none, and its spills are unmeasured ("-"), never 0.
        const auto stores = r.metric(metric::spill_store_bytes);
        const auto loads = r.metric(metric::spill_load_bytes);
        const std::string spill =
            stores || loads ? fmt::format("{:.0f}", stores.value_or(0) + loads.value_or(0)) : std::string("-");
        fmt::print(out, "{:<{}}  {:<{}}  {:<6}  {:<{}}  {:>4}  {:>6}  {:>6}  {:>6}  {:>6}  {:>5}  {}\n", r.variant,
                   variant_width, r.params_text, params_width, r.arch, status_word(r), status_columns,
                   metric_text(r, metric::registers, "{:.0f}"), spill, shared_memory_text(r),
                   metric_text(r, metric::local_bytes, "{:.0f}"), metric_text(r, metric::blocks_per_sm, "{:.0f}"),
                   occupancy_text(r), occupancy_limiter_text(r.occupancy_limiter));
        write_launch_rows(r, out);
    }
}

} // namespace

std::string kernels_text(const CaseResult& r)
{
    std::vector<std::string> entries;
    std::string file;
    for (const auto& l : r.launches) {
        if (std::find(entries.begin(), entries.end(), l.entry) == entries.end()) entries.push_back(l.entry);
        if (file.empty()) file = l.file;
    }
    if (entries.empty()) return "";
    const bool several = entries.size() > 1;
    std::string names = entries.back();
    if (several) {
        entries.pop_back();
        names = join(entries, ", ") + " and " + names;
    }
    return fmt::format("kernel{} {}{}", several ? "s" : "", names, file.empty() ? "" : " in " + file);
}

void write_console_table(const RunReport& report, std::ostream& console)
{
    // Names and messages come from files: their control characters are shown, not obeyed.
    std::ostringstream out;
    std::size_t variant_width = 7, params_width = 6;
    for (const auto& r : report.results) {
        variant_width = std::max(variant_width, r.variant.size());
        params_width = std::max(params_width, r.params_text.size());
    }
    if (report.mode == RunMode::static_tier) {
        write_static_table(report, out, variant_width, params_width);
        write_console_predictions(report, out);
    } else {
        const std::size_t status_columns = status_width(report);
        write_heading(out, fmt::format("{:<{}}  {:<{}}  {:<{}}  {:>10}  {:>6}  {:>9}  {:>8}  {:>4}  {:>6}  {:>5}  {}",
                                       "variant", variant_width, "params", params_width, "status", status_columns,
                                       "median", "noise", "GFLOP/s", "GB/s", "regs", "smem", "occ", "limiter"));
        for (const auto& r : report.results) {
            fmt::print(out, "{:<{}}  {:<{}}  {:<{}}  {:>10}  {:>6}  {:>9}  {:>8}  {:>4}  {:>6}  {:>5}  {}\n", r.variant,
                       variant_width, r.params_text, params_width, status_word(r), status_columns, time_text(r),
                       metric_text(r, metric::time_noise, "{:.1f}%"), metric_text(r, metric::gflops, "{:.1f}"),
                       metric_text(r, metric::bandwidth, "{:.1f}"), metric_text(r, metric::registers, "{:.0f}"),
                       shared_memory_text(r), occupancy_text(r), occupancy_limiter_text(r.occupancy_limiter));
            write_launch_rows(r, out);
        }
    }
    bool any_message = false;
    for (const auto& r : report.results) {
        if (!case_status_fails(r.status) || r.message.empty()) continue;
        if (!any_message) fmt::print(out, "\nfailures:\n");
        any_message = true;
        const std::string kernels = kernels_text(r);
        fmt::print(out, "  {} {} [{}]{}: {}\n", r.variant, r.params_text, case_status_name(r.status),
                   kernels.empty() ? "" : " (" + kernels + ")", r.message);
    }
    write_console_verdicts(report, out);
    console << escape_control_characters(out.str());
}

void write_console_verdicts(const RunReport& report, std::ostream& console)
{
    std::ostringstream out;
    // Most serious first; each verdict kind is one section.
    struct Section {
        Verdict verdict;
        const char* title;
    };
    // A stale baseline is worth recording again only where nothing regressed (each improvement says).
    const bool regressions = has_regressions(report);
    const Section sections[] = {
        {Verdict::regressed, "regressions"},
        {Verdict::expect_failed, "expect rules that do not hold"},
        {Verdict::not_measured, "not measured (the baseline holds these figures and this run measures them, but "
                                "they are missing: failing)"},
        {Verdict::not_gated, "not gated (no baseline for these figures; CI mode fails them: record a baseline)"},
        {Verdict::improved,
         report.fail_on_improvement ? "improvements (failing: --fail-on-improvement; run `harness baseline update`)"
         : regressions              ? "improvements (not to be recorded while the run has regressions: each says why)"
                                    : "improvements (the baseline is stale: run `harness baseline update`)"},
        {Verdict::waived, "waived regressions"},
        {Verdict::drifted, "moved, reported only (drift figures: no cliff, not failing; --strict gates them)"},
    };
    // Drift can touch every figure of every case after an edit: the first few, then a count.
    constexpr std::size_t drift_lines = 20;
    for (const auto& section : sections) {
        const std::vector<VerdictLine> lines = verdict_lines(report, section.verdict);
        if (lines.empty()) continue;
        fmt::print(out, "\n{}:\n", section.title);
        const std::size_t shown = section.verdict == Verdict::drifted || section.verdict == Verdict::not_gated
                                      ? std::min(lines.size(), drift_lines)
                                      : lines.size();
        for (std::size_t i = 0; i < shown; ++i) {
            const VerdictLine& line = lines[i];
            fmt::print(out, "  {} {} [{}] {} (rule {})\n", line.variant, cases_text(line.cases), line.arch,
                       verdict_text(line), line.rule);
        }
        if (lines.size() > shown)
            fmt::print(out, "  ... and {} more (results.csv lists every figure)\n", lines.size() - shown);
    }
    write_removed_lines(report, out);
    write_cliff_map_lines(report, out);
    // Comparisons that were not made are summarised, not listed: one line per distinct reason.
    std::map<std::string, std::size_t> unjudged;
    std::size_t no_baseline = 0;
    for (const auto& r : report.results)
        for (const auto& v : r.verdicts) {
            if (v.verdict == Verdict::skipped) ++unjudged[v.not_compared];
            if (v.verdict == Verdict::no_baseline) ++no_baseline;
        }
    if (!unjudged.empty() || no_baseline > 0 || !report.notes.empty() || !report.comparison_notes.empty())
        fmt::print(out, "\nnotes:\n");
    for (const auto& note : report.notes) fmt::print(out, "  {}\n", note);
    for (const auto& note : report.comparison_notes) fmt::print(out, "  {}\n", note);
    if (no_baseline > 0) fmt::print(out, "  {} figures have no baseline yet (they pass)\n", no_baseline);
    for (const auto& [why, count] : unjudged) fmt::print(out, "  not compared ({}x): {}\n", count, why);
    if (!report.baseline_files.empty()) fmt::print(out, "compared with: {}\n", fmt::join(report.baseline_files, ", "));

    const Totals t = totals(report, report.fail_on_improvement);
    fmt::print(out,
               "\n{}: {} passed, {} failed, {} regressed, {} not gated, {} skipped, {} removed; {} improved, {} waived "
               "({} on {}{})\n",
               report.suite, t.passed, t.failed, t.regressed, t.not_gated, t.skipped, t.removed, t.improved, t.waived,
               report.mode == RunMode::static_tier ? "static tier" : mode_name(report.mode),
               report.device_name.empty() ? report.arch : report.device_name,
               report.shard.sharded() ? ", shard " + report.shard.text() : "");
    if (t.unchanged > 0)
        fmt::print(out,
                   "unchanged: {} of the skipped cases not run, their SASS identical to the baseline's "
                   "(--changed-only): carried, not measured, not gated\n",
                   t.unchanged);
    const GateCounts g = gate_counts(report);
    fmt::print(out, "gated: {}{}\n", gate_counts_text(g), g.compared + g.expected == 0 ? " - NOTHING WAS GATED" : "");
    console << escape_control_characters(out.str());
}

} // namespace harness::report
