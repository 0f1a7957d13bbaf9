#include "harness/compare/compare_run.hxx"

#include "harness/compare/access_baseline.hxx"
#include "harness/compare/sass_baseline.hxx"
#include "harness/compare/sass_gate.hxx"

#include "harness/compare/cliff_gate.hxx"
#include "harness/compare/rules.hxx"
#include "harness/compare/waivers.hxx"
#include "harness/core/case_figures.hxx"
#include "harness/core/file_transaction.hxx"
#include "harness/core/metrics.hxx"
#include "harness/core/text.hxx"
#include "harness/suite/sweep.hxx"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <functional>
#include <map>
#include <set>
#include <tuple>

namespace harness::compare {

namespace fs = std::filesystem;

namespace {

/// The top source line for a regression of `metric`: hotspots are largest first. A launch's own
/// figure ("global_ld_sectors@rstd_kernel") looks only at lines of that launch's kernel.
const Hotspot* top_hotspot(const CaseResult& r, std::string_view name)
{
    const auto [metric, label] = split_launch_metric(name);
    const auto info = find_metric(metric);
    if (!info || info->roles.hotspot.metric.empty()) return nullptr;
    const HotspotFamily& family = info->roles.hotspot;
    std::string entry;
    for (const auto& l : r.launches)
        if (!label.empty() && l.label == label) entry = l.entry;
    const Hotspot* any = nullptr;
    for (const auto& h : r.hotspots) {
        if (h.metric != family.metric) continue;
        if (!entry.empty() && !names_kernel(h.kernel, entry)) continue;
        if (family.access.empty() || h.access == family.access) return &h;
        if (!any) any = &h;
    }
    return any;
}

/// The worst predicted access that explains a regression of the predicted figure `name`: of its
/// family's access kind (any global, or any shared access) and of the launch it names; accesses are
/// worst first.
const PredictedAccess* top_predicted_access(const CaseResult& r, std::string_view name)
{
    const auto [metric, label] = split_launch_metric(name);
    const auto info = find_metric(metric);
    if (!info || info->collector != Collector::access_model || info->roles.hotspot.metric.empty()) return nullptr;
    const HotspotFamily& family = info->roles.hotspot;
    const bool shared = family.metric == metric::predicted_excess_shared_wavefronts;
    for (const auto& a : r.predicted_accesses) {
        if (!label.empty() && a.launch != label) continue;
        if (a.is_shared() != shared || a.excess() <= 0) continue;
        if (family.access.empty() || a.access == family.access) return &a;
    }
    return nullptr;
}

/// The occupancy figures of a case, or of one of its launches (`label`, CaseLaunch::label).
/// "kernel rstd_kernel, launch 2 of 3 (kernels/layernorm.cu)": which launch a figure is of.
std::string launch_text(const CaseResult& r, const CaseLaunch& launch)
{
    const auto at = static_cast<std::size_t>(&launch - r.launches.data());
    return fmt::format("kernel {}, launch {} of {}{}", launch.entry, at + 1, r.launches.size(),
                       launch.file.empty() ? "" : " (" + launch.file + ")");
}

OccupancyFigures figures_of(const CaseResult& r, std::string_view label = {})
{
    const auto get = [&](const char* m) {
        return r.metric(label.empty() ? std::string(m) : launch_metric_name(m, label));
    };
    return {get(metric::registers), get(metric::static_shared_bytes), get(metric::dynamic_shared_bytes),
            get(metric::barriers),  get(metric::blocks_per_sm),       get(metric::theoretical_occupancy)};
}

OccupancyFigures figures_of(const BaselineFile& b, const CaseResult& r, std::string_view label = {})
{
    const auto get = [&](const char* m) -> std::optional<double> {
        const BaselineRow* row =
            b.find(r.variant, r.params_text, label.empty() ? std::string(m) : launch_metric_name(m, label));
        return row ? std::optional<double>(row->value) : std::nullopt;
    };
    return {get(metric::registers), get(metric::static_shared_bytes), get(metric::dynamic_shared_bytes),
            get(metric::barriers),  get(metric::blocks_per_sm),       get(metric::theoretical_occupancy)};
}

std::optional<compile::Occupancy> recompute(const compile::ArchLimits& limits, const OccupancyFigures& f)
{
    if (!f.registers || !f.blocks_per_sm || !f.theoretical_occupancy || *f.blocks_per_sm < 1) return std::nullopt;
    const double warps = *f.theoretical_occupancy * limits.max_warps_per_sm / *f.blocks_per_sm;
    const int threads = static_cast<int>(std::lround(warps)) * limits.warp_size;
    if (threads < 1 || threads > limits.max_threads_per_block) return std::nullopt;
    const int shared = static_cast<int>(f.static_shared_bytes.value_or(0) + f.dynamic_shared_bytes.value_or(0));
    compile::OccupancyOptions options;
    options.barriers_per_block = static_cast<int>(f.barriers.value_or(0));
    options.shared_opt_in = shared > 48 * 1024;
    try {
        compile::Occupancy o =
            compile::theoretical_occupancy(limits, threads, static_cast<int>(*f.registers), shared, options);
        // What was measured wins over the model (e.g. a carveout preference the model did not see).
        o.blocks_per_sm = static_cast<int>(*f.blocks_per_sm);
        o.occupancy = *f.theoretical_occupancy;
        return o;
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

/// GPU models other than `own` with a noisy baseline for this suite: the file names that are not architectures.
std::string other_gpu_models(const fs::path& suite_dir, const std::string& own)
{
    std::vector<std::string> models;
    std::error_code ec;
    if (!fs::is_directory(suite_dir, ec)) return "";
    for (const auto& entry : fs::directory_iterator(suite_dir, ec)) {
        const std::string key = entry.path().stem().string();
        if (is_gpu_model_baseline(entry.path()) && key != own) models.push_back(key);
    }
    std::sort(models.begin(), models.end());
    return fmt::format("{}", fmt::join(models, ", "));
}

/// Whether this run should have measured `info` for `r`: static resources always (every compiled
/// kernel has them, in either tier), a collector's other figures when the case holds one of them
/// (a timed case has every time figure, a profiled one every counter of the suite's set).
bool measured_by_this_run(const MetricInfo& info, const CaseResult& r, const suite::Suite& suite)
{
    if (info.collector == Collector::derived || info.collector == Collector::verification) return false;
    if (info.collector == Collector::resources) return true;
    const bool collected =
        suite.metrics.empty() ? info.in_default_set
                              : std::find(suite.metrics.begin(), suite.metrics.end(), info.name) != suite.metrics.end();
    if (!collected) return false;
    return std::any_of(r.metrics.begin(), r.metrics.end(), [&](const auto& m) {
        const auto other = find_metric(m.name);
        return other && other->collector == info.collector;
    });
}

/// A figure the baseline holds for this case and this kind of run measures, but the run lacks, is
/// "not measured" and fails: a gate that silently loses a figure would pass whatever it did.
void add_not_measured(CaseResult& r, const suite::Suite& suite, const suite::VariantSpec& spec,
                      std::initializer_list<const BaselineFile*> files)
{
    for (const BaselineFile* file : files) {
        if (!file) continue;
        for (const BaselineRow& row : file->rows) {
            if (row.variant != r.variant || row.params != r.params_text || r.metric(row.metric)) continue;
            // A launch the variant no longer has (its kernel renamed, a launch removed) has no
            // figures to lose: the variant's own figures still gate it.
            const std::string_view label = split_launch_metric(row.metric).second;
            if (!label.empty() && std::none_of(r.launches.begin(), r.launches.end(),
                                               [&](const CaseLaunch& l) { return l.label == label; }))
                continue;
            const auto info = find_metric(row.metric);
            if (!info || suite.rule_for(spec, row.metric).kind == RuleKind::ignore) continue;
            // A prediction the model could not make is never gated: it says why, and does not fail.
            if (info->collector == Collector::access_model) {
                const Rule rule = suite.rule_for(spec, row.metric);
                if (!r.not_predicted.empty() && rule.kind != RuleKind::report) {
                    MetricVerdict v;
                    v.metric = row.metric;
                    v.verdict = Verdict::skipped;
                    v.baseline = row.value;
                    v.rule = rule.text;
                    v.tolerance = tolerance_band(rule);
                    v.not_compared = "not predicted: " + r.not_predicted.front();
                    v.message = fmt::format("{}: {}", row.metric, v.not_compared);
                    r.verdicts.push_back(std::move(v));
                }
                continue;
            }
            if (!measured_by_this_run(*info, r, suite)) continue;
            MetricVerdict v;
            v.metric = row.metric;
            v.verdict = Verdict::not_measured;
            v.rule = "measured";
            v.message = fmt::format("{}: the baseline holds it and this run measures it, but this run has no "
                                    "value for it; the gate would pass whatever it is",
                                    row.metric);
            r.verdicts.push_back(std::move(v));
        }
    }
}

/// Judges every cliff map of `report` (judge_cliff_map) and gives each verdict to its carrier case,
/// waivers applied, so that the run's totals count it (core/cliff_map.hxx). Called under the
/// suite's baseline read lock.
void judge_cliffs(harness::RunReport& report, const suite::Suite& suite, const CompareOptions& options,
                  const std::vector<Waiver>& waivers, const std::string& today,
                  const std::function<std::string(const fs::path&)>& shown)
{
    std::map<std::string, std::optional<CliffBaselineFile>> files; // by key
    for (auto& map : report.cliff_maps) {
        map.verdicts.clear();
        const std::string key = cliff_baseline_key(map, report.device_name);
        auto it = files.find(key);
        if (it == files.end()) {
            const fs::path path = cliff_baseline_path(options.baseline_dir, suite.name, key);
            std::optional<CliffBaselineFile> file;
            if (fs::exists(path)) {
                file = read_cliff_baseline(path);
                check_baseline_identity(*file, path.string(), suite.name, key);
                report.baseline_files.push_back(shown(path));
                if (const std::size_t unknown = rows_of_unknown_maps(*file, suite); unknown > 0)
                    report.comparison_notes.push_back(
                        fmt::format("{} holds {} rows of cliff maps the suite cannot have (a variant, axis or value "
                                    "of the other parameters it does not have): they gate nothing, and `harness "
                                    "baseline update` drops them",
                                    shown(path), unknown));
            } else {
                report.comparison_notes.push_back(fmt::format(
                    "no cliff baseline {}{}: record one with `harness baseline update{} {}`", shown(path),
                    options.ci ? " (CI mode: its cliff maps fail as not gated)" : "",
                    report.mode == RunMode::static_tier ? " --static --arch " + key : "", report.suite_file));
            }
            it = files.emplace(key, std::move(file)).first;
        }
        for (auto& v : judge_cliff_map(map, suite, it->second ? &*it->second : nullptr, options.ci)) {
            const auto case_at = [&](const std::string& params_text) {
                return std::find_if(report.results.begin(), report.results.end(), [&](const CaseResult& r) {
                    return r.variant == map.variant && r.arch == map.arch && r.params_text == params_text;
                });
            };
            auto carrier = case_at(v.carrier);
            // A GPU scan times the axis between its ends without making those points cases: the
            // case at the scan's first value carries a verdict placed between them.
            if (const suite::ParamSpec* axis = suite.scanned_param();
                carrier == report.results.end() && axis && !axis->values.empty()) {
                const std::string first = suite::point_text(suite, map.axis, axis->values.front(), map.other_params);
                if ((carrier = case_at(first)) != report.results.end()) v.carrier = first;
            }
            if (carrier == report.results.end() || carrier->status != CaseStatus::passed) {
                map.verdicts.push_back(std::move(v));
                continue;
            }
            // The carrier's other verdicts have had their waivers: only this one is waived here.
            CaseResult alone;
            alone.suite = carrier->suite;
            alone.variant = carrier->variant;
            alone.params_text = carrier->params_text;
            alone.verdicts = {v.judgement};
            apply_waivers(alone, waivers, today);
            v.judgement = alone.verdicts.front();
            carrier->verdicts.push_back(v.judgement);
            map.verdicts.push_back(std::move(v));
        }
    }
}

} // namespace

std::optional<std::string> occupancy_cliff(const std::string& arch, const OccupancyFigures& before,
                                           const OccupancyFigures& after)
{
    const compile::ArchLimits* limits = compile::find_arch_limits(arch);
    if (!limits) return std::nullopt;
    const auto b = recompute(*limits, before);
    const auto a = recompute(*limits, after);
    if (!b || !a || std::abs(b->occupancy - a->occupancy) < 1e-9) return std::nullopt;
    return compile::describe_occupancy_cliff(*b, *a);
}

namespace {

/// The rule a figure of `spec` is judged by: the suite's, with a `report` rule made exact under
/// --strict.
Rule figure_rule(const suite::Suite& suite, const suite::VariantSpec& spec, const std::string& name,
                 const CompareOptions& options)
{
    Rule rule = suite.rule_for(spec, name);
    if (rule.kind == RuleKind::report && options.strict) {
        rule.kind = RuleKind::exact;
        rule.text = "exact (--strict)";
    }
    return rule;
}

/// The verdict on a figure its baseline does not hold: no baseline file (`has_file` false; a noisy
/// figure recorded only on other GPU models, `noisy_elsewhere`, is skipped), or no row in it. In
/// CI mode neither gates.
MetricVerdict verdict_without_baseline(const MetricInfo& info, const std::string& name, double value, const Rule& rule,
                                       bool has_file, const std::string& noisy_elsewhere, const CompareOptions& options)
{
    MetricVerdict v;
    v.metric = name;
    v.value = value;
    v.rule = rule.text;
    v.tolerance = tolerance_band(rule);
    v.source = baseline_source(rule);
    if (has_file) {
        v.verdict = options.ci ? Verdict::not_gated : Verdict::no_baseline;
        v.message = fmt::format("{}: not in the baseline", name);
    } else if (info.stability != Stability::exact && !noisy_elsewhere.empty()) {
        v.verdict = options.ci ? Verdict::not_gated : Verdict::skipped;
        v.message =
            fmt::format("{} is noisy and gated only on the GPU model it was recorded on ({})", name, noisy_elsewhere);
        if (v.verdict == Verdict::skipped) v.not_compared = v.message;
    } else {
        v.verdict = options.ci ? Verdict::not_gated : Verdict::no_baseline;
        v.message = fmt::format("{}: no baseline file", name);
    }
    return v;
}

/// A figure judged against its baseline `row` by `rule`: the time by its samples, the others by value.
MetricVerdict judge_figure(const MetricInfo& info, const Rule& rule, const BaselineRow& row, double value,
                           const CaseResult& r, const std::string& name, const CompareOptions& options)
{
    MetricVerdict v = rule.kind == RuleKind::samples ? judge_samples(info, rule, row.samples, r.time_samples_us)
                                                     : judge_value(info, rule, row.value, value);
    v.metric = name;
    if (v.verdict == Verdict::no_baseline && options.ci) v.verdict = Verdict::not_gated;
    return v;
}

/// What a judged figure's message adds: for a figure that moved and bears on occupancy, the
/// occupancy cliff between baseline and run (`cliffs` keeps it per launch, computed once); for a
/// regression, the predicted access that rose against the baseline's (`accesses`) or the worst
/// predicted line, or the top source line; and which launch the figure is of (`label`, none: the
/// variant's own). Whether an improvement means a stale baseline is said once the whole run is
/// judged (advise_on_improvements).
void explain_verdict(MetricVerdict& v, const MetricInfo& info, const CaseResult& r, const std::string& name,
                     std::string_view label, const BaselineFile* exact,
                     std::map<std::string, std::optional<std::string>>& cliffs,
                     const std::vector<PredictedAccess>* accesses)
{
    const bool moved =
        v.verdict == Verdict::regressed || v.verdict == Verdict::improved || v.verdict == Verdict::drifted;
    if (moved && info.roles.occupancy != OccupancyRole::none) {
        auto known = cliffs.find(std::string(label));
        if (known == cliffs.end())
            known = cliffs
                        .emplace(std::string(label),
                                 occupancy_cliff(r.arch, figures_of(*exact, r, label), figures_of(r, label)))
                        .first;
        const auto& cliff = known->second;
        if (cliff)
            v.message = info.roles.occupancy == OccupancyRole::measures ? "occupancy cliff: " + *cliff
                                                                        : v.message + "; occupancy cliff: " + *cliff;
        else if (v.verdict == Verdict::drifted)
            v.message += "; theoretical occupancy unchanged";
    }
    if (v.verdict == Verdict::regressed && info.collector == Collector::access_model) {
        // The access whose figure rose against the same access in the baseline (`accesses`); without
        // the baseline's accesses, the worst access now.
        if (const auto rise = accesses ? risen_access(*accesses, r.predicted_accesses, name) : std::nullopt) {
            v.location = fmt::format("{}:{}", rise->match.now->file, rise->match.now->line);
            v.message += "; access that rose: " + rise->text;
        } else if (const PredictedAccess* a = top_predicted_access(r, name)) {
            v.location = fmt::format("{}:{}", a->file, a->line);
            v.message += fmt::format("; worst line: {}, kernel {}", a->text(), a->kernel);
        }
    } else if (v.verdict == Verdict::regressed)
        if (const Hotspot* h = top_hotspot(r, name)) {
            v.location = fmt::format("{}:{}", h->file, h->line);
            v.message += fmt::format("; top source line {} ({} in {}: {:.0f} excess of {:.0f})", v.location, h->access,
                                     h->kernel, h->excess, h->actual);
        }
    const CaseLaunch* launch = nullptr;
    for (const auto& l : r.launches)
        if (!label.empty() && l.label == label) launch = &l;
    if (launch) v.message = launch_text(r, *launch) + ": " + v.message;
}

/// The verdict of one `expect:` rule on the case's figure: passed, failed (with the top source
/// line), or skipped when the run did not measure it.
MetricVerdict judge_expectation(const CaseResult& r, const suite::ExpectSpec& e)
{
    MetricVerdict v;
    v.metric = e.metric;
    v.rule = "expect " + e.rule.text;
    v.source = VerdictSource::expectation;
    const auto value = r.metric(e.metric);
    const auto info = find_metric(e.metric);
    if (!value) {
        v.verdict = Verdict::skipped;
        v.not_compared = "not measured in this run";
        v.message = fmt::format("expect {} {}: {}", e.metric, e.rule.text, v.not_compared);
        return v;
    }
    v.value = value;
    if (expect_holds(e.rule, *value)) {
        v.verdict = Verdict::passed;
        return v;
    }
    v.verdict = Verdict::expect_failed;
    v.message = fmt::format("{} is {}, expected {} (suite line {})", e.metric,
                            info ? format_value(*info, *value) : fmt::format("{}", *value),
                            info ? expect_condition_text(*info, e.rule) : e.rule.text, e.where.line);
    if (const Hotspot* h = top_hotspot(r, e.metric)) {
        v.location = fmt::format("{}:{}", h->file, h->line);
        v.message += fmt::format("; top source line {}", v.location);
    }
    return v;
}

} // namespace

void compare_case(CaseResult& r, const suite::Suite& suite, const BaselineFile* exact, const BaselineFile* noisy,
                  const std::string& noisy_elsewhere, const CompareOptions& options,
                  const std::vector<PredictedAccess>* accesses)
{
    r.verdicts.clear();
    if (r.status != CaseStatus::passed) return;
    const suite::VariantSpec* variant = suite.find_variant(r.variant);
    const suite::VariantSpec none;
    const suite::VariantSpec& spec = variant ? *variant : none;
    // The variant's own figures, then each launch's ("registers@rstd_kernel"), judged alike.
    std::map<std::string, std::optional<std::string>> cliffs; // by launch label, once known
    for (const auto& [info, name] : case_figure_names(r)) {
        const auto value = r.metric(name);
        if (!value) continue;
        const Rule rule = figure_rule(suite, spec, name, options);
        if (rule.kind == RuleKind::ignore) continue;
        const BaselineFile* file = info.stability == Stability::exact ? exact : noisy;
        const BaselineRow* row = file ? file->find(r.variant, r.params_text, name) : nullptr;
        if (!row) {
            r.verdicts.push_back(
                verdict_without_baseline(info, name, *value, rule, file != nullptr, noisy_elsewhere, options));
            continue;
        }
        MetricVerdict v = judge_figure(info, rule, *row, *value, r, name, options);
        explain_verdict(v, info, r, name, split_launch_metric(name).second, exact, cliffs, accesses);
        r.verdicts.push_back(std::move(v));
    }

    add_not_measured(r, suite, spec, {exact, noisy});

    for (const auto& e : suite.expectations_for(spec))
        // Judged on the cliff maps (judge_cliff_maps), not on a case's figures.
        if (!suite::is_cliff_expectation(e.metric)) r.verdicts.push_back(judge_expectation(r, e));
}

/// The SASS gate of one case (sass_gate.hxx), against the SASS baseline of its architecture.
void judge_case_sass(CaseResult& r, const suite::Suite& suite, const BaselineFile* exact, const CompareOptions& options,
                     std::map<fs::path, std::optional<SassBaseline>>& files)
{
    const suite::VariantSpec* variant = suite.find_variant(r.variant);
    if (!variant) return;
    const fs::path path = sass_baseline_path(options.baseline_dir, suite.name, r.arch);
    auto it = files.find(path);
    if (it == files.end()) it = files.emplace(path, read_sass_baseline(path)).first;
    judge_sass(r, suite, *variant, it->second ? it->second->find(r.variant, r.params_text) : nullptr, exact, options);
}

/// What the run's improvements say about their baseline, once every verdict is known. Only where
/// nothing in the run regressed is a baseline stale and worth recording again: an improvement that
/// came with a regression of its own case (a spill that frees registers and buys occupancy) is the
/// regression's side, and `harness baseline update` would record every figure of the run, the
/// regressions of other cases too.
void advise_on_improvements(harness::RunReport& report)
{
    // By case (variant, arch, params): the figures that regressed there.
    std::map<std::tuple<std::string, std::string, std::string>, std::vector<std::string>> regressed;
    const bool run_regressed = has_regressions(report);
    for (const auto& r : report.results) {
        auto& own = regressed[{r.variant, r.arch, r.params_text}];
        for (const auto& v : r.verdicts)
            if (verdict_blocks_baseline_update(v.verdict) && std::find(own.begin(), own.end(), v.metric) == own.end())
                own.push_back(v.metric);
    }
    const auto advice = [&](const std::vector<std::string>& own) -> std::string {
        if (!own.empty())
            return fmt::format("; it came with this case's regression ({}): the baseline is not stale, record none",
                               fmt::join(own, ", "));
        if (run_regressed)
            return "; the baseline is stale, but `harness baseline update` would record this run's regressions "
                   "too: mend them first";
        return "; the baseline is stale: run `harness baseline update`";
    };
    for (auto& r : report.results)
        for (auto& v : r.verdicts)
            if (v.verdict == Verdict::improved) v.message += advice(regressed[{r.variant, r.arch, r.params_text}]);
    for (auto& map : report.cliff_maps)
        for (auto& v : map.verdicts)
            if (v.judgement.verdict == Verdict::improved)
                v.judgement.message += advice(regressed[{map.variant, map.arch, v.carrier}]);
}

/// The cases the baseline files compared with (by shown path) hold and the suite no longer has,
/// file by file in the order the files were read; each fails in CI mode (`ci`).
std::vector<harness::RemovedCase>
removed_cases(const suite::Suite& suite, const std::vector<std::pair<std::string, const BaselineFile*>>& files, bool ci)
{
    std::set<std::pair<std::string, std::string>> cases;
    for (const auto& c : suite::expand_cases(suite)) cases.emplace(suite.variants[c.variant].name, c.params_text);
    std::vector<harness::RemovedCase> removed;
    for (const auto& [shown, file] : files) {
        std::map<std::pair<std::string, std::string>, std::size_t> at; // case -> its entry in `removed`
        for (const auto& row : file->rows) {
            if (cases.contains({row.variant, row.params})) continue;
            const auto [it, fresh] = at.try_emplace({row.variant, row.params}, removed.size());
            if (fresh) removed.push_back({row.variant, row.params, shown, 0, ci});
            ++removed[it->second].rows;
        }
    }
    return removed;
}

void compare_run(harness::RunReport& report, const suite::Suite& suite, const CompareOptions& options)
{
    const fs::path waiver_file =
        options.waiver_file.empty() ? options.baseline_dir / "waivers.yaml" : options.waiver_file;
    // The default file may be absent; one named on the command line must be there.
    const std::vector<Waiver> waivers = read_waivers(waiver_file, !options.waiver_file.empty());
    const std::string today = options.today.empty() ? today_utc() : options.today;
    // A second comparison (merged shards gated again) replaces the first.
    report.baseline_files.clear();
    report.comparison_notes.clear();
    report.removed.clear();

    std::map<std::string, std::optional<BaselineFile>> files;      // by path
    std::vector<std::pair<std::string, const BaselineFile*>> read; // as shown, in the order read
    // The suite's baseline files are read under one shared lock: an update lands before the reads or
    // after them, never between, and one that a kill left half done is completed first.
    const FolderReadLock baselines_lock(options.baseline_dir / suite.name);
    // Reports name baseline files relative to the suite's project.
    const auto shown = [&](const fs::path& path) {
        std::error_code ec;
        const fs::path relative = fs::relative(path, suite.project_root, ec);
        return ec || relative.empty() || relative.native().starts_with("..") ? path.string() : relative.string();
    };
    const auto load = [&](const fs::path& path) -> const BaselineFile* {
        const std::string key = path.string();
        auto it = files.find(key);
        if (it == files.end()) {
            std::optional<BaselineFile> file;
            if (baselines_lock.found() && fs::exists(path)) {
                file = read_baseline(path);
                check_baseline_identity(*file, key, suite.name, path.stem().string());
                report.baseline_files.push_back(shown(path));
                read.emplace_back(shown(path), nullptr);
            } else {
                report.comparison_notes.push_back(fmt::format(
                    "no baseline {}{}: record one with `harness baseline update{}{} {}`", shown(path),
                    options.ci ? " (CI mode: its figures fail as not gated)" : "",
                    report.mode == RunMode::static_tier ? " --static" : "",
                    report.mode == RunMode::static_tier ? " --arch " + path.stem().string() : "", report.suite_file));
            }
            it = files.emplace(key, std::move(file)).first;
            if (it->second) read.back().second = &*it->second;
        }
        return it->second ? &*it->second : nullptr;
    };

    const bool gpu = report.mode != RunMode::static_tier;
    const std::string noisy_key = gpu ? noisy_baseline_key(report.device_name) : "";
    const fs::path suite_dir = options.baseline_dir / suite.name;
    const BaselineFile* noisy = gpu ? load(baseline_path(options.baseline_dir, suite.name, noisy_key)) : nullptr;
    const std::string elsewhere = gpu && !noisy ? other_gpu_models(suite_dir, noisy_key) : "";
    if (!elsewhere.empty())
        report.comparison_notes.push_back(
            fmt::format("noisy figures (time, achieved occupancy, DRAM bytes) have baselines for "
                        "{} only: skipped on {}",
                        elsewhere, report.device_name));

    std::map<fs::path, std::optional<SassBaseline>> sass_files;     // by path, read under the lock
    std::map<fs::path, std::optional<AccessBaseline>> access_files; // the same
    for (auto& r : report.results) {
        if (r.status != CaseStatus::passed) continue;
        const BaselineFile* exact = load(baseline_path(options.baseline_dir, suite.name, exact_baseline_key(r.arch)));
        const fs::path accesses_path = access_baseline_path(options.baseline_dir, suite.name, r.arch);
        auto accesses = access_files.find(accesses_path);
        if (accesses == access_files.end())
            accesses = access_files.emplace(accesses_path, read_access_baseline(accesses_path)).first;
        compare_case(r, suite, exact, noisy, elsewhere, options,
                     accesses->second ? accesses->second->find(r.variant, r.params_text) : nullptr);
        judge_case_sass(r, suite, exact, options, sass_files);
        apply_waivers(r, waivers, today);
    }
    judge_cliffs(report, suite, options, waivers, today, shown);
    report.removed = removed_cases(suite, read, options.ci);
    advise_on_improvements(report);
    for (const auto& w : waivers)
        if (w.expires < today && (w.suite == "*" || w.suite == suite.name))
            report.comparison_notes.push_back(
                fmt::format("waiver at {} expired on {} ({})", w.where, w.expires, w.reason));
}

} // namespace harness::compare
