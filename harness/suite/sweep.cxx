#include "harness/suite/sweep.hxx"

#include <algorithm>
#include <map>
#include <unordered_map>
#include <unordered_set>

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

/// Each parameter's values: the suite's, then those only variants give, in order of appearance.
std::vector<std::vector<std::int64_t>> every_value(const Suite& suite)
{
    std::vector<std::vector<std::int64_t>> values;
    for (const auto& param : suite.params) {
        auto& all = values.emplace_back(param.values);
        std::unordered_set<std::int64_t> seen(all.begin(), all.end());
        for (const auto& v : suite.variants)
            for (const auto value : values_of(v, param))
                if (seen.insert(value).second) all.push_back(value);
    }
    return values;
}

/// A product of values as the positions, ascending, that each parameter takes in every_value.
using Product = std::vector<std::vector<std::size_t>>;

/// The product of `wanted(param)` for every parameter of the suite, as positions in `values`.
template <typename Wanted>
Product product_of(const Suite& suite, const std::vector<std::vector<std::int64_t>>& values, Wanted wanted)
{
    Product product;
    for (std::size_t k = 0; k < suite.params.size(); ++k) {
        const auto& own = wanted(suite.params[k]);
        const std::unordered_set<std::int64_t> in(own.begin(), own.end());
        auto& positions = product.emplace_back();
        for (std::size_t i = 0; i < values[k].size(); ++i)
            if (in.contains(values[k][i])) positions.push_back(i);
    }
    return product;
}

/// Appends every point of `product` to `points`, in product order (the last parameter fastest).
void append_points(const Product& product, std::vector<std::vector<std::size_t>>& points)
{
    if (std::any_of(product.begin(), product.end(), [](const auto& positions) { return positions.empty(); })) return;
    std::vector<std::size_t> at(product.size(), 0);
    for (;;) {
        auto& point = points.emplace_back(product.size());
        for (std::size_t k = 0; k < product.size(); ++k) point[k] = product[k][at[k]];
        std::size_t k = product.size();
        while (k > 0 && ++at[k - 1] == product[k - 1].size()) at[--k] = 0;
        if (k == 0) return;
    }
}

} // namespace

std::size_t product_size(const Suite& suite, const VariantSpec& variant, std::size_t limit)
{
    std::size_t size = 1;
    for (const auto& param : suite.params) {
        // A value the suite lists twice is two points, as in the suite's own product.
        std::size_t count = 0;
        if (const auto& own = values_of(variant, param); &own == &param.values) {
            count = own.size();
        } else {
            std::unordered_map<std::int64_t, std::size_t> in_suite;
            for (const auto value : param.values) ++in_suite[value];
            std::unordered_set<std::int64_t> seen;
            for (const auto value : own)
                if (seen.insert(value).second) count += std::max<std::size_t>(1, in_suite[value]);
        }
        if (count == 0) return 0;
        if (size > (limit + 1) / count) return limit + 1;
        size = std::min(size * count, limit + 1);
    }
    return size;
}

std::vector<Bindings> sweep_points(const Suite& suite)
{
    const auto values = every_value(suite);
    // The union of the suite's product and of each other variant's, built one product at a time:
    // the product of every value a variant gives may be vastly more than the points that run.
    std::vector<Product> products{product_of(
        suite, values, [](const ParamSpec& p) -> const auto& { return p.values; })};
    for (const auto& v : suite.variants) {
        if (v.name == suite.reference || v.params.empty()) continue;
        Product product = product_of(
            suite, values, [&](const ParamSpec& p) -> const auto& { return values_of(v, p); });
        if (std::find(products.begin(), products.end(), product) == products.end())
            products.push_back(std::move(product));
    }
    std::vector<std::vector<std::size_t>> positions;
    for (const auto& product : products) append_points(product, positions);
    // In the order of the product of every value: positions compare as that product's order.
    if (products.size() > 1) {
        std::sort(positions.begin(), positions.end());
        positions.erase(std::unique(positions.begin(), positions.end()), positions.end());
    }
    std::vector<Bindings> points;
    points.reserve(positions.size());
    for (const auto& at : positions) {
        Bindings& b = points.emplace_back();
        for (std::size_t k = 0; k < suite.params.size(); ++k) b[suite.params[k].name] = values[k][at[k]];
    }
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

std::map<std::string, std::int64_t> other_params(const Bindings& point, std::string_view axis)
{
    std::map<std::string, std::int64_t> others;
    for (const auto& [name, value] : point)
        if (name != axis) others.emplace(name, value);
    return others;
}

std::string others_text(const Suite& suite, const Bindings& point, std::string_view axis)
{
    Bindings others = point;
    if (const auto it = others.find(axis); it != others.end()) others.erase(it);
    return params_text(suite, others);
}

std::string point_text(const Suite& suite, std::string_view axis, std::int64_t x,
                       const std::map<std::string, std::int64_t>& others)
{
    Bindings point(others.begin(), others.end());
    point.insert_or_assign(std::string(axis), x);
    return params_text(suite, point);
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
