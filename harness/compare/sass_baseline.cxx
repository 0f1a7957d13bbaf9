#include "harness/compare/sass_baseline.hxx"

#include "harness/core/error.hxx"
#include "harness/core/metrics.hxx"
#include "harness/core/sass_code.hxx"
#include "harness/core/text.hxx"
#include "harness/suite/sweep.hxx"

#include <algorithm>
#include <fmt/format.h>
#include <set>
#include <tuple>

namespace harness::compare {

namespace fs = std::filesystem;

namespace {

constexpr const char* sass_marker = "# harness sass baseline";
const std::vector<std::string> sass_columns = {"variant", "params", "kernel", "file", "line", "counts"};
constexpr std::string_view prefix = "sass_";

/// "global_ld_128=6 shared_st_32=2".
std::string counts_text(const std::map<std::string, int>& counts)
{
    std::vector<std::string> parts;
    for (const auto& [metric, n] : counts)
        if (is_gated_sass_class(metric)) parts.push_back(fmt::format("{}={}", metric.substr(prefix.size()), n));
    return join(parts, " ");
}

std::map<std::string, int> parse_counts(const std::string& text, const std::string& name, int line)
{
    std::map<std::string, int> counts;
    for (std::string_view rest = text; !rest.empty();) {
        const auto space = rest.find(' ');
        const std::string_view part = rest.substr(0, space);
        rest = space == std::string_view::npos ? std::string_view{} : rest.substr(space + 1);
        if (part.empty()) continue;
        const auto equals = part.find('=');
        const std::string metric = std::string(prefix) + std::string(part.substr(0, equals));
        const auto n = equals == std::string_view::npos ? std::nullopt : parse_decimal_integer(part.substr(equals + 1));
        if (!is_gated_sass_class(metric) || !n || *n <= 0 || *n > 100'000'000)
            throw InputError(name, line, 6, "counts",
                             fmt::format("\"{}\" is not class=count of a gated SASS class",
                                         escape_control_characters(part.substr(0, 80))));
        counts[metric] = static_cast<int>(*n);
    }
    if (counts.empty()) throw InputError(name, line, 6, "counts", "no counts");
    return counts;
}

} // namespace

bool is_gated_sass_class(std::string_view metric)
{
    if (!metric.starts_with(prefix)) return false;
    const std::string_view c = metric.substr(prefix.size());
    return c.starts_with("global_") || c.starts_with("shared_") || c == "ldsm" || c == "local_ld" || c == "local_st" ||
           c == "async_copies" || c == "tma" || c == "tensor";
}

const std::vector<SassLine>* SassBaseline::find(const std::string& variant, const std::string& params) const
{
    const auto it = cases.find({variant, params});
    return it == cases.end() ? nullptr : &it->second;
}

fs::path sass_baseline_path(const fs::path& dir, const std::string& suite, const std::string& arch)
{
    const fs::path exact = baseline_path(dir, suite, exact_baseline_key(arch));
    return exact.parent_path() / (exact.stem().string() + ".sass.csv");
}

std::string sass_baseline_text(const SassBaseline& file)
{
    // Each case's lines in one order (kernel, file, line), whatever order the disassembly found them
    // in, so that where the project lies changes nothing in the file.
    std::vector<std::vector<std::string>> rows;
    for (const auto& [key, lines] : file.cases) {
        std::vector<const SassLine*> sorted;
        for (const auto& l : lines) sorted.push_back(&l);
        std::stable_sort(sorted.begin(), sorted.end(), [](const SassLine* a, const SassLine* b) {
            return std::tie(a->kernel, a->file, a->line) < std::tie(b->kernel, b->file, b->line);
        });
        for (const SassLine* l : sorted) {
            const std::string counts = counts_text(l->counts);
            if (!counts.empty())
                rows.push_back({key.first, key.second, l->kernel, l->file, std::to_string(l->line), counts});
        }
    }
    return table_file_text(sass_marker, file, sass_columns, rows);
}

SassBaseline parse_sass_baseline(const std::string& text, const std::string& name)
{
    SassBaseline file;
    const TableRows table = parse_table_file(text, name, sass_marker, sass_columns, file);
    for (std::size_t i = 0; i < table.rows.size(); ++i) {
        const auto& row = table.rows[i];
        const int at = table.lines[i];
        const auto line = parse_decimal_integer(row[4]);
        if (!line || *line < 0 || *line > 100'000'000)
            throw InputError(name, at, 5, "line", fmt::format("\"{}\" is not a line number", row[4].substr(0, 80)));
        file.cases[{row[0], row[1]}].push_back(
            {row[2], row[3], static_cast<int>(*line), parse_counts(row[5], name, at)});
    }
    return file;
}

std::optional<SassBaseline> read_sass_baseline(const fs::path& path)
{
    std::error_code ec;
    if (!fs::exists(path, ec)) return std::nullopt;
    return parse_sass_baseline(read_baseline_text(path, "SASS baseline file"), path.string());
}

std::vector<std::pair<fs::path, std::string>> sass_baseline_changes(const suite::Suite& suite,
                                                                    const harness::RunReport& report,
                                                                    const fs::path& dir,
                                                                    std::vector<std::string>& unchanged)
{
    std::set<std::pair<std::string, std::string>> in_suite;
    for (const auto& c : suite::expand_cases(suite)) in_suite.emplace(suite.variants[c.variant].name, c.params_text);
    std::map<std::string, std::vector<const CaseResult*>> by_arch;
    for (const auto& r : report.results)
        if (r.status == CaseStatus::passed && r.sass_not_measured.empty() && r.metric(metric::sass_instructions))
            by_arch[r.arch].push_back(&r);

    std::vector<std::pair<fs::path, std::string>> files;
    for (const auto& [arch, results] : by_arch) {
        const fs::path path = sass_baseline_path(dir, suite.name, arch);
        SassBaseline file = read_sass_baseline(path).value_or(SassBaseline{});
        if (!file.metadata.empty()) check_baseline_identity(file, path.string(), suite.name, path.stem().string());
        const std::string before = file.metadata.empty() ? "" : sass_baseline_text(file);
        std::erase_if(file.cases, [&](const auto& entry) { return !in_suite.contains(entry.first); });
        for (const CaseResult* r : results) {
            std::vector<SassLine> kept;
            for (const auto& l : r->sass_lines)
                if (!counts_text(l.counts).empty()) kept.push_back(l);
            file.cases[{r->variant, r->params_text}] = std::move(kept);
        }
        // Compared without the writer's lines (revision, date): a no-op update leaves it as it was.
        if (!before.empty() && before == sass_baseline_text(file)) {
            unchanged.push_back(path.string());
            continue;
        }
        file.set_identity(suite.name, path.stem().string());
        file.set_meta("arch", arch);
        file.set_writer(report.cuda_version, report.harness_version, report.git_revision, report.timestamp);
        files.emplace_back(path, sass_baseline_text(file));
    }
    return files;
}

fs::path sass_code_path(const fs::path& dir, const std::string& suite, const std::string& arch)
{
    const fs::path exact = baseline_path(dir, suite, exact_baseline_key(arch));
    return exact.parent_path() / (exact.stem().string() + ".sass.gz");
}

std::optional<SassCodeFile> read_sass_code(const fs::path& path, const std::string& suite, const std::string& arch)
{
    std::error_code ec;
    if (!fs::exists(path, ec)) return std::nullopt;
    const std::string raw = read_baseline_text(path, "SASS code file");
    const std::string text = raw.starts_with("\x1f\x8b") ? gunzip_text(raw, path.string()) : raw;
    SassCodeFile file = parse_sass_code(text, path.string());
    if (!suite.empty() && file.suite != suite)
        throw InputError(path.string(), 2, 1, "suite",
                         fmt::format("the file is suite \"{}\"'s, not \"{}\"'s", file.suite, suite));
    if (!arch.empty() && file.arch != arch)
        throw InputError(path.string(), 3, 1, "arch", fmt::format("the file is for {}, not {}", file.arch, arch));
    return file;
}

std::vector<std::pair<fs::path, std::string>> sass_code_changes(const suite::Suite& suite,
                                                                const harness::RunReport& report, const fs::path& dir,
                                                                std::vector<std::string>& unchanged)
{
    std::set<std::pair<std::string, std::string>> in_suite;
    for (const auto& c : suite::expand_cases(suite)) in_suite.emplace(suite.variants[c.variant].name, c.params_text);
    const bool gpu = report.mode != RunMode::static_tier;
    std::vector<std::pair<fs::path, std::string>> files;
    for (const auto& [arch, run_code] : report.sass_code) {
        const fs::path path = sass_code_path(dir, suite.name, arch);
        SassCodeFile file = read_sass_code(path, suite.name, arch).value_or(SassCodeFile{});
        const std::string before = file.suite.empty() ? "" : sass_code_text(file);
        file.suite = suite.name;
        file.arch = arch;
        std::erase_if(file.cases, [&](const auto& entry) { return !in_suite.contains(entry.first); });
        bool any = false;
        for (const auto& r : report.results) {
            if (r.arch != arch || r.status != CaseStatus::passed) continue;
            const auto it = run_code.cases.find({r.variant, r.params_text});
            if (it == run_code.cases.end()) continue;
            const SassCaseCode& now = gpu ? it->second.second : it->second.first;
            if (now.hash.empty()) continue;
            for (const auto& id : now.kernels)
                if (const SassKernelCode* k = run_code.kernel(id)) file.kernels.try_emplace(id, *k);
            auto& kept = file.cases[it->first];
            (gpu ? kept.second : kept.first) = now;
            any = true;
        }
        if (!any && before.empty()) continue;
        file.drop_unused_kernels();
        const std::string after = sass_code_text(file);
        if (after == before) {
            unchanged.push_back(path.string());
            continue;
        }
        files.emplace_back(path, gzip_text(after));
    }
    return files;
}

} // namespace harness::compare
