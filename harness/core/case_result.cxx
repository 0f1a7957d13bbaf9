#include "harness/core/case_result.hxx"

#include "harness/core/enum_names.hxx"
#include "harness/core/error.hxx"
#include "harness/core/text.hxx"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <span>
#include <type_traits>
#include <utility>
#include <variant>

namespace harness {

namespace {

// Tables of names, several to a line: a name is looked up by value, or a value by its name.
// clang-format off
constexpr EnumName<CaseStatus> case_status_names[] = {
    {CaseStatus::passed, "passed"},               {CaseStatus::failed_verification, "failed_verification"},
    {CaseStatus::compile_error, "compile_error"}, {CaseStatus::launch_error, "launch_error"},
    {CaseStatus::fault, "fault"},                 {CaseStatus::timeout, "timeout"},
    {CaseStatus::skipped, "skipped"}};

constexpr EnumName<Verdict> verdict_names[] = {
    {Verdict::passed, "passed"},           {Verdict::regressed, "regressed"},         {Verdict::improved, "improved"},
    {Verdict::waived, "waived"},           {Verdict::expect_failed, "expect_failed"}, {Verdict::skipped, "skipped"},
    {Verdict::no_baseline, "no_baseline"}, {Verdict::drifted, "drifted"},             {Verdict::not_gated, "not_gated"},
    {Verdict::not_measured, "not_measured"}};

constexpr EnumName<OccupancyLimiter> occupancy_limiter_names[] = {
    {OccupancyLimiter::warps, "warps"},   {OccupancyLimiter::registers, "registers"},
    {OccupancyLimiter::shared_memory, "shared memory"}, {OccupancyLimiter::blocks, "blocks"},
    {OccupancyLimiter::barriers, "barriers"}};
// clang-format on

/// The value named `name` in `table`, or Error(bad_input) naming what was looked for.
template <typename Enum, std::size_t N>
Enum named(const EnumName<Enum> (&table)[N], const std::string& name, const char* what)
{
    if (const auto value = enum_from_name(table, name)) return *value;
    throw Error(ErrorKind::bad_input,
                "unknown " + std::string(what) + " '" + escape_control_characters(name.substr(0, 80)) + "'");
}

} // namespace

const char* case_status_name(CaseStatus status)
{
    return enum_name(case_status_names, status);
}

CaseStatus case_status_from_name(const std::string& name)
{
    return named(case_status_names, name, "case status");
}

bool case_status_fails(CaseStatus status)
{
    switch (status) {
    case CaseStatus::passed:
    case CaseStatus::skipped: return false;
    case CaseStatus::failed_verification:
    case CaseStatus::compile_error:
    case CaseStatus::launch_error:
    case CaseStatus::fault:
    case CaseStatus::timeout: return true;
    }
    return true;
}

const char* verdict_name(Verdict verdict)
{
    return enum_name(verdict_names, verdict);
}

Verdict verdict_from_name(const std::string& name)
{
    return named(verdict_names, name, "verdict");
}

VerdictSource verdict_source_of_rule(std::string_view rule)
{
    if (rule.starts_with("expect")) return VerdictSource::expectation;
    if (rule == "report") return VerdictSource::drift;
    return VerdictSource::baseline;
}

const char* occupancy_limiter_name(OccupancyLimiter limiter)
{
    return enum_name(occupancy_limiter_names, limiter);
}

OccupancyLimiter occupancy_limiter_from_name(const std::string& name)
{
    return named(occupancy_limiter_names, name, "occupancy limiter");
}

std::string occupancy_limiter_text(const std::optional<OccupancyLimiter>& limiter)
{
    return limiter ? occupancy_limiter_name(*limiter) : "";
}

bool verdict_fails(Verdict verdict, bool fail_on_improvement)
{
    switch (verdict) {
    case Verdict::regressed:
    case Verdict::expect_failed:
    case Verdict::not_gated:
    case Verdict::not_measured: return true;
    case Verdict::improved: return fail_on_improvement;
    case Verdict::passed:
    case Verdict::waived:
    case Verdict::no_baseline:
    case Verdict::skipped:
    case Verdict::drifted: return false;
    }
    return true;
}

std::optional<Verdict> worst_verdict(const CaseResult& r)
{
    // Most serious first.
    constexpr Verdict order[] = {
        Verdict::expect_failed, Verdict::regressed, Verdict::not_measured, Verdict::not_gated, Verdict::waived,
        Verdict::improved,      Verdict::drifted,   Verdict::no_baseline,  Verdict::passed,    Verdict::skipped};
    for (const Verdict v : order)
        for (const auto& mv : r.verdicts)
            if (mv.verdict == v) return v;
    return std::nullopt;
}

std::optional<double> CaseResult::metric(const std::string& name) const
{
    for (const auto& m : metrics)
        if (m.name == name) return m.value;
    return std::nullopt;
}

void CaseResult::set_metric(const std::string& name, double value)
{
    for (auto& m : metrics)
        if (m.name == name) {
            m.value = value;
            return;
        }
    metrics.push_back({name, value});
}

void to_json(nlohmann::json& j, const MetricVerdict& v)
{
    j = {{"metric", v.metric},
         {"verdict", verdict_name(v.verdict)},
         {"rule", v.rule},
         {"message", v.message},
         {"location", v.location}};
    j["baseline"] = v.baseline ? nlohmann::json(*v.baseline) : nlohmann::json(nullptr);
    j["value"] = v.value ? nlohmann::json(*v.value) : nlohmann::json(nullptr);
    if (v.unsure) j["unsure"] = true;
    if (v.tolerance)
        j["tolerance"] = {{"kind", tolerance_kind_name(v.tolerance->kind)}, {"amount", v.tolerance->amount}};
    if (!v.not_compared.empty()) j["not_compared"] = v.not_compared;
}

void from_json(const nlohmann::json& j, MetricVerdict& v)
{
    v.metric = j.at("metric").get<std::string>();
    v.verdict = verdict_from_name(j.at("verdict").get<std::string>());
    v.rule = j.value("rule", "");
    v.source = verdict_source_of_rule(v.rule);
    v.message = j.value("message", "");
    v.location = j.value("location", "");
    v.unsure = j.value("unsure", false);
    const auto number = [&](const char* key) -> std::optional<double> {
        if (!j.contains(key) || j.at(key).is_null()) return std::nullopt;
        return j.at(key).get<double>();
    };
    v.baseline = number("baseline");
    v.value = number("value");
    v.tolerance.reset();
    if (j.contains("tolerance")) {
        const auto& band = j.at("tolerance");
        const std::string kind = band.at("kind").get<std::string>();
        const auto known = tolerance_kind_from_name(kind);
        if (!known)
            throw Error(ErrorKind::bad_input, "unknown tolerance kind '" +
                                                  escape_control_characters(kind.substr(0, 80)) + "' of " +
                                                  escape_control_characters(v.metric.substr(0, 80)));
        v.tolerance = ToleranceBand{*known, band.at("amount").get<double>()};
    }
    v.not_compared = j.value("not_compared", "");
}

void to_json(nlohmann::json& j, const Hotspot& h)
{
    j = {{"metric", h.metric},   {"access", h.access},
         {"kernel", h.kernel},   {"file", h.file},
         {"line", h.line},       {"actual", h.actual},
         {"ideal", h.ideal},     {"excess", h.excess},
         {"snippet", h.snippet}, {"snippet_first_line", h.snippet_first_line}};
}

void from_json(const nlohmann::json& j, Hotspot& h)
{
    h.metric = j.at("metric").get<std::string>();
    h.access = j.value("access", "");
    h.kernel = j.value("kernel", "");
    h.file = j.value("file", "");
    h.line = j.value("line", 0);
    h.actual = j.value("actual", 0.0);
    h.ideal = j.value("ideal", 0.0);
    h.excess = j.value("excess", 0.0);
    h.snippet = j.value("snippet", std::vector<std::string>{});
    h.snippet_first_line = j.value("snippet_first_line", 0);
}

namespace {

/// One field of a cost and its name in results.json: seconds end in "_s", counts do not. Adding,
/// writing and reading a cost go through its list of fields, so that a new field is one row.
template <typename Cost> using CostField = std::pair<const char*, std::variant<double Cost::*, std::size_t Cost::*>>;

constexpr CostField<ProfileCost> profile_cost_fields[] = {{"setup_s", &ProfileCost::setup},
                                                          {"restore_s", &ProfileCost::restore},
                                                          {"l2_flush_s", &ProfileCost::l2_flush},
                                                          {"kernels_s", &ProfileCost::kernels},
                                                          {"sass_s", &ProfileCost::sass},
                                                          {"teardown_s", &ProfileCost::teardown},
                                                          {"range_passes", &ProfileCost::range_passes},
                                                          {"sass_runs", &ProfileCost::sass_runs},
                                                          {"enables", &ProfileCost::enables},
                                                          {"batches", &ProfileCost::batches},
                                                          {"batched", &ProfileCost::batched},
                                                          {"unbatched", &ProfileCost::unbatched},
                                                          {"remeasured", &ProfileCost::remeasured}};

constexpr CostField<TimingCost> timing_cost_fields[] = {
    {"setup_s", &TimingCost::setup}, {"samples_s", &TimingCost::samples}, {"teardown_s", &TimingCost::teardown},
    {"passes", &TimingCost::passes}, {"enables", &TimingCost::enables},   {"retaken", &TimingCost::retaken},
};

template <typename Cost> void add_fields(std::span<const CostField<Cost>> fields, Cost& to, const Cost& from)
{
    for (const auto& [key, field] : fields) std::visit([&](auto member) { to.*member += from.*member; }, field);
}

template <typename Cost> nlohmann::json fields_json(std::span<const CostField<Cost>> fields, const Cost& c)
{
    nlohmann::json j = nlohmann::json::object();
    for (const auto& [key, field] : fields) std::visit([&](auto member) { j[key] = c.*member; }, field);
    return j;
}

/// A field missing from the file is 0: older files lack the later fields.
template <typename Cost> void read_fields(std::span<const CostField<Cost>> fields, const nlohmann::json& j, Cost& c)
{
    for (const auto& [key, field] : fields)
        std::visit([&](auto member) { c.*member = j.value(key, std::remove_cvref_t<decltype(c.*member)>{}); }, field);
}

} // namespace

ProfileCost& ProfileCost::operator+=(const ProfileCost& o)
{
    add_fields<ProfileCost>(profile_cost_fields, *this, o);
    return *this;
}

void to_json(nlohmann::json& j, const ProfileCost& c)
{
    j = fields_json<ProfileCost>(profile_cost_fields, c);
    j["total_s"] = c.total();
    // Written only where it happened: most runs never measure again.
    if (c.remeasured == 0) j.erase("remeasured");
}

void from_json(const nlohmann::json& j, ProfileCost& c)
{
    read_fields<ProfileCost>(profile_cost_fields, j, c);
}

TimingCost& TimingCost::operator+=(const TimingCost& o)
{
    add_fields<TimingCost>(timing_cost_fields, *this, o);
    return *this;
}

void to_json(nlohmann::json& j, const TimingCost& c)
{
    j = fields_json<TimingCost>(timing_cost_fields, c);
}

void from_json(const nlohmann::json& j, TimingCost& c)
{
    read_fields<TimingCost>(timing_cost_fields, j, c);
}

CaseCost& CaseCost::operator+=(const CaseCost& o)
{
    prepare += o.prepare;
    reference += o.reference;
    verify += o.verify;
    timing += o.timing;
    timing_parts += o.timing_parts;
    profile += o.profile;
    return *this;
}

void to_json(nlohmann::json& j, const CaseCost& c)
{
    j = {{"prepare_s", c.prepare}, {"verify_s", c.verify}, {"timing_s", c.timing}, {"total_s", c.total()}};
    if (c.reference > 0) j["reference_s"] = c.reference;
    if (c.timing_parts.passes > 0) j["timing"] = c.timing_parts;
    if (c.profile.total() > 0) j["profile"] = c.profile;
}

void from_json(const nlohmann::json& j, CaseCost& c)
{
    c.prepare = j.value("prepare_s", 0.0);
    c.reference = j.value("reference_s", 0.0);
    c.verify = j.value("verify_s", 0.0);
    c.timing = j.value("timing_s", 0.0);
    c.timing_parts = j.value("timing", TimingCost{});
    c.profile = j.value("profile", ProfileCost{});
}

namespace {

/// The "occupancy_limiter" of a case or launch: absent or "" where it is not known.
std::optional<OccupancyLimiter> limiter_from_json(const nlohmann::json& j)
{
    const std::string name = j.value("occupancy_limiter", "");
    if (name.empty()) return std::nullopt;
    return occupancy_limiter_from_name(name);
}

} // namespace

void to_json(nlohmann::json& j, const CaseLaunch& l)
{
    j = {{"entry", l.entry}, {"file", l.file}};
    if (!l.label.empty()) j["label"] = l.label;
    if (l.occupancy_limiter) j["occupancy_limiter"] = occupancy_limiter_name(*l.occupancy_limiter);
    if (l.repeated) j["repeated"] = true;
}

std::string PredictedAccess::text() const
{
    // PTX without line information (a Triton or cuTile cubin's own) names no source line.
    const std::string where = fmt::format(
        "{} {}{}", file.empty() ? fmt::format("kernel {}, no source line:", kernel) : fmt::format("{}:{}", file, line),
        access, buffer.empty() ? "" : " " + buffer + "[]");
    if (is_shared())
        return fmt::format("{}: {:.4g} wavefronts per request, ideal {:.4g} (predicted)", where,
                           requests > 0 ? wavefronts / requests : 0.0,
                           requests > 0 ? ideal_wavefronts / requests : 0.0);
    return fmt::format("{}: {:.4g} sectors per request, ideal {:.4g} (predicted)", where,
                       requests > 0 ? sectors / requests : 0.0, requests > 0 ? ideal_sectors / requests : 0.0);
}

void to_json(nlohmann::json& j, const PredictedAccess& a)
{
    j = {{"kernel", a.kernel},
         {"launch", a.launch},
         {"file", a.file},
         {"line", a.line},
         {"access", a.access},
         {"buffer", a.buffer},
         {"order", a.order},
         {"opcode", a.opcode},
         {"requests", a.requests},
         {"sectors", a.sectors},
         {"ideal_sectors", a.ideal_sectors},
         {"wavefronts", a.wavefronts},
         {"ideal_wavefronts", a.ideal_wavefronts},
         {"excess", a.excess()},
         {"text", a.text()}};
}

void from_json(const nlohmann::json& j, PredictedAccess& a)
{
    a.kernel = j.value("kernel", "");
    a.launch = j.value("launch", "");
    a.file = j.value("file", "");
    a.line = j.value("line", 0);
    a.access = j.value("access", "");
    a.buffer = j.value("buffer", "");
    a.order = j.value("order", 0);
    a.opcode = j.value("opcode", "");
    a.requests = j.value("requests", 0.0);
    a.sectors = j.value("sectors", 0.0);
    a.ideal_sectors = j.value("ideal_sectors", 0.0);
    a.wavefronts = j.value("wavefronts", 0.0);
    a.ideal_wavefronts = j.value("ideal_wavefronts", 0.0);
}

void from_json(const nlohmann::json& j, CaseLaunch& l)
{
    l.label = j.value("label", "");
    l.entry = j.value("entry", "");
    l.file = j.value("file", "");
    l.occupancy_limiter = limiter_from_json(j);
    l.repeated = j.value("repeated", false);
}

void to_json(nlohmann::json& j, const CaseResult& r)
{
    nlohmann::json metrics = nlohmann::json::object();
    for (const auto& m : r.metrics) metrics[m.name] = m.value;
    j = {{"suite", r.suite},
         {"variant", r.variant},
         {"arch", r.arch},
         {"params", r.params},
         {"params_text", r.params_text},
         {"point", r.point},
         {"status", case_status_name(r.status)},
         {"message", r.message},
         {"occupancy_limiter", occupancy_limiter_text(r.occupancy_limiter)},
         {"metrics", metrics},
         {"time_samples_us", r.time_samples_us},
         {"hotspots", r.hotspots},
         {"verdicts", r.verdicts}};
    if (r.cost.total() > 0) j["cost"] = r.cost;
    if (!r.reused_metrics.empty()) j["reused_metrics"] = r.reused_metrics;
    if (!r.launches.empty()) j["launches"] = r.launches;
    if (!r.predicted_accesses.empty()) j["predicted_accesses"] = r.predicted_accesses;
    if (!r.not_predicted.empty()) j["not_predicted"] = r.not_predicted;
    if (!r.sass_lines.empty()) j["sass_lines"] = r.sass_lines;
    if (!r.sass_not_measured.empty()) j["sass_not_measured"] = r.sass_not_measured;
    if (!r.sass_diff.empty()) j["sass_diff"] = r.sass_diff;
    if (!r.sass_diff_excerpt.empty()) j["sass_diff_excerpt"] = r.sass_diff_excerpt;
    if (r.unchanged) j["unchanged"] = true;
}

void to_json(nlohmann::json& j, const SassLine& l)
{
    j = {{"kernel", l.kernel}, {"file", l.file}, {"line", l.line}, {"counts", l.counts}};
}

void from_json(const nlohmann::json& j, SassLine& l)
{
    l.kernel = j.at("kernel").get<std::string>();
    l.file = j.at("file").get<std::string>();
    l.line = j.at("line").get<int>();
    l.counts = j.at("counts").get<std::map<std::string, int>>();
}

void from_json(const nlohmann::json& j, CaseResult& r)
{
    r.suite = j.at("suite").get<std::string>();
    r.variant = j.at("variant").get<std::string>();
    r.arch = j.value("arch", "");
    r.params = j.at("params").get<std::map<std::string, std::int64_t>>();
    r.params_text = j.at("params_text").get<std::string>();
    r.point = j.value("point", std::size_t{0});
    r.status = case_status_from_name(j.at("status").get<std::string>());
    r.message = j.value("message", "");
    r.occupancy_limiter = limiter_from_json(j);
    r.metrics.clear();
    // A figure that is not a number (JSON has no NaN: it writes null) is left out, not an error.
    for (const auto& [name, value] : j.at("metrics").items())
        if (value.is_number()) r.metrics.push_back({name, value.get<double>()});
    r.time_samples_us = j.value("time_samples_us", std::vector<double>{});
    r.hotspots = j.value("hotspots", std::vector<Hotspot>{});
    r.verdicts = j.value("verdicts", std::vector<MetricVerdict>{});
    r.cost = j.value("cost", CaseCost{});
    r.reused_metrics = j.value("reused_metrics", std::vector<std::string>{});
    r.sass_lines = j.value("sass_lines", std::vector<SassLine>{});
    r.sass_not_measured = j.value("sass_not_measured", "");
    r.sass_diff = j.value("sass_diff", "");
    r.sass_diff_excerpt = j.value("sass_diff_excerpt", "");
    r.unchanged = j.value("unchanged", false);
    r.launches = j.value("launches", std::vector<CaseLaunch>{});
    r.predicted_accesses = j.value("predicted_accesses", std::vector<PredictedAccess>{});
    r.not_predicted = j.value("not_predicted", std::vector<std::string>{});
}

} // namespace harness
