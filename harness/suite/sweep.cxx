#include "harness/suite/sweep.hxx"

#include <map>
#include <sstream>

namespace harness::suite {

std::vector<Bindings> sweep_points(const Suite& suite)
{
    std::vector<Bindings> points{Bindings{}};
    for (const auto& param : suite.params) {
        std::vector<Bindings> next;
        next.reserve(points.size() * param.values.size());
        for (const auto& point : points)
            for (const auto value : param.values) {
                Bindings b = point;
                b[param.name] = value;
                next.push_back(std::move(b));
            }
        points = std::move(next);
    }
    return points;
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
            if (v != reference) cases.push_back({v, p, points[p], text});
    }
    return cases;
}

} // namespace harness::suite
