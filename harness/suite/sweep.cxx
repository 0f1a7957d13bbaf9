#include "harness/suite/sweep.hxx"

#include <algorithm>
#include <map>
#include <sstream>

namespace harness::suite {

namespace {

/// The values `variant` gives `param`: its own, or else the suite's.
const std::vector<std::int64_t>& values_of(const VariantSpec& variant, const ParamSpec& param)
{
    for (const auto& own : variant.params)
        if (own.name == param.name) return own.values;
    return param.values;
}

bool holds(const std::vector<std::int64_t>& values, std::int64_t value)
{
    return std::find(values.begin(), values.end(), value) != values.end();
}

} // namespace

std::vector<Bindings> sweep_points(const Suite& suite)
{
    // Each parameter's values: the suite's, then those only variants give, in order of appearance.
    std::vector<std::vector<std::int64_t>> values;
    for (const auto& param : suite.params) {
        auto& all = values.emplace_back(param.values);
        for (const auto& v : suite.variants)
            for (const auto value : values_of(v, param))
                if (!holds(all, value)) all.push_back(value);
    }
    const auto wanted = [&](const Bindings& point) {
        const auto in_suite = [&](const ParamSpec& p) { return holds(p.values, point.find(p.name)->second); };
        if (std::all_of(suite.params.begin(), suite.params.end(), in_suite)) return true;
        return std::any_of(suite.variants.begin(), suite.variants.end(),
                           [&](const VariantSpec& v) { return v.name != suite.reference && runs_at(suite, v, point); });
    };
    std::vector<Bindings> points{Bindings{}};
    for (std::size_t k = 0; k < suite.params.size(); ++k) {
        std::vector<Bindings> next;
        next.reserve(points.size() * values[k].size());
        for (const auto& point : points)
            for (const auto value : values[k]) {
                Bindings b = point;
                b[suite.params[k].name] = value;
                next.push_back(std::move(b));
            }
        points = std::move(next);
    }
    // Without values of a variant's own the product is the suite's, and nothing is left out.
    const bool own_values = std::any_of(suite.variants.begin(), suite.variants.end(),
                                        [](const VariantSpec& v) { return !v.params.empty(); });
    if (own_values) std::erase_if(points, [&](const Bindings& point) { return !wanted(point); });
    return points;
}

bool runs_at(const Suite& suite, const VariantSpec& variant, const Bindings& point)
{
    if (variant.name == suite.reference) return true;
    return std::all_of(suite.params.begin(), suite.params.end(), [&](const ParamSpec& param) {
        const auto it = point.find(param.name);
        return it != point.end() && holds(values_of(variant, param), it->second);
    });
}

std::string params_text(const Suite& suite, const Bindings& point)
{
    std::string text;
    for (const auto& param : suite.params) {
        auto it = point.find(param.name);
        if (it == point.end()) continue;
        if (!text.empty()) text += ' ';
        text += param.name + "=" + std::to_string(it->second);
    }
    return text;
}

std::string others_text(const Suite& suite, const Bindings& point, std::string_view axis)
{
    Bindings others = point;
    if (const auto it = others.find(axis); it != others.end()) others.erase(it);
    return params_text(suite, others);
}

std::string point_text(const Suite& suite, std::string_view axis, std::int64_t x, const std::string& others)
{
    std::map<std::string, std::string, std::less<>> values;
    std::istringstream words(others);
    for (std::string word; words >> word;)
        if (const auto eq = word.find('='); eq != std::string::npos) values[word.substr(0, eq)] = word.substr(eq + 1);
    std::string text;
    for (const auto& param : suite.params) {
        std::string value;
        if (param.name == axis)
            value = std::to_string(x);
        else if (const auto it = values.find(param.name); it != values.end())
            value = it->second;
        else
            continue;
        if (!text.empty()) text += ' ';
        text += param.name + "=" + value;
    }
    return text;
}

std::vector<Case> expand_cases(const Suite& suite)
{
    std::size_t reference = 0;
    for (std::size_t v = 0; v < suite.variants.size(); ++v)
        if (suite.variants[v].name == suite.reference) reference = v;

    std::vector<Case> cases;
    const auto points = sweep_points(suite);
    for (std::size_t p = 0; p < points.size(); ++p) {
        const std::string text = params_text(suite, points[p]);
        cases.push_back({reference, p, points[p], text});
        for (std::size_t v = 0; v < suite.variants.size(); ++v)
            if (v != reference && runs_at(suite, suite.variants[v], points[p]))
                cases.push_back({v, p, points[p], text});
    }
    return cases;
}

} // namespace harness::suite
