#include "harness/profile/ncu_crosscheck.hxx"

#include "harness/core/error.hxx"
#include "harness/core/metrics.hxx"
#include "harness/core/text.hxx"

#include <algorithm>
#include <cmath>
#include <csv.h>
#include <fmt/format.h>
#include <map>

namespace harness::profile {

namespace {

constexpr const char* duration = "gpu__time_duration.sum";

struct CsvRows {
    std::vector<std::vector<std::string>> rows;
    std::vector<std::string> current;
};

void on_field(void* text, std::size_t size, void* data)
{
    static_cast<CsvRows*>(data)->current.emplace_back(static_cast<const char*>(text), size);
}

void on_row(int, void* data)
{
    auto* rows = static_cast<CsvRows*>(data);
    rows->rows.push_back(std::move(rows->current));
    rows->current.clear();
}

std::optional<double> number(std::string text)
{
    std::erase(text, ','); // ncu groups digits
    return parse_decimal_number(text);
}

} // namespace

std::string ncu_metric_name(const MetricInfo& m)
{
    // ncu's SASS metrics carry a rollup, as the range profiler's counters do.
    return m.collector == Collector::sass_metrics ? std::string(m.source) + ".sum" : std::string(m.source);
}

std::vector<CrosscheckMetric> crosscheck_metrics()
{
    std::vector<CrosscheckMetric> metrics;
    for (const auto& m : metric_table()) {
        const NcuCounterpart& ncu = m.roles.ncu;
        if (!ncu.compared) continue;
        metrics.push_back({std::string(m.name), ncu_metric_name(m), ncu.tolerance, ncu.absolute, ncu.floor,
                           m.roles.counter.launches, m.roles.counter.percent});
    }
    // Counts first, which agree within their tolerance, then traffic with a floor, then fractions
    // in points: the order the table's readers compare them in.
    const auto group = [](const CrosscheckMetric& m) { return m.absolute ? 2 : m.floor > 0 ? 1 : 0; };
    std::stable_sort(metrics.begin(), metrics.end(),
                     [&](const CrosscheckMetric& a, const CrosscheckMetric& b) { return group(a) < group(b); });
    return metrics;
}

std::string ncu_metric_list()
{
    // What a run measures by default: an opt-in metric (the hardware wavefronts) would cost ncu
    // passes for figures a default run does not have to compare with.
    std::string list = duration;
    for (const auto& m : crosscheck_metrics())
        if (find_metric(m.ours)->in_default_set) list += "," + m.ncu;
    return list;
}

std::string ncu_dram_metric_list()
{
    std::string list = duration;
    for (const auto& m : crosscheck_metrics())
        if (m.ncu.starts_with("dram__")) list += "," + m.ncu;
    return list;
}

std::vector<NcuKernel> parse_ncu_csv(const std::string& text, const std::string& file)
{
    // ncu prints "==PROF==" lines and the program's own output around the CSV: keep quoted lines.
    std::string csv_text;
    for (std::size_t pos = 0; pos < text.size();) {
        const std::size_t end = std::min(text.find('\n', pos), text.size());
        const std::string line = text.substr(pos, end - pos);
        if (line.starts_with("\"")) csv_text += line + "\n";
        pos = end + 1;
    }
    csv_parser parser;
    csv_init(&parser, CSV_APPEND_NULL);
    CsvRows rows;
    csv_parse(&parser, csv_text.data(), csv_text.size(), on_field, on_row, &rows);
    csv_fini(&parser, on_field, on_row, &rows);
    csv_free(&parser);

    std::size_t header = rows.rows.size();
    std::size_t name_column = 0;
    for (std::size_t r = 0; r < rows.rows.size() && header == rows.rows.size(); ++r)
        for (std::size_t c = 0; c < rows.rows[r].size(); ++c)
            if (rows.rows[r][c] == "Kernel Name") {
                header = r;
                name_column = c;
            }
    if (header == rows.rows.size())
        throw Error(ErrorKind::bad_input,
                    fmt::format("{}: no \"Kernel Name\" column; expected `ncu --csv --page raw` output", file));
    const auto& names = rows.rows[header];
    std::vector<NcuKernel> kernels;
    for (std::size_t r = header + 1; r < rows.rows.size(); ++r) {
        const auto& row = rows.rows[r];
        if (row.size() != names.size() || row[0].empty()) continue; // the units row has no ID
        NcuKernel k;
        k.name = row[name_column];
        for (std::size_t c = 0; c < row.size(); ++c)
            if (names[c].find("__") != std::string::npos)
                if (const auto v = number(row[c])) k.values[names[c]] = *v;
        kernels.push_back(std::move(k));
    }
    return kernels;
}

std::vector<CrosscheckRow> crosscheck(const harness::RunReport& ours, const std::vector<std::vector<NcuKernel>>& ncu)
{
    std::vector<CrosscheckRow> rows;
    const std::vector<CrosscheckMetric> metrics = crosscheck_metrics();
    for (const auto& r : ours.results) {
        const std::string name = r.variant + " " + r.params_text;
        for (const auto& m : metrics) {
            const auto mine = r.metric(m.ours);
            if (!mine) continue;
            // The case's kernels in the last run that measured this metric.
            std::vector<const NcuKernel*> kernels;
            for (auto run = ncu.rbegin(); run != ncu.rend() && kernels.empty(); ++run)
                for (const auto& k : *run)
                    // "<range>/<kernel signature>" with --print-nvtx-rename kernel, or the range alone.
                    if ((k.name == name || k.name.starts_with(name + "/")) && k.values.contains(m.ncu))
                        kernels.push_back(&k);
            if (kernels.empty()) continue;
            const auto duration_of = [](const NcuKernel* k) {
                const auto it = k->values.find(duration);
                return it == k->values.end() ? 0.0 : it->second;
            };
            double total_duration = 0;
            for (const auto* k : kernels) total_duration += duration_of(k);
            double theirs = 0;
            for (const auto* k : kernels) {
                const double v = k->values.at(m.ncu);
                if (m.launches == LaunchCombine::sum)
                    theirs += v;
                else
                    theirs += v * (total_duration > 0 ? duration_of(k) / total_duration : 1.0 / kernels.size());
            }
            if (m.percent) theirs /= 100.0;
            CrosscheckRow row{name, m.ours, *mine, theirs, false};
            const double diff = std::fabs(*mine - theirs);
            if (m.tolerance == 0)
                row.within = diff == 0;
            else if (m.absolute)
                row.within = diff <= m.tolerance;
            else
                row.within = diff <= std::max(m.tolerance * std::max(std::fabs(theirs), 1.0), m.floor);
            rows.push_back(row);
        }
    }
    return rows;
}

std::vector<CrosscheckRow> time_vs_ncu(const harness::RunReport& ours, const std::vector<std::vector<NcuKernel>>& ncu)
{
    std::vector<CrosscheckRow> rows;
    for (const auto& r : ours.results) {
        const std::string name = r.variant + " " + r.params_text;
        // One figure per ncu run that has the case: the sum of its kernels' durations.
        std::vector<double> per_run;
        for (const auto& run : ncu) {
            double sum = 0;
            bool found = false;
            for (const auto& k : run)
                if ((k.name == name || k.name.starts_with(name + "/")) && k.values.contains(duration)) {
                    sum += k.values.at(duration) * 1e-3; // ns -> us
                    found = true;
                }
            if (found) per_run.push_back(sum);
        }
        if (per_run.empty()) continue;
        std::sort(per_run.begin(), per_run.end());
        const std::size_t n = per_run.size();
        const double theirs = n % 2 ? per_run[n / 2] : (per_run[n / 2 - 1] + per_run[n / 2]) / 2;
        const auto mine = r.metric(metric::time_median);
        if (!mine) continue;
        CrosscheckRow row{name, metric::time_median, *mine, theirs, std::fabs(*mine - theirs) <= 0.02 * theirs};
        row.ncu_low = per_run.front();
        row.ncu_high = per_run.back();
        row.within_ncu_spread = *mine >= 0.98 * row.ncu_low && *mine <= 1.02 * row.ncu_high;
        rows.push_back(row);
    }
    return rows;
}

std::string format_time_crosscheck(const std::vector<CrosscheckRow>& rows, double min_us)
{
    std::string out = fmt::format("{:<44} {:<16} {:>12} {:>12} {:>8}  {:>19}\n", "case", "figure", "harness us",
                                  "ncu us", "diff", "ncu runs, us");
    struct Tally {
        std::size_t cases = 0, within = 0, within_spread = 0;
        double worst = 0;
        std::string worst_case;
    };
    std::map<std::string, Tally> tallies;
    for (const auto& r : rows) {
        const double diff = r.ncu > 0 ? (r.ours - r.ncu) / r.ncu : 0;
        out += fmt::format("{:<44} {:<16} {:>12.3f} {:>12.3f} {:>+7.2f}%  {:>9.3f} to {:>6.3f}{}\n", r.case_name,
                           r.metric, r.ours, r.ncu, diff * 100, r.ncu_low, r.ncu_high,
                           r.within || !r.within_ncu_spread ? "" : "  (within ncu's spread)");
        if (r.ncu < min_us) continue;
        Tally& t = tallies[r.metric];
        ++t.cases;
        if (r.within) ++t.within;
        if (r.within_ncu_spread) ++t.within_spread;
        if (std::fabs(diff) >= std::fabs(t.worst)) {
            t.worst = diff;
            t.worst_case = r.case_name;
        }
    }
    for (const auto& [name, t] : tallies)
        out += fmt::format("{}: cases of {:g} us or more: {} of {} within 2 % of gpu__time_duration; largest "
                           "difference {:+.2f}% ({}); {} of {} within 2 % of the range of ncu's runs\n",
                           name, min_us, t.within, t.cases, t.worst * 100, t.worst_case, t.within_spread, t.cases);
    return out;
}

std::vector<CrosscheckRow> static_vs_driver(const harness::RunReport& static_run, const harness::RunReport& gpu_run)
{
    static const char* metrics[] = {metric::registers, metric::static_shared_bytes, metric::local_bytes,
                                    metric::blocks_per_sm, metric::theoretical_occupancy};
    std::vector<CrosscheckRow> rows;
    for (const auto& g : gpu_run.results) {
        for (const auto& s : static_run.results) {
            if (s.arch != gpu_run.arch || s.variant != g.variant || s.params_text != g.params_text) continue;
            for (const char* m : metrics) {
                const auto a = s.metric(m), b = g.metric(m);
                if (!a || !b) continue;
                rows.push_back({g.variant + " " + g.params_text, m, *a, *b, std::fabs(*a - *b) < 1e-9});
            }
        }
    }
    return rows;
}

namespace {

/// Whole numbers (counters, bytes) in full, so that equal counts read as equal; others to 6 digits.
std::string crosscheck_value(double v)
{
    if (std::fabs(v) < 1e15 && v == std::floor(v)) return fmt::format("{:.0f}", v);
    return fmt::format("{:.6g}", v);
}

double relative_difference(const CrosscheckRow& r)
{
    return r.ncu != 0 ? (r.ours - r.ncu) / r.ncu * 100.0 : (r.ours == 0 ? 0.0 : 100.0);
}

} // namespace

std::string format_crosscheck(const std::vector<CrosscheckRow>& rows, const std::string& ours,
                              const std::string& theirs)
{
    std::size_t width = 4;
    for (const auto& r : rows) width = std::max(width, r.case_name.size());
    std::string out =
        fmt::format("{:<{}}  {:<30}  {:>16}  {:>16}  {:>8}  {}\n", "case", width, "metric", ours, theirs, "diff", "");
    for (const auto& r : rows)
        out += fmt::format("{:<{}}  {:<30}  {:>16}  {:>16}  {:>7.2f}%  {}\n", r.case_name, width, r.metric,
                           crosscheck_value(r.ours), crosscheck_value(r.ncu), relative_difference(r),
                           r.within ? "ok" : "DIFFERS");

    // Per metric, in the order the rows name them: how many cases agree, and the worst one.
    struct Tally {
        std::size_t rows = 0, within = 0;
        const CrosscheckRow* worst = nullptr;
    };
    std::vector<std::string> order;
    std::map<std::string, Tally> tallies;
    for (const auto& r : rows) {
        auto [it, added] = tallies.try_emplace(r.metric);
        if (added) order.push_back(r.metric);
        Tally& t = it->second;
        ++t.rows;
        if (r.within) ++t.within;
        if (!t.worst || std::fabs(relative_difference(r)) > std::fabs(relative_difference(*t.worst))) t.worst = &r;
    }
    out += "\nper metric:\n";
    for (const auto& name : order) {
        const Tally& t = tallies.at(name);
        out += fmt::format("  {:<30}  {:>3} of {:>3} agree", name, t.within, t.rows);
        if (t.worst && relative_difference(*t.worst) != 0)
            out += fmt::format("; largest difference {:+.2f}% ({}: {} vs {})", relative_difference(*t.worst),
                               t.worst->case_name, crosscheck_value(t.worst->ours), crosscheck_value(t.worst->ncu));
        out += "\n";
    }
    const auto bad = std::count_if(rows.begin(), rows.end(), [](const auto& r) { return !r.within; });
    out += fmt::format("{} figures compared, {} equal or within tolerance, {} differ\n", rows.size(), rows.size() - bad,
                       bad);
    return out;
}

} // namespace harness::profile
