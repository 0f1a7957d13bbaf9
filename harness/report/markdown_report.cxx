// summary.md: a short Markdown summary for pull requests and the GitHub job summary.

#include "harness/core/metrics.hxx"
#include "harness/core/text.hxx"
#include "harness/report/cliff_text.hxx"
#include "harness/report/html_text.hxx"
#include "harness/report/reporters.hxx"
#include "harness/report/sparkline.hxx"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>

namespace harness::report {

namespace {

/// A table cell that renders literally: Markdown's emphasis, strikethrough, code, links and
/// images, pipes and HTML escaped (compiler output says `__shared__`; a shard's results.json may
/// say anything), line breaks kept as <br>. Control and reordering characters are escaped on the
/// whole text after.
std::string cell(std::string_view text)
{
    std::string out;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        switch (c) {
        case '|': out += "\\|"; break;
        case '_': out += "\\_"; break;
        case '*': out += "\\*"; break;
        case '~': out += "\\~"; break;
        case '`': out += "\\`"; break;
        case '\\': out += "\\\\"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        // An entity or character reference (&#x202E;, &lt;) would bring back what is escaped here;
        // an '&' that starts none is text already.
        case '&':
            out += i + 1 < text.size() && (text[i + 1] == '#' || std::isalnum(static_cast<unsigned char>(text[i + 1])))
                       ? "&amp;"
                       : "&";
            break;
        // A link or an image, [text](url), ![alt](url) or [text][label], needs its closing
        // bracket; with it escaped, '[', parentheses and '!' are text (and "\x1b[31m", as the
        // control characters are shown, stays readable).
        case ']': out += "\\]"; break;
        case '\n': out += "<br>"; break;
        case '\r': break;
        default: out += c;
        }
    }
    return out;
}

/// Whether `name` (an architecture, a metric) is a plain identifier, which Markdown shows as it is:
/// letters, digits, '_', '.', '-', starting and ending with a letter or digit (so no '_' at either
/// end starts emphasis).
bool plain_name(std::string_view name)
{
    const auto alnum = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
    return !name.empty() && alnum(name.front()) && alnum(name.back()) &&
           std::all_of(name.begin(), name.end(), [&](char c) { return alnum(c) || c == '_' || c == '.' || c == '-'; });
}

/// A name as a cell: as it is when plain, else escaped like any text.
std::string name_cell(std::string_view name)
{
    return plain_name(name) ? std::string(name) : cell(name);
}

/// A name shown as code (a metric): in backticks when plain, else escaped like any text, since a
/// backtick inside would end the code span.
std::string code_cell(std::string_view name)
{
    return plain_name(name) ? fmt::format("`{}`", name) : cell(name);
}

std::string number(const std::optional<double>& v)
{
    return v ? fmt::format("{:.6g}", *v) : "-";
}

/// The figures compared with a baseline under a gating rule (not expectations, not drift).
bool compared_with_baseline(const MetricVerdict& v)
{
    return v.baseline && v.value && v.source == VerdictSource::baseline && v.verdict != Verdict::drifted &&
           v.verdict != Verdict::skipped;
}

/// One row of the per-case table: reference, current, difference and noise, as nvbench's compare.
std::string comparison_row(const CaseResult& r, const MetricVerdict& v)
{
    const double difference = *v.value - *v.baseline;
    const std::string percent =
        *v.baseline != 0 ? fmt::format("{:+.2f} %", 100.0 * difference / std::abs(*v.baseline)) : "-";
    const auto info = find_metric(v.metric);
    std::string noise = "exact";
    if (info && info->stability == Stability::noisy)
        noise = v.metric == metric::time_median && r.metric(metric::time_noise)
                    ? fmt::format("{:.2f} %", *r.metric(metric::time_noise))
                    : "noisy";
    return fmt::format("| {} | {} | {} | {} | {} | {:+.6g} | {} | {} | {} |\n", cell(r.variant + " " + r.params_text),
                       name_cell(r.arch), code_cell(v.metric), number(v.baseline), number(v.value), difference, percent,
                       noise, verdict_name(v.verdict));
}

/// The figure's recent history on the default branch, on a line of its own in the message cell.
std::string recent_history(const MetricVerdict& v)
{
    return v.recent.empty() ? std::string() : "<br>" + markdown_sparkline(v.recent, v.value, metric_unit(v.metric));
}

/// The verdicts of one place as a table cell: "regressed: new cliff +38 % ...".
std::string cliff_verdict_cell(const std::vector<const CliffVerdict*>& verdicts)
{
    std::string text;
    for (const auto* v : verdicts)
        text += fmt::format("{}{}: {}", text.empty() ? "" : "<br>", verdict_name(v->judgement.verdict),
                            cell(v->judgement.message));
    return text;
}

/// The cliffs of each map: a line naming the map (with any verdict on the whole map), then a table
/// of its cliffs and of the baseline's cliffs that vanished. One block per map, so that the size
/// limit drops whole maps; the first opens the section.
std::vector<std::string> cliff_blocks(const RunReport& report)
{
    std::vector<std::string> blocks;
    for (const auto& map : report.cliff_maps) {
        std::string block = blocks.empty() ? "\n### Cliffs\n" : "";
        const std::size_t points = std::min(map.x.size(), map.values.size());
        block +=
            fmt::format("\n{}: {} points, {}", cell(cliff_map_title(map)), format_number(static_cast<double>(points)),
                        map.cliffs.empty()       ? std::string("no cliff")
                        : map.cliffs.size() == 1 ? std::string("1 cliff")
                                                 : fmt::format("{} cliffs", map.cliffs.size()));
        std::vector<std::pair<double, std::string>> rows;
        std::vector<const CliffVerdict*> vanished;
        for (const auto* v : verdicts_without_cliff(map)) {
            if (judges_whole_map(*v))
                block += fmt::format(" — {}: {}", verdict_name(v->judgement.verdict), cell(v->judgement.message));
            else
                vanished.push_back(v);
        }
        block += "\n";
        const bool verdicts =
            !vanished.empty() || std::any_of(map.cliffs.begin(), map.cliffs.end(),
                                             [&](const Cliff& c) { return !cliff_verdicts(map, c).empty(); });
        for (const auto& c : map.cliffs)
            rows.emplace_back(c.x_before,
                              fmt::format("| {} | {} | {} | {} | {} | {} |{}\n", cell(cliff_position_text(map, c)),
                                          cell(cliff_levels_text(map, c)), cliff_depth_text(c.depth),
                                          cliff_significance_text(c), cliff_cause_name(c.cause), cell(c.explanation),
                                          verdicts ? fmt::format(" {} |", cliff_verdict_cell(cliff_verdicts(map, c)))
                                                   : std::string()));
        for (const auto* v : vanished)
            rows.emplace_back(v->x_before,
                              fmt::format("| {} | - | {} | - | - | not found in this run | {} |\n",
                                          cell(cliff_position_text(map, v->x_before, v->x_after)),
                                          v->judgement.baseline ? "was " + cliff_depth_text(*v->judgement.baseline)
                                                                : std::string("-"),
                                          cliff_verdict_cell({v})));
        std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
        if (!rows.empty())
            block += verdicts ? "\n| position | level | depth | significance | cause | explanation | verdict |\n"
                                "|---|---|---:|---:|---|---|---|\n"
                              : "\n| position | level | depth | significance | cause | explanation |\n"
                                "|---|---|---:|---:|---|---|\n";
        for (const auto& row : rows) block += row.second;
        blocks.push_back(escape_control_characters(block));
    }
    return blocks;
}

/// A few lines of each failing case's SASS diff (the hunk at its failing verdict's line leads), as
/// a fenced block: its excerpt, the instructions that moved most; the whole diff is in sass_diff.txt.
std::vector<std::string> sass_diff_blocks(const RunReport& report)
{
    constexpr std::size_t max_cases = 5, max_lines = 8;
    std::vector<std::string> blocks;
    std::size_t cases = 0, with_diff = 0;
    for (const auto& r : report.results) with_diff += r.sass_diff.empty() ? 0 : 1;
    for (const auto& r : report.results) {
        if (r.sass_diff.empty()) continue;
        if (++cases > max_cases) {
            blocks.push_back(
                fmt::format("\n_{} more cases with a SASS diff: see sass_diff.txt_\n", with_diff - max_cases));
            break;
        }
        // Results written before excerpts were made show the diff's first lines instead.
        const bool excerpt = !r.sass_diff_excerpt.empty();
        const std::string& text = excerpt ? r.sass_diff_excerpt : r.sass_diff;
        std::string lines;
        std::size_t n = 0, at = 0;
        // An excerpt is short by construction: its lines, and the marks where some are left out.
        for (; at < text.size() && (excerpt || n < max_lines); ++n) {
            const auto end = std::min(text.find('\n', at), text.size());
            std::string line = text.substr(at, end - at);
            // A fence inside the block would end it.
            for (std::size_t f; (f = line.find("```")) != std::string::npos;) line.replace(f, 3, "'''");
            lines += line + "\n";
            at = end + 1;
        }
        blocks.push_back(escape_control_characters(
            fmt::format("\n**SASS diff** of {} ({}) against the baseline's{}:\n\n```diff\n{}```\n",
                        cell(r.variant + " " + r.params_text), name_cell(r.arch),
                        excerpt ? ", the instructions that moved most in its first hunk (the whole diff is in "
                                  "sass_diff.txt)"
                        : at < r.sass_diff.size() ? ", first lines (the whole diff is in sass_diff.txt)"
                                                  : "",
                        lines)));
    }
    return blocks;
}

/// GitHub allows 1 MiB per step summary; several suites may append to the same one.
constexpr std::size_t step_summary_limit = 1024 * 1024;

} // namespace

