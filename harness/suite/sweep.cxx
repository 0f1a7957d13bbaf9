#include "harness/suite/sweep.hxx"

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
