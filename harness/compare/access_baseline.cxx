#include "harness/compare/access_baseline.hxx"

#include "harness/core/error.hxx"
#include "harness/core/metrics.hxx"
#include "harness/core/text.hxx"
#include "harness/suite/sweep.hxx"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <set>
#include <tuple>

namespace harness::compare {

namespace fs = std::filesystem;

namespace {

constexpr const char* access_marker = "# harness access baseline";
const std::vector<std::string> access_columns = {"variant", "params", "kernel", "launch",   "access", "buffer",
                                                 "order",   "file",   "line",   "requests", "actual", "ideal"};
const std::set<std::string, std::less<>> access_kinds = {"global load", "global store", "global atomic",
                                                         "shared load", "shared store", "shared atomic"};

/// Where an access's row goes among its case's: by what matches it, so that rows keep their place
/// when lines move or figures change.
auto row_order(const PredictedAccess& a)
{
    return std::tie(a.launch, a.kernel, a.access, a.buffer, a.order, a.file, a.line);
}

std::vector<std::string> row_of(const std::pair<std::string, std::string>& key, const PredictedAccess& a)
{
    const bool shared = a.is_shared();
    return {key.first,
            key.second,
            a.kernel,
            a.launch,
            a.access,
            a.buffer,
            std::to_string(a.order),
            a.file,
            std::to_string(a.line),
            number_text(a.requests),
            number_text(shared ? a.wavefronts : a.sectors),
            number_text(shared ? a.ideal_wavefronts : a.ideal_sectors)};
}

int parse_count(const std::string& text, const std::string& name, int at, int column, const char* field)
{
    const auto n = parse_decimal_integer(text);
    if (!n || *n < 0 || *n > 100'000'000)
        throw InputError(
            name, at, column, field,
            fmt::format("\"{}\" is not a count from 0 to 10^8", escape_control_characters(text.substr(0, 80))));
    return static_cast<int>(*n);
}

double parse_figure(const std::string& text, const std::string& name, int at, int column, const char* field)
{
    const auto v = parse_decimal_number(text);
    if (!v || *v < 0)
        throw InputError(
            name, at, column, field,
            fmt::format("\"{}\" is not a number of 0 or more", escape_control_characters(text.substr(0, 80))));
    return *v;
}

PredictedAccess parse_row(const std::vector<std::string>& row, const std::string& name, int at)
{
    PredictedAccess a;
    a.kernel = row[2];
    a.launch = row[3];
    if (!access_kinds.contains(row[4]))
        throw InputError(name, at, 5, "access",
                         fmt::format("\"{}\" is not an access kind (global or shared load, store or atomic)",
                                     escape_control_characters(row[4].substr(0, 80))));
    a.access = row[4];
    a.buffer = row[5];
    a.order = parse_count(row[6], name, at, 7, "order");
    a.file = row[7];
    a.line = parse_count(row[8], name, at, 9, "line");
    a.requests = parse_figure(row[9], name, at, 10, "requests");
    const double actual = parse_figure(row[10], name, at, 11, "actual");
    const double ideal = parse_figure(row[11], name, at, 12, "ideal");
    (a.is_shared() ? a.wavefronts : a.sectors) = actual;
    (a.is_shared() ? a.ideal_wavefronts : a.ideal_sectors) = ideal;
    return a;
}

/// What a predicted figure says of one access: its sectors (or wavefronts) per request, its excess
/// over the ideal, or its count.
enum class Measure { per_request, excess, count };

struct FigureFamily {
    Measure measure = Measure::count;
    bool shared = false;
    std::string_view access; ///< "global load", or empty for any of the space
    std::string_view label;  ///< the launch, or empty for the variant's own figure
};

std::optional<FigureFamily> family_of(std::string_view name)
{
    const auto [metric, label] = split_launch_metric(name);
    const auto info = find_metric(metric);
    if (!info || info->collector != Collector::access_model || info->roles.hotspot.metric.empty()) return std::nullopt;
    FigureFamily f;
    f.measure = metric.ends_with("_per_request")          ? Measure::per_request
                : metric.starts_with("predicted_excess_") ? Measure::excess
                                                          : Measure::count;
    f.shared = info->roles.hotspot.metric == metric::predicted_excess_shared_wavefronts;
    f.access = info->roles.hotspot.access;
    f.label = label;
    return f;
}

double actual_of(const PredictedAccess& a)
{
    return a.is_shared() ? a.wavefronts : a.sectors;
}

double ideal_of(const PredictedAccess& a)
{
    return a.is_shared() ? a.ideal_wavefronts : a.ideal_sectors;
}

double per_request(const PredictedAccess& a, double figure)
{
    return a.requests > 0 ? figure / a.requests : 0.0;
}

double measure_of(const PredictedAccess& a, Measure m)
{
    switch (m) {
    case Measure::per_request: return per_request(a, actual_of(a));
    case Measure::excess: return a.excess();
    case Measure::count: return actual_of(a);
    }
    return 0.0;
}

/// A new access counts from what it would be at its ideal.
double new_access_from(const PredictedAccess& a, Measure m)
{
    return m == Measure::per_request ? per_request(a, ideal_of(a)) : 0.0;
}

/// Whole numbers whole ("786432"), others to four digits ("3.906").
std::string figure_text(double v)
{
    if (std::abs(v) < 1e15 && v == std::round(v)) return fmt::format("{:.0f}", v);
    return fmt::format("{:.4g}", v);
}

std::string rise_text(const AccessMatch& m, Measure measure, double from, double to)
{
    const PredictedAccess& now = *m.now;
    const std::string unit = now.is_shared() ? "wavefronts" : "sectors";
    // PTX without line information (a Triton or cuTile cubin's own) names no source line.
    const std::string where =
        fmt::format("kernel {}, {}{}{}", now.kernel,
                    now.file.empty() ? std::string("no source line: ") : fmt::format("{}:{} ", now.file, now.line),
                    now.access, now.buffer.empty() ? "" : " " + now.buffer + "[]");
    const std::string ideal = figure_text(per_request(now, ideal_of(now)));
    const std::string rate_now = figure_text(per_request(now, actual_of(now)));
    std::string moved;
    if (m.before && m.before->file != now.file)
        moved = fmt::format("; {}:{} in the baseline", m.before->file, m.before->line);
    else if (m.before && m.before->line != now.line)
        moved = fmt::format("; line {} in the baseline", m.before->line);
    if (!m.before)
        return fmt::format("{}: new (no match in the baseline): {} {} per request, ideal {}, excess {} {} (predicted)",
                           where, rate_now, unit, ideal, figure_text(now.excess()), unit);
    const std::string rate_before = figure_text(per_request(*m.before, actual_of(*m.before)));
    switch (measure) {
    case Measure::per_request:
        return fmt::format("{}: {} -> {} {} per request, ideal {} (predicted{})", where, figure_text(from),
                           figure_text(to), unit, ideal, moved);
    case Measure::excess: {
        const std::string requests =
            m.before->requests == now.requests
                ? ""
                : fmt::format(" ({} -> {} requests)", figure_text(m.before->requests), figure_text(now.requests));
        return fmt::format("{}: {} -> {} {} per request{}, ideal {}, excess {} -> {} {} (predicted{})", where,
                           rate_before, rate_now, unit, requests, ideal, figure_text(from), figure_text(to), unit,
                           moved);
    }
    case Measure::count:
        return fmt::format("{}: {} -> {} {} (predicted{})", where, figure_text(from), figure_text(to), unit, moved);
    }
    return where;
}

} // namespace

const std::vector<PredictedAccess>* AccessBaseline::find(const std::string& variant, const std::string& params) const
{
    const auto it = cases.find({variant, params});
    return it == cases.end() ? nullptr : &it->second;
}

fs::path access_baseline_path(const fs::path& dir, const std::string& suite, const std::string& arch)
{
    const fs::path exact = baseline_path(dir, suite, exact_baseline_key(arch));
    return exact.parent_path() / (exact.stem().string() + ".accesses.csv");
}

std::string access_baseline_text(const AccessBaseline& file)
{
    std::vector<std::vector<std::string>> rows;
    for (const auto& [key, accesses] : file.cases) {
        std::vector<const PredictedAccess*> sorted;
        for (const auto& a : accesses) sorted.push_back(&a);
        std::stable_sort(sorted.begin(), sorted.end(), [](const PredictedAccess* a, const PredictedAccess* b) {
            return row_order(*a) < row_order(*b);
        });
        for (const PredictedAccess* a : sorted) rows.push_back(row_of(key, *a));
    }
    return table_file_text(access_marker, file, access_columns, rows);
}

AccessBaseline parse_access_baseline(const std::string& text, const std::string& name)
{
    AccessBaseline file;
    const TableRows table = parse_table_file(text, name, access_marker, access_columns, file);
    for (std::size_t i = 0; i < table.rows.size(); ++i)
        file.cases[{table.rows[i][0], table.rows[i][1]}].push_back(parse_row(table.rows[i], name, table.lines[i]));
    return file;
}

std::optional<AccessBaseline> read_access_baseline(const fs::path& path)
{
    std::error_code ec;
    if (!fs::exists(path, ec)) return std::nullopt;
    return parse_access_baseline(read_baseline_text(path, "access baseline file"), path.string());
}

std::vector<AccessMatch> match_accesses(const std::vector<PredictedAccess>& baseline,
                                        const std::vector<PredictedAccess>& current)
{
    using Key = std::tuple<std::string, std::string, std::string, std::string>; // launch, kernel, access, buffer
    std::map<Key, std::pair<std::vector<std::size_t>, std::vector<std::size_t>>> groups;
    const auto key_of = [](const PredictedAccess& a) { return Key{a.launch, a.kernel, a.access, a.buffer}; };
    for (std::size_t i = 0; i < baseline.size(); ++i) groups[key_of(baseline[i])].first.push_back(i);
    for (std::size_t i = 0; i < current.size(); ++i) groups[key_of(current[i])].second.push_back(i);

    std::vector<std::optional<std::size_t>> match(current.size()); // current -> baseline
    std::vector<bool> matched(baseline.size(), false);
    const auto pair = [&](std::size_t now, std::size_t before) {
        match[now] = before;
        matched[before] = true;
    };
    for (auto& [key, group] : groups) {
        auto& [before, now] = group;
        const auto by_rank = [](const std::vector<PredictedAccess>& accesses) {
            return [&accesses](std::size_t a, std::size_t b) { return accesses[a].order < accesses[b].order; };
        };
        std::stable_sort(before.begin(), before.end(), by_rank(baseline));
        std::stable_sort(now.begin(), now.end(), by_rank(current));
        if (before.size() != now.size())
            // Accesses added or removed: those that stayed at their line first.
            for (const std::size_t n : now)
                for (const std::size_t b : before)
                    if (!matched[b] && baseline[b].file == current[n].file && baseline[b].line == current[n].line) {
                        pair(n, b);
                        break;
                    }
        std::vector<std::size_t> rest_before, rest_now;
        for (const std::size_t b : before)
            if (!matched[b]) rest_before.push_back(b);
        for (const std::size_t n : now)
            if (!match[n]) rest_now.push_back(n);
        for (std::size_t k = 0; k < rest_before.size() && k < rest_now.size(); ++k) pair(rest_now[k], rest_before[k]);
    }

    std::vector<AccessMatch> out;
    for (std::size_t i = 0; i < current.size(); ++i)
        out.push_back({&current[i], match[i] ? &baseline[*match[i]] : nullptr});
    for (std::size_t i = 0; i < baseline.size(); ++i)
        if (!matched[i]) out.push_back({nullptr, &baseline[i]});
    return out;
}

std::optional<AccessRise> risen_access(const std::vector<PredictedAccess>& baseline,
                                       const std::vector<PredictedAccess>& current, std::string_view name)
{
    const auto family = family_of(name);
    if (!family) return std::nullopt;
    std::optional<AccessRise> best;
    for (const AccessMatch& m : match_accesses(baseline, current)) {
        if (!m.now) continue;
        const PredictedAccess& a = *m.now;
        if (!family->label.empty() && a.launch != family->label) continue;
        if (a.is_shared() != family->shared || (!family->access.empty() && a.access != family->access)) continue;
        const double to = measure_of(a, family->measure);
        const double from = m.before ? measure_of(*m.before, family->measure) : new_access_from(a, family->measure);
        const double rise = to - from;
        if (!(rise > 1e-9 * std::max(1.0, std::abs(from)))) continue;
        // The largest rise; between equal ones, the access of more requests (the current order, worst
        // first, decides the rest).
        if (best && (rise < best->to - best->from ||
                     (rise == best->to - best->from && a.requests <= best->match.now->requests)))
            continue;
        best = AccessRise{m, from, to, {}};
    }
    if (best) best->text = rise_text(best->match, family->measure, best->from, best->to);
    return best;
}

std::vector<std::pair<fs::path, std::string>> access_baseline_changes(const suite::Suite& suite,
                                                                      const harness::RunReport& report,
                                                                      const fs::path& dir,
                                                                      std::vector<std::string>& unchanged)
{
    std::set<std::pair<std::string, std::string>> in_suite;
    for (const auto& c : suite::expand_cases(suite)) in_suite.emplace(suite.variants[c.variant].name, c.params_text);
    // Only a case predicted in full has totals that are gated, and so accesses that name a rise.
    std::map<std::string, std::vector<const CaseResult*>> by_arch;
    for (const auto& r : report.results)
        if (r.status == CaseStatus::passed && r.not_predicted.empty() && r.metric(metric::predicted_global_sectors))
            by_arch[r.arch].push_back(&r);

    std::vector<std::pair<fs::path, std::string>> files;
    for (const auto& [arch, results] : by_arch) {
        const fs::path path = access_baseline_path(dir, suite.name, arch);
        AccessBaseline file = read_access_baseline(path).value_or(AccessBaseline{});
        if (!file.metadata.empty()) check_baseline_identity(file, path.string(), suite.name, path.stem().string());
        const std::string before = file.metadata.empty() ? "" : access_baseline_text(file);
        std::erase_if(file.cases, [&](const auto& entry) { return !in_suite.contains(entry.first); });
        for (const CaseResult* r : results) file.cases[{r->variant, r->params_text}] = r->predicted_accesses;
        // Compared without the writer's lines (revision, date): a no-op update leaves it as it was.
        if (!before.empty() && before == access_baseline_text(file)) {
            unchanged.push_back(path.string());
            continue;
        }
        file.set_identity(suite.name, path.stem().string());
        file.set_meta("arch", arch);
        file.set_meta("figures", "predicted accesses; actual and ideal are sectors (global) or wavefronts (shared) "
                                 "over the launch");
        file.set_writer(report.cuda_version, report.harness_version, report.git_revision, report.timestamp);
        files.emplace_back(path, access_baseline_text(file));
    }
    return files;
}

} // namespace harness::compare
