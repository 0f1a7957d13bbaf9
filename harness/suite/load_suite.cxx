// Loading a suite file: the entry points, and the suite as a whole (loader.hxx).

#include "harness/core/arch_limits.hxx"
#include "harness/core/error.hxx"
#include "harness/core/input_files.hxx"
#include "harness/core/metrics.hxx"
#include "harness/core/text.hxx"
#include "harness/suite/builtin_signatures.hxx"
#include "harness/suite/compile_params.hxx"
#include "harness/suite/loader.hxx"
#include "harness/suite/suite.hxx"
#include "harness/suite/sweep.hxx"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fmt/format.h>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <yaml-cpp/yaml.h>

namespace harness::suite {

namespace fs = std::filesystem;

Loader::Loader(fs::path file, LoadOptions options)
    : file_(std::move(file)), dir_(fs::absolute(file_).parent_path()), root_(project_root(file_)), options_(options)
{
}

void Loader::include_folders(Suite& s, const YAML::Node& root) const
{
    if (root["include"]) {
        for (const auto& dir : string_list(root["include"], "include")) {
            const fs::path p = resolve(root["include"], "include", dir);
            if (!fs::is_directory(p)) fail(root["include"], "include", "no such directory: " + p.string());
            check_inside_project(root["include"], "include", p);
            s.include_dirs.push_back(p);
        }
    } else if (fs::is_directory(dir_ / ".." / "kernels")) {
        const fs::path p = fs::weakly_canonical(dir_ / ".." / "kernels");
        check_inside_project(root, "include", p);
        s.include_dirs.push_back(p);
    }
}

void Loader::architectures_and_metrics(Suite& s, const YAML::Node& root) const
{
    s.archs = root["archs"] ? string_list(root["archs"], "archs") : std::vector<std::string>{"sm_80", "sm_90"};
    for (const auto& a : s.archs)
        if (!find_arch_limits(a)) {
            std::vector<std::string> known;
            for (const auto& limits : known_arch_limits()) known.emplace_back(limits.name);
            fail(root["archs"], "archs",
                 fmt::format("unknown architecture '{}'{}; one of {}", a.substr(0, 40), did_you_mean(a, known),
                             join(known)));
        }

    // Metrics to collect through the profiler; without the key, the metric table's default set.
    if (const YAML::Node metrics = root["metrics"]) {
        if (!metrics.IsSequence()) fail(metrics, "metrics", "expected a list of metric names");
        for (std::size_t i = 0; i < metrics.size(); ++i)
            s.metrics.push_back(metric_name(metrics[i], fmt::format("metrics[{}]", i)));
    }
}

std::set<std::string, std::less<>> Loader::sweep(Suite& s, const YAML::Node& root)
{
    const YAML::Node params = root["params"];
    expect_map(params, "params");
    if (params.size() == 0) fail(params, "params", "needs at least one parameter");
    std::set<std::string, std::less<>> names;
    for (const auto& kv : params) {
        const std::string name = kv.first.as<std::string>();
        if (names.contains(name)) fail(kv.first, "params." + name, "declared twice");
        s.params.push_back(param(name, kv.second, "params." + name));
        // One axis per suite: each map is then the scan at one value of every other parameter.
        if (s.params.back().scanned && scanned_)
            fail(kv.second, "params." + name,
                 fmt::format("a suite scans one parameter, and '{}' is scanned already; give this one a list or "
                             "a range ({{from, to, step}})",
                             s.scanned_param()->name));
        scanned_ = scanned_ || s.params.back().scanned;
        names.insert(name);
        param_order_.push_back(name);
    }
    std::size_t point_count = 1;
    for (const auto& p : s.params) {
        point_count *= p.values.size();
        if (point_count > max_cases)
            fail(params, "params",
                 fmt::format("the sweep has more than {} points (the product of every parameter's values)", max_cases));
    }
    variant_sweeps(s, root);
    // The points of the suite's own values and of each variant's: only the names and own values of
    // the variants matter here, and the reference's name, which has no values of its own.
    Suite sweep_only;
    sweep_only.params = s.params;
    if (root["reference"] && root["reference"].IsScalar()) sweep_only.reference = root["reference"].Scalar();
    for (const auto& [name, own] : variant_params_) {
        VariantSpec& v = sweep_only.variants.emplace_back();
        v.name = name;
        v.params = own;
    }
    points_ = sweep_points(sweep_only);
    if (points_.size() > max_cases)
        fail(params, "params",
             fmt::format("the sweep has {} points with the variants' own values, more than the {} allowed",
                         points_.size(), max_cases));
    for (const auto& point : points_) point_texts_.push_back(params_text(s, point));
    checked_points_.resize(points_.size());
    for (std::size_t p = 0; p < points_.size(); ++p) checked_points_[p] = p;
    archs_ = s.archs;
    archs_given_ = static_cast<bool>(root["archs"]);
    cliff_settings(s, root);
    return names;
}

void Loader::variant_sweeps(const Suite& s, const YAML::Node& root)
{
    const YAML::Node variants = root["variants"];
    if (!variants.IsMap()) return; // variant_list says what is wrong
    const std::string reference = root["reference"] && root["reference"].IsScalar() ? root["reference"].Scalar() : "";
    std::size_t own_cases = 0;
    for (const auto& kv : variants) {
        if (!kv.first.IsScalar() || !kv.second.IsMap() || !kv.second["params"]) continue;
        const std::string name = kv.first.Scalar();
        const std::string field = "variants." + name.substr(0, max_name_length) + ".params";
        const YAML::Node own = kv.second["params"];
        if (name == reference)
            fail(own, field,
                 "the reference runs at every point of every variant, with the suite's values; give values of its "
                 "own to the other variants only");
        if (s.scanned_param())
            fail(own, field,
                 fmt::format("the suite scans '{}', and its cliff maps compare the variants along the same points: "
                             "its variants take the suite's values",
                             s.scanned_param()->name));
        expect_map(own, field);
        std::vector<ParamSpec> values;
        for (const auto& param : own) {
            const std::string param_name = param.first.Scalar();
            const std::string f = prefixed(field, param_name.substr(0, max_name_length));
            if (std::none_of(s.params.begin(), s.params.end(),
                             [&](const ParamSpec& p) { return p.name == param_name; }))
                fail(param.first, f,
                     fmt::format("'{}' is no parameter of the suite{}; a variant gives its own values to the suite's "
                                 "parameters ({})",
                                 param_name.substr(0, max_name_length), did_you_mean(param_name, param_order_),
                                 join(param_order_)));
            if (param.second.IsMap() && param.second["scan"])
                fail(param.second, f, "a variant's values are a list or a range; only the suite scans a parameter");
            values.push_back(this->param(param_name, param.second, f));
        }
        // Counted before a point is built: the variants' values together may make a product of
        // every value far beyond what memory holds, while each variant's own is what runs.
        VariantSpec probe;
        probe.params = values;
        const std::size_t points = product_size(s, probe, max_cases);
        if (points > max_cases)
            fail(own, field,
                 fmt::format("the variant's values make more than {} points (the product of its own values and the "
                             "suite's for the other parameters)",
                             max_cases));
        own_cases += points;
        if (own_cases > max_cases)
            fail(own, field,
                 fmt::format("the variants with values of their own have {} cases up to here, more than the {} "
                             "allowed",
                             own_cases, max_cases));
        variant_params_[name] = std::move(values);
    }
}

void Loader::timing_and_compile_limits(Suite& s, const YAML::Node& root) const
{
    if (root["timing"]) {
        const YAML::Node t = root["timing"];
        check_keys(t, "timing", {"min_samples", "max_samples", "max_noise", "budget_s", "timeout_s", "l2_flush"});
        if (t["l2_flush"]) {
            const std::string when = scalar(t["l2_flush"], "timing.l2_flush");
            if (when != "launch" && when != "variant")
                fail(t["l2_flush"], "timing.l2_flush",
                     fmt::format("'{}' is neither `launch` (the L2 emptied before each launch) nor `variant` "
                                 "(once before the variant's launches)",
                                 when.substr(0, 80)));
            s.timing.l2_flush = when == "launch" ? L2Flush::each_launch : L2Flush::each_variant;
        }
        if (t["min_samples"])
            s.timing.min_samples = static_cast<int>(integer_in(t["min_samples"], "timing.min_samples", 1, 100000));
        if (t["max_samples"])
            s.timing.max_samples = static_cast<int>(integer_in(t["max_samples"], "timing.max_samples", 1, 100000));
        if (!t["max_samples"]) {
            s.timing.max_samples = std::max(s.timing.max_samples, s.timing.min_samples);
        } else if (s.timing.max_samples < s.timing.min_samples) {
            fail(t["max_samples"], "timing.max_samples",
                 fmt::format("{} is below timing.min_samples ({})", s.timing.max_samples, s.timing.min_samples));
        }
        if (t["max_noise"]) s.timing.max_noise = number_in(t["max_noise"], "timing.max_noise", 0.0, 1.0);
        if (t["budget_s"]) s.timing.budget_s = number_in(t["budget_s"], "timing.budget_s", 0.0, max_budget_s);
        if (t["timeout_s"]) {
            s.timing.timeout_s = number_in(t["timeout_s"], "timing.timeout_s", 0.0, max_timeout_s);
            if (s.timing.timeout_s <= 0) fail(t["timeout_s"], "timing.timeout_s", "must be positive");
        }
    }
    if (root["compile"]) {
        const YAML::Node c = root["compile"];
        check_keys(c, "compile", {"timeout_s", "memory_mib"});
        if (c["timeout_s"]) {
            s.compile_limits.timeout_s = number_in(c["timeout_s"], "compile.timeout_s", 0.0, 86400.0);
            if (s.compile_limits.timeout_s <= 0) fail(c["timeout_s"], "compile.timeout_s", "must be positive");
        }
        if (c["memory_mib"])
            s.compile_limits.memory_mib = integer_in(c["memory_mib"], "compile.memory_mib", 64, 1024 * 1024);
    }
}

void Loader::variant_list(Suite& s, const YAML::Node& variants, const std::set<std::string, std::less<>>& names,
                          const std::optional<Expression>& flops, const std::optional<Expression>& bytes)
{
    const std::vector<std::size_t> every_point = checked_points_;
    std::size_t case_count = 0;
    expect_map(variants, "variants");
    if (variants.size() == 0) fail(variants, "variants", "needs at least one variant");
    for (const auto& kv : variants) {
        const std::string name = kv.first.as<std::string>();
        if (const std::string problem = name_problem(name); !problem.empty())
            fail(kv.first, "variants." + name.substr(0, max_name_length),
                 fmt::format("the variant name {}; use 1 to 100 letters, digits, '_', '.' and '-', starting with "
                             "a letter, digit or '_'",
                             problem));
        if (s.find_variant(name)) fail(kv.first, "variants." + name, "declared twice");
        // Each variant's fields are checked at the points it runs at.
        VariantSpec probe;
        probe.name = name;
        if (const auto own = variant_params_.find(name); own != variant_params_.end()) probe.params = own->second;
        checked_points_.clear();
        for (const std::size_t p : every_point)
            if (runs_at(s, probe, points_[p])) checked_points_.push_back(p);
        case_count += checked_points_.size();
        VariantSpec v = variant(name, kv.second, "variants." + name, names, s.buffers);
        if (!v.flops) v.flops = flops;
        if (!v.bytes) v.bytes = bytes;
        s.variants.push_back(std::move(v));
    }
    checked_points_ = every_point;
    if (case_count > max_cases)
        fail(variants, "variants",
             variant_params_.empty()
                 ? fmt::format("{} variants x {} sweep points make more than the {} cases allowed", s.variants.size(),
                               points_.size(), max_cases)
                 : fmt::format("the variants at their points make {} cases, more than the {} allowed", case_count,
                               max_cases));
}

Suite Loader::suite(const YAML::Node& root)
{
    if (!root.IsMap()) fail(root, "", "a suite file is a YAML map (see docs/suite-format.md)");
    check_keys(root, "",
               {"suite", "description", "include", "archs", "params", "reference", "tolerance", "timing", "buffers",
                "flops", "bytes", "variants", "compare", "expect", "metrics", "compile", "cliffs", "triton_version"},
               {"suite", "params", "reference", "variants"});
    Suite s;
    s.file = file_;
    s.project_root = root_;
    s.name = scalar(root["suite"], "suite");
    // The name becomes a folder under baselines/ and the report folder.
    if (const std::string problem = name_problem(s.name); !problem.empty())
        fail(root["suite"], "suite",
             fmt::format("the suite name {}; use 1 to 100 letters, digits, '_', '.' and '-', starting with a "
                         "letter, digit or '_'",
                         problem));
    if (root["description"]) s.description = scalar(root["description"], "description");

    include_folders(s, root);
    architectures_and_metrics(s, root);

    const std::set<std::string, std::less<>> names = sweep(s, root);

    if (root["tolerance"]) s.tolerance = tolerance(root["tolerance"], "tolerance", Tolerance{});
    timing_and_compile_limits(s, root);
    if (root["buffers"]) s.buffers = buffers(root["buffers"], "buffers", names);
    if (root["compare"]) s.compare = compare_rules(root["compare"], "compare");
    if (root["expect"]) s.expect = expectations(root["expect"], "expect");

    std::optional<Expression> flops, bytes;
    for (const auto& [key, target] : {std::pair{"flops", &flops}, std::pair{"bytes", &bytes}})
        if (root[key]) {
            *target = expression(root[key], key, names);
            check_computable(root[key], key, **target);
        }

    // Known before the variants are read: the reference is checked at every point.
    s.reference = scalar(root["reference"], "reference");
    const YAML::Node variants = root["variants"];
    if (root["triton_version"]) {
        triton_version_ = scalar(root["triton_version"], "triton_version");
        if (triton_version_.empty() || triton_version_.size() > 40 ||
            triton_version_.find_first_not_of("0123456789abcdefghijklmnopqrstuvwxyz.+-") != std::string::npos)
            fail(root["triton_version"], "triton_version", "a Triton version, e.g. \"3.6.0\"");
    }
    variant_list(s, variants, names, flops, bytes);

    const VariantSpec* reference = s.find_variant(s.reference);
    if (!reference) {
        std::vector<std::string> known;
        for (const auto& v : s.variants) known.push_back(v.name);
        fail(root["reference"], "reference",
             fmt::format("no variant named '{}'{}", s.reference.substr(0, max_name_length),
                         did_you_mean(s.reference, known)));
    }
    check_verified_buffers(s, *reference, variants);
    return s;
}

void Loader::cliff_settings(Suite& s, const YAML::Node& root)
{
    const YAML::Node params = root["params"];
    for (auto& p : s.params) {
        const YAML::Node node = params[p.name];
        if (!p.scanned || !node["pitch"]) continue;
        const std::string field = "params." + p.name + ".pitch";
        const std::set<std::string, std::less<>> names(param_order_.begin(), param_order_.end());
        p.pitch = expression(node["pitch"], field, names);
        for (std::size_t point = 0; point < points_.size(); ++point)
            if (const std::int64_t bytes = value_at(node["pitch"], field, *p.pitch, point); bytes < 0)
                fail(node["pitch"], field,
                     fmt::format("{} bytes at {}: a pitch is not negative", bytes, point_texts_[point]));
    }
    if (const YAML::Node cliffs = root["cliffs"]) {
        if (!scanned_)
            fail(cliffs, "cliffs",
                 "the suite scans no parameter, so it has no cliffs; give one parameter `{scan: [first, last]}`");
        check_keys(cliffs, "cliffs", {"min_depth", "depth_tolerance"});
        if (cliffs["min_depth"]) s.cliffs.min_depth = number_in(cliffs["min_depth"], "cliffs.min_depth", 0.0, 100.0);
        if (cliffs["depth_tolerance"])
            s.cliffs.depth_tolerance = number_in(cliffs["depth_tolerance"], "cliffs.depth_tolerance", 0.0, 100.0);
    }
}

/// Every buffer a variant writes and we verify must also be written by the reference.
void Loader::check_verified_buffers(const Suite& s, const VariantSpec& reference, const YAML::Node& variants) const
{
    auto written = [&](const VariantSpec& v) {
        std::set<std::string> out;
        for (const auto& b : s.buffers_of(v))
            if (b.role == BufferRole::out || b.role == BufferRole::inout)
                for (const auto& l : v.launches)
                    for (const auto& a : l.args)
                        if (a.buffer == b.name) out.insert(b.name);
        return out;
    };
    const auto reference_written = written(reference);
    for (const auto& v : s.variants) {
        const auto w = written(v);
        if (w.empty())
            fail(variants[v.name], "variants." + v.name,
                 "writes no 'out' or 'inout' buffer, so its output cannot be verified");
        for (const auto& name : w)
            if (!reference_written.contains(name))
                fail(variants[v.name], "variants." + v.name,
                     fmt::format("writes buffer '{}', which the reference variant '{}' does not write", name,
                                 reference.name));
    }
}

Suite parse_suite(const std::string& text, const fs::path& file, const LoadOptions& options)
{
    if (text.size() > max_suite_file_bytes)
        throw InputError(
            file.string(), 0, 0, "",
            fmt::format("{} bytes, more than the {} a suite file may have", text.size(), max_suite_file_bytes));
    if (const std::size_t bad = invalid_utf8_offset(text); bad != std::string::npos) {
        const auto [line, column] = line_and_column(text, bad);
        throw InputError(file.string(), line, column, "", "the file is not UTF-8 text");
    }
    YAML::Node root;
    try {
        root = YAML::Load(text);
    } catch (const YAML::Exception& e) {
        throw InputError(file.string(), e.mark.line + 1, e.mark.column + 1, "", "YAML syntax error: " + e.msg);
    }
    try {
        return Loader(file, options).suite(root);
    } catch (const YAML::Exception& e) {
        throw InputError(file.string(), e.mark.line + 1, e.mark.column + 1, "", e.msg);
    }
}

Suite load_suite(const fs::path& file, const LoadOptions& options)
{
    return parse_suite(read_input_file(file, max_suite_file_bytes, "suite file"), file, options);
}

} // namespace harness::suite