std::string markdown_summary(const RunReport& report, std::size_t max_bytes)
{
    const Totals t = totals(report, report.fail_on_improvement);
    const bool failing = t.failing();
    std::string head = fmt::format(
        "## harness: {} — {}\n\n", cell(report.suite),
        failing ? fmt::format(":x: {} regressed, {}{}{} failed", t.regressed,
                              t.not_gated ? fmt::format("{} not gated, ", t.not_gated) : "",
                              t.removed_failing ? fmt::format("{} removed, ", t.removed_failing) : "", t.failed)
                : std::string(":white_check_mark: passed"));
    head += fmt::format("{} on {}{}{}{}\n\n", report.mode == RunMode::static_tier ? "static tier" : "GPU run",
                        cell(report.device_name.empty() ? report.arch : report.device_name),
                        report.shard.sharded() ? ", shard " + report.shard.text() + " of the sweep points" : "",
                        report.git_revision.empty() ? "" : ", revision " + cell(report.git_revision),
                        report.baseline_files.empty()
                            ? ", no baselines"
                            : fmt::format(", compared with {} baseline files", report.baseline_files.size()));
    head += "| passed | failed | regressed | not gated | skipped | improved | waived |\n"
            "|---:|---:|---:|---:|---:|---:|---:|\n";
    head += fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", t.passed, t.failed, t.regressed, t.not_gated,
                        t.skipped, t.improved, t.waived);
    if (t.unchanged > 0)
        head += fmt::format("\n{} of the skipped cases are **unchanged**: not run, their SASS identical to the "
                            "baseline's (`--changed-only`); carried, not measured, not gated\n",
                            t.unchanged);
    const GateCounts g = gate_counts(report);
    head += fmt::format("\nGated: {}{}\n", gate_counts_text(g),
                        g.compared + g.expected == 0 ? " — **nothing was gated**" : "");

    // The rows that need attention, most serious first.
    std::vector<std::string> rows;
    const Verdict order[] = {Verdict::regressed, Verdict::expect_failed, Verdict::not_measured,
                             Verdict::not_gated, Verdict::improved,      Verdict::waived};
    for (const Verdict wanted : order)
        for (const auto& r : report.results)
            for (const auto& v : r.verdicts)
                if (v.verdict == wanted)
                    rows.push_back(escape_control_characters(fmt::format(
                        "| {} | {} | {} | {} | {} | {} | {} | {} |\n", verdict_name(v.verdict),
                        cell(r.variant + " " + r.params_text), name_cell(r.arch), name_cell(v.metric),
                        number(v.baseline), number(v.value), cell(v.message) + recent_history(v), cell(v.location))));
    for (const auto& r : report.results)
        if (case_status_fails(r.status))
            rows.push_back(escape_control_characters(fmt::format(
                "| {} | {} | {} | | | | {} | |\n", case_status_name(r.status), cell(r.variant + " " + r.params_text),
                name_cell(r.arch), cell(r.message.substr(0, std::min<std::size_t>(r.message.size(), 500))))));
    for (const auto& r : report.removed)
        rows.push_back(escape_control_characters(fmt::format(
            "| removed | {} | | | | | {} | |\n", cell(r.variant + " " + r.params_text),
            cell(fmt::format("{} rows in {} of a case the suite no longer has{}", r.rows, r.baseline,
                             r.fails ? " (CI mode: failing until `harness baseline update` drops them)" : "")))));

    // Then every figure compared with its baseline, case by case.
    const std::string comparison_head = "\n### Figures against the baseline\n\n"
                                        "| case | arch | metric | reference | current | difference | % | noise | "
                                        "verdict |\n|---|---|---|---:|---:|---:|---:|---:|---|\n";
    const std::size_t attention_rows = rows.size();
    // Then the first lines of each failing case's SASS diff against its baseline's.
    for (auto& block : sass_diff_blocks(report)) rows.push_back(std::move(block));
    // Then the cliffs along scanned axes, map by map.
    for (auto& block : cliff_blocks(report)) rows.push_back(std::move(block));
    const std::size_t first_comparison_row = rows.size();
    for (const auto& r : report.results)
        for (const auto& v : r.verdicts)
            if (compared_with_baseline(v)) rows.push_back(escape_control_characters(comparison_row(r, v)));

    // Names and messages come from files: their control characters are shown, not obeyed.
    std::string out = escape_control_characters(head);
    if (attention_rows > 0)
        out += "\n| verdict | case | arch | metric | baseline | value | message | source |\n"
               "|---|---|---|---|---:|---:|---|---|\n";
    const std::string truncated_note =
        "\n_… {} more rows left out to keep this summary under {} KiB; see results.json_\n";
    const std::size_t reserve = truncated_note.size() + 32;
    std::size_t shown = 0;
    for (const auto& row : rows) {
        const std::string& before = shown == first_comparison_row ? comparison_head : std::string();
        if (out.size() + before.size() + row.size() + reserve > max_bytes) break;
        out += before;
        out += row;
        ++shown;
    }
    if (shown < rows.size()) out += fmt::format(fmt::runtime(truncated_note), rows.size() - shown, max_bytes / 1024);
    if (out.size() > max_bytes) out.resize(max_bytes); // only for absurdly small limits
    return out;
}

bool append_to_step_summary(const std::string& text)
{
    const char* path = std::getenv("GITHUB_STEP_SUMMARY");
    if (!path || !*path) return false;
    std::error_code ec;
    const auto existing = std::filesystem::file_size(path, ec);
    const std::size_t used = ec ? 0 : static_cast<std::size_t>(existing);
    std::ofstream out(path, std::ios::app | std::ios::binary);
    if (!out) return false;
    if (used + text.size() <= step_summary_limit)
        out << text << "\n";
    else if (used + 200 < step_summary_limit)
        out << "\n_harness: the job summary is full; see summary.md in the reports_\n";
    return static_cast<bool>(out);
}

} // namespace harness::report
