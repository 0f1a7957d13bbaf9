#include "harness/core/error.hxx"
#include "harness/core/metrics.hxx"
#include "harness/core/text.hxx"
#include "harness/run/builtins.hxx"
#include "harness/suite/suite.hxx"

#include <algorithm>
#include <fmt/format.h>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <yaml-cpp/yaml.h>

namespace harness::suite {

namespace fs = std::filesystem;

std::optional<ElementType> element_type_from_name(const std::string& name)
{
    static const std::pair<const char*, ElementType> table[] = {
        {"f32", ElementType::f32}, {"f64", ElementType::f64}, {"i32", ElementType::i32},
        {"u32", ElementType::u32}, {"i64", ElementType::i64}, {"u64", ElementType::u64}};
    for (const auto& [n, t] : table)
        if (name == n) return t;
    return std::nullopt;
}

const char* element_type_name(ElementType type)
{
    switch (type) {
    case ElementType::f32: return "f32";
    case ElementType::f64: return "f64";
    case ElementType::i32: return "i32";
    case ElementType::u32: return "u32";
    case ElementType::i64: return "i64";
    case ElementType::u64: return "u64";
    }
    return "?";
}

std::size_t element_size(ElementType type)
{
    switch (type) {
    case ElementType::f32:
    case ElementType::i32:
    case ElementType::u32: return 4;
    case ElementType::f64:
    case ElementType::i64:
    case ElementType::u64: return 8;
    }
    return 0;
}

bool is_floating(ElementType type)
{
    return type == ElementType::f32 || type == ElementType::f64;
}

const VariantSpec* Suite::find_variant(const std::string& variant_name) const
{
    for (const auto& v : variants)
        if (v.name == variant_name) return &v;
    return nullptr;
}

std::vector<BufferSpec> Suite::buffers_of(const VariantSpec& variant) const
{
    std::vector<BufferSpec> all = buffers;
    for (const auto& b : variant.buffers) {
        auto same = std::find_if(all.begin(), all.end(), [&](const BufferSpec& x) { return x.name == b.name; });
        if (same != all.end()) *same = b;
        else all.push_back(b);
    }
    return all;
}

compare::Rule Suite::rule_for(const VariantSpec& variant, const std::string& metric) const
{
    for (const auto* specs : {&variant.compare, &compare})
        for (const auto& c : *specs)
            if (c.metric == metric) return c.rule;
    const auto info = find_metric(metric);
    return compare::parse_rule(info ? info->default_rule : "ignore");
}

std::vector<ExpectSpec> Suite::expectations_for(const VariantSpec& variant) const
{
    std::vector<ExpectSpec> all = variant.expect;
    for (const auto& e : expect)
        if (std::none_of(all.begin(), all.end(), [&](const ExpectSpec& x) { return x.metric == e.metric; }))
            all.push_back(e);
    return all;
}

namespace {

/// Walks the YAML tree, keeping the file name so that every error can say where it is.
class Loader {
public:
    Loader(fs::path file) : file_(std::move(file)), dir_(fs::absolute(file_).parent_path()) {}

    [[noreturn]] void fail(const YAML::Node& node, const std::string& field, const std::string& message) const
    {
        const auto mark = node.Mark();
        if (mark.is_null()) throw InputError(file_.string(), 0, 0, field, message);
        throw InputError(file_.string(), mark.line + 1, mark.column + 1, field, message);
    }

    void expect_map(const YAML::Node& node, const std::string& field) const
    {
        if (!node.IsMap()) fail(node, field, "expected a map");
    }

    void check_keys(const YAML::Node& node, const std::string& field, const std::vector<std::string>& allowed,
                    const std::vector<std::string>& required = {}) const
    {
        expect_map(node, field);
        for (const auto& kv : node) {
            const std::string key = kv.first.as<std::string>();
            if (std::find(allowed.begin(), allowed.end(), key) == allowed.end())
                fail(kv.first, prefixed(field, key),
                     "unknown key" + did_you_mean(key, allowed) + "; allowed: " + join(allowed));
        }
        for (const auto& key : required)
            if (!node[key]) fail(node, prefixed(field, key), "missing required key");
    }

    static std::string prefixed(const std::string& field, const std::string& key)
    {
        return field.empty() ? key : field + "." + key;
    }

    std::string scalar(const YAML::Node& node, const std::string& field) const
    {
        if (!node.IsScalar()) fail(node, field, "expected a single value");
        return node.Scalar();
    }

    double number(const YAML::Node& node, const std::string& field) const
    {
        const std::string text = scalar(node, field);
        try {
            std::size_t used = 0;
            const double v = std::stod(text, &used);
            if (used == text.size()) return v;
        } catch (const std::exception&) {
        }
        fail(node, field, fmt::format("expected a number, got '{}'", text));
    }

    std::int64_t integer(const YAML::Node& node, const std::string& field) const
    {
        const std::string text = scalar(node, field);
        try {
            std::size_t used = 0;
            const long long v = std::stoll(text, &used, 0);
            if (used == text.size()) return v;
        } catch (const std::exception&) {
        }
        fail(node, field, fmt::format("expected an integer, got '{}'", text));
    }

    /// Parses an expression and checks that it reads only `names`.
    Expression expression(const YAML::Node& node, const std::string& field,
                          const std::set<std::string, std::less<>>& names) const
    {
        return expression_text(node, scalar(node, field), field, names);
    }

    /// Same, for `text` that starts where `node` starts.
    Expression expression_text(const YAML::Node& node, const std::string& text, const std::string& field,
                               const std::set<std::string, std::less<>>& names) const
    {
        // A quoted scalar's mark points at the quote.
        const int quote = node.Tag() == "!" ? 1 : 0;
        auto fail_at = [&](std::size_t offset, const std::string& message) {
            const auto mark = node.Mark();
            throw InputError(file_.string(), mark.line + 1, mark.column + 1 + quote + static_cast<int>(offset),
                             field, fmt::format("{} in '{}' at column {}", message, text, offset + 1));
        };
        Expression e;
        try {
            e = Expression::parse(text);
        } catch (const ExpressionError& err) {
            fail_at(err.offset(), err.what());
        }
        for (const auto& [name, offset] : e.names())
            if (!names.contains(name)) {
                std::vector<std::string> known(names.begin(), names.end());
                fail_at(offset, fmt::format("unknown name '{}'{}", name, did_you_mean(name, known)));
            }
        return e;
    }

    std::vector<Expression> dims(const YAML::Node& node, const std::string& field,
                                 const std::set<std::string, std::less<>>& names) const
    {
        std::vector<Expression> out;
        if (node.IsScalar()) {
            out.push_back(expression(node, field, names));
            return out;
        }
        if (!node.IsSequence()) fail(node, field, "expected 1 to 3 expressions, e.g. [ceil_div(N, 256)] or [16, 16]");
        // A flow sequence splits `[ceil_div(N, 16), 4]` at every comma, also inside parentheses:
        // join the pieces back until the parentheses balance.
        std::string pending;
        std::optional<YAML::Node> first;
        int depth = 0;
        for (std::size_t i = 0; i < node.size(); ++i) {
            const std::string piece = scalar(node[i], fmt::format("{}[{}]", field, out.size()));
            if (!first) first = node[i];
            pending += (pending.empty() ? "" : ", ") + piece;
            for (char c : piece) depth += c == '(' ? 1 : c == ')' ? -1 : 0;
            if (depth > 0 && i + 1 < node.size()) continue;
            out.push_back(expression_text(*first, pending, fmt::format("{}[{}]", field, out.size()), names));
            pending.clear();
            first.reset();
            depth = 0;
        }
        if (out.empty() || out.size() > 3)
            fail(node, field, "expected 1 to 3 expressions, e.g. [ceil_div(N, 256)] or [16, 16]");
        return out;
    }

    /// A metric name from the metric table, or an error with a suggestion.
    std::string metric_name(const YAML::Node& key, const std::string& field) const
    {
        const std::string name = scalar(key, field);
        if (find_metric(name)) return name;
        std::vector<std::string> known;
        for (const auto& m : metric_table()) known.emplace_back(m.name);
        fail(key, field, fmt::format("unknown metric '{}'{} (`harness metrics` lists them; see docs/metrics.md)", name,
                                     did_you_mean(name, known)));
    }

    /// `compare: {metric: "rel 5%", ...}`
    std::vector<CompareSpec> compare_rules(const YAML::Node& node, const std::string& field) const
    {
        expect_map(node, field);
        std::vector<CompareSpec> out;
        for (const auto& kv : node) {
            const std::string metric = metric_name(kv.first, prefixed(field, kv.first.Scalar()));
            const std::string f = prefixed(field, metric);
            compare::Rule rule;
            try {
                rule = compare::parse_rule(scalar(kv.second, f));
            } catch (const std::invalid_argument& e) {
                fail(kv.second, f, e.what());
            }
            // Only the median time keeps its samples (CaseResult::time_samples_us).
            if (rule.kind == compare::RuleKind::samples && metric != "time_median")
                fail(kv.second, f, "'samples' needs the time samples, which only time_median has; use 'rel' or 'abs'");
            out.push_back({metric, rule, where(kv.second)});
        }
        return out;
    }

    /// `expect: {metric: "<= 64", ...}`
    std::vector<ExpectSpec> expectations(const YAML::Node& node, const std::string& field) const
    {
        expect_map(node, field);
        std::vector<ExpectSpec> out;
        for (const auto& kv : node) {
            const std::string metric = metric_name(kv.first, prefixed(field, kv.first.Scalar()));
            const std::string f = prefixed(field, metric);
            try {
                out.push_back({metric, compare::parse_expect(scalar(kv.second, f)), where(kv.second)});
            } catch (const std::invalid_argument& e) {
                fail(kv.second, f, e.what());
            }
        }
        return out;
    }

    std::vector<std::string> string_list(const YAML::Node& node, const std::string& field) const
    {
        std::vector<std::string> out;
        if (node.IsScalar()) {
            out.push_back(node.Scalar());
            return out;
        }
        if (!node.IsSequence()) fail(node, field, "expected a list");
        for (std::size_t i = 0; i < node.size(); ++i)
            out.push_back(scalar(node[i], fmt::format("{}[{}]", field, i)));
        return out;
    }

    SourceLocation where(const YAML::Node& node) const
    {
        const auto mark = node.Mark();
        return mark.is_null() ? SourceLocation{} : SourceLocation{mark.line + 1, mark.column + 1};
    }

    Tolerance tolerance(const YAML::Node& node, const std::string& field, Tolerance base) const
    {
        check_keys(node, field, {"rel", "abs"});
        if (node["rel"]) base.rel = non_negative(node["rel"], field + ".rel");
        if (node["abs"]) base.abs = non_negative(node["abs"], field + ".abs");
        return base;
    }

    double non_negative(const YAML::Node& node, const std::string& field) const
    {
        const double v = number(node, field);
        if (v < 0) fail(node, field, "must not be negative");
        return v;
    }

    ParamSpec param(const std::string& name, const YAML::Node& node, const std::string& field) const
    {
        static const std::regex identifier("[A-Za-z_][A-Za-z0-9_]*");
        ParamSpec p{name, {}};
        if (!std::regex_match(name, identifier)) fail(node, field, "a parameter name must be an identifier");
        if (name == "i") fail(node, field, "'i' is reserved for buffer index expressions");
        if (node.IsSequence()) {
            if (node.size() == 0) fail(node, field, "needs at least one value");
            for (std::size_t k = 0; k < node.size(); ++k)
                p.values.push_back(integer(node[k], fmt::format("{}[{}]", field, k)));
        } else if (node.IsMap()) {
            check_keys(node, field, {"from", "to", "step", "mul"}, {"from", "to"});
            const std::int64_t from = integer(node["from"], field + ".from");
            const std::int64_t to = integer(node["to"], field + ".to");
            if (to < from) fail(node, field, "'to' is below 'from'");
            if (node["step"] && node["mul"]) fail(node, field, "give 'step' or 'mul', not both");
            if (node["mul"]) {
                const std::int64_t mul = integer(node["mul"], field + ".mul");
                if (mul < 2) fail(node["mul"], field + ".mul", "must be at least 2");
                if (from < 1) fail(node["from"], field + ".from", "must be positive with 'mul'");
                for (std::int64_t v = from; v <= to; v *= mul) {
                    p.values.push_back(v);
                    if (v > to / mul) break;
                }
            } else {
                const std::int64_t step = node["step"] ? integer(node["step"], field + ".step") : 1;
                if (step < 1) fail(node["step"], field + ".step", "must be positive");
                for (std::int64_t v = from; v <= to; v += step) p.values.push_back(v);
            }
            if (p.values.size() > 10000) fail(node, field, "more than 10000 values");
        } else {
            p.values.push_back(integer(node, field));
        }
        return p;
    }

    BufferSpec buffer(const std::string& name, const YAML::Node& node, const std::string& field,
                      const std::set<std::string, std::less<>>& params) const
    {
        check_keys(node, field, {"type", "count", "init", "seed", "min", "max", "index", "role", "tolerance"},
                   {"type", "count"});
        BufferSpec b;
        b.name = name;
        b.where = where(node);
        const std::string type = scalar(node["type"], field + ".type");
        auto t = element_type_from_name(type);
        if (!t) fail(node["type"], field + ".type",
                     fmt::format("unknown type '{}'{}; one of f32, f64, i32, u32, i64, u64", type,
                                 did_you_mean(type, {"f32", "f64", "i32", "u32", "i64", "u64"})));
        b.type = *t;
        b.count = expression(node["count"], field + ".count", params);
        const std::string init = node["init"] ? scalar(node["init"], field + ".init") : "zeros";
        static const std::vector<std::string> inits = {"zeros", "ones", "sequence", "uniform"};
        if (init == "zeros") b.init = InitKind::zeros;
        else if (init == "ones") b.init = InitKind::ones;
        else if (init == "sequence") b.init = InitKind::sequence;
        else if (init == "uniform") b.init = InitKind::uniform;
        else fail(node["init"], field + ".init",
                  fmt::format("unknown init '{}'{}; one of {}", init, did_you_mean(init, inits), join(inits)));
        if (b.init == InitKind::uniform && !node["seed"])
            fail(node, field + ".seed", "init 'uniform' needs a seed");
        if (node["seed"]) b.seed = static_cast<std::uint64_t>(integer(node["seed"], field + ".seed"));
        if (node["min"]) b.min = number(node["min"], field + ".min");
        if (node["max"]) b.max = number(node["max"], field + ".max");
        if (b.max < b.min) fail(node, field, "'max' is below 'min'");
        if (node["index"]) {
            auto with_i = params;
            with_i.insert("i");
            b.index = expression(node["index"], field + ".index", with_i);
        }
        const std::string role = node["role"] ? scalar(node["role"], field + ".role") : "in";
        static const std::vector<std::string> roles = {"in", "out", "inout", "temp"};
        if (role == "in") b.role = BufferRole::in;
        else if (role == "out") b.role = BufferRole::out;
        else if (role == "inout") b.role = BufferRole::inout;
        else if (role == "temp") b.role = BufferRole::temp;
        else fail(node["role"], field + ".role",
                  fmt::format("unknown role '{}'{}; one of {}", role, did_you_mean(role, roles), join(roles)));
        if (node["tolerance"]) b.tolerance = tolerance(node["tolerance"], field + ".tolerance", Tolerance{});
        return b;
    }

    std::vector<BufferSpec> buffers(const YAML::Node& node, const std::string& field,
                                    const std::set<std::string, std::less<>>& params) const
    {
        std::vector<BufferSpec> out;
        expect_map(node, field);
        for (const auto& kv : node) {
            const std::string name = kv.first.as<std::string>();
            out.push_back(buffer(name, kv.second, prefixed(field, name), params));
        }
        return out;
    }

    ArgSpec arg(const YAML::Node& node, const std::string& field, const std::set<std::string, std::less<>>& params,
                const std::vector<BufferSpec>& known_buffers) const
    {
        ArgSpec a;
        a.where = where(node);
        if (node.IsScalar()) {
            a.buffer = node.Scalar();
            const bool known = std::any_of(known_buffers.begin(), known_buffers.end(),
                                           [&](const BufferSpec& b) { return b.name == a.buffer; });
            if (!known) {
                std::vector<std::string> names;
                for (const auto& b : known_buffers) names.push_back(b.name);
                fail(node, field,
                     fmt::format("unknown buffer '{}'{}; scalars are written {{i32: EXPR}}", a.buffer,
                                 did_you_mean(a.buffer, names)));
            }
            return a;
        }
        if (!node.IsMap() || node.size() != 1)
            fail(node, field, "expected a buffer name or a scalar {TYPE: expression}, e.g. {i32: N}");
        const auto kv = *node.begin();
        const std::string type = kv.first.as<std::string>();
        auto t = element_type_from_name(type);
        if (!t) fail(kv.first, field,
                     fmt::format("unknown scalar type '{}'{}; one of i32, u32, i64, u64, f32, f64", type,
                                 did_you_mean(type, {"f32", "f64", "i32", "u32", "i64", "u64"})));
        a.scalar_type = *t;
        const std::string text = scalar(kv.second, field + "." + type);
        if (is_floating(*t) && text.find_first_of(".eE") != std::string::npos && text.find('(') == std::string::npos) {
            a.literal = number(kv.second, field + "." + type);
            a.scalar = Expression::constant(0);
        } else {
            a.scalar = expression(kv.second, field + "." + type, params);
        }
        return a;
    }

    LaunchSpec launch(const YAML::Node& node, const std::string& field, const std::set<std::string, std::less<>>& params,
                      const std::vector<BufferSpec>& known_buffers) const
    {
        LaunchSpec l;
        l.where = where(node);
        l.entry = scalar(node["entry"], field + ".entry");
        if (l.entry.empty()) fail(node["entry"], field + ".entry", "must not be empty");
        l.block = dims(node["block"], field + ".block", params);
        l.grid = dims(node["grid"], field + ".grid", params);
        l.shared_bytes = node["shared_bytes"] ? expression(node["shared_bytes"], field + ".shared_bytes", params)
                                              : Expression::constant(0);
        const YAML::Node args = node["args"];
        if (!args.IsSequence()) fail(args, field + ".args", "expected a list of arguments");
        for (std::size_t i = 0; i < args.size(); ++i)
            l.args.push_back(arg(args[i], fmt::format("{}.args[{}]", field, i), params, known_buffers));
        return l;
    }

    VariantSpec variant(const std::string& name, const YAML::Node& node, const std::string& field,
                        const std::set<std::string, std::less<>>& params,
                        const std::vector<BufferSpec>& suite_buffers) const
    {
        static const std::vector<std::string> launch_keys = {"entry", "block", "grid", "shared_bytes", "args"};
        std::vector<std::string> allowed = {"source", "defines", "options", "launches", "buffers", "flops", "bytes",
                                            "builtin", "compare", "expect"};
        allowed.insert(allowed.end(), launch_keys.begin(), launch_keys.end());
        VariantSpec v;
        v.name = name;
        v.where = where(node);
        if (node.IsMap() && node["builtin"]) return builtin_variant(v, node, field, params, suite_buffers);
        check_keys(node, field, allowed, {"source"});
        const std::string source = scalar(node["source"], field + ".source");
        v.source = fs::weakly_canonical(dir_ / source);
        if (!fs::is_regular_file(v.source))
            fail(node["source"], field + ".source", fmt::format("no such file: {}", v.source.string()));
        if (node["defines"]) {
            expect_map(node["defines"], field + ".defines");
            for (const auto& kv : node["defines"])
                v.defines[kv.first.as<std::string>()] =
                    scalar(kv.second, field + ".defines." + kv.first.as<std::string>());
        }
        if (node["options"]) v.options = string_list(node["options"], field + ".options");
        if (node["buffers"]) v.buffers = buffers(node["buffers"], field + ".buffers", params);

        std::vector<BufferSpec> known = suite_buffers;
        known.insert(known.end(), v.buffers.begin(), v.buffers.end());
        if (node["launches"]) {
            for (const auto& key : launch_keys)
                if (node[key]) fail(node[key], field + "." + key, "give either 'launches' or a single launch, not both");
            const YAML::Node launches = node["launches"];
            if (!launches.IsSequence() || launches.size() == 0)
                fail(launches, field + ".launches", "expected a non-empty list of launches");
            for (std::size_t i = 0; i < launches.size(); ++i) {
                const std::string lf = fmt::format("{}.launches[{}]", field, i);
                check_keys(launches[i], lf, launch_keys, {"entry", "block", "grid", "args"});
                v.launches.push_back(launch(launches[i], lf, params, known));
            }
        } else {
            for (const auto& key : {"entry", "block", "grid", "args"})
                if (!node[key]) fail(node, prefixed(field, key), "missing required key (or give 'launches')");
            v.launches.push_back(launch(node, field, params, known));
        }
        if (node["flops"]) v.flops = expression(node["flops"], field + ".flops", params);
        if (node["bytes"]) v.bytes = expression(node["bytes"], field + ".bytes", params);
        gating(v, node, field);
        return v;
    }

    /// A variant's `compare:` and `expect:`.
    void gating(VariantSpec& v, const YAML::Node& node, const std::string& field) const
    {
        if (node["compare"]) v.compare = compare_rules(node["compare"], field + ".compare");
        if (node["expect"]) v.expect = expectations(node["expect"], field + ".expect");
    }

    /// A variant that calls a library routine (run::builtin_table) instead of a kernel.
    VariantSpec builtin_variant(VariantSpec v, const YAML::Node& node, const std::string& field,
                                const std::set<std::string, std::less<>>& params,
                                const std::vector<BufferSpec>& suite_buffers) const
    {
        check_keys(node, field, {"builtin", "args", "buffers", "flops", "bytes", "compare", "expect"},
                   {"builtin", "args"});
        v.builtin = scalar(node["builtin"], field + ".builtin");
        const run::BuiltinInfo* info = run::find_builtin(v.builtin);
        if (!info) {
            std::vector<std::string> names;
            for (const auto& b : run::builtin_table()) names.push_back(b.name);
            fail(node["builtin"], field + ".builtin",
                 fmt::format("unknown built-in '{}'{}; one of {}", v.builtin, did_you_mean(v.builtin, names), join(names)));
        }
        if (node["buffers"]) v.buffers = buffers(node["buffers"], field + ".buffers", params);
        std::vector<BufferSpec> known = suite_buffers;
        known.insert(known.end(), v.buffers.begin(), v.buffers.end());
        LaunchSpec l;
        l.entry = v.builtin;
        l.where = where(node);
        const YAML::Node args = node["args"];
        if (!args.IsSequence() || args.size() != info->buffer_args + info->scalar_args)
            fail(args, field + ".args", fmt::format("{} takes {}", v.builtin, info->signature));
        for (std::size_t i = 0; i < args.size(); ++i) {
            l.args.push_back(arg(args[i], fmt::format("{}.args[{}]", field, i), params, known));
            if (l.args.back().is_buffer() != (i < info->buffer_args))
                fail(args[i], fmt::format("{}.args[{}]", field, i), fmt::format("{} takes {}", v.builtin, info->signature));
        }
        v.launches.push_back(std::move(l));
        if (node["flops"]) v.flops = expression(node["flops"], field + ".flops", params);
        if (node["bytes"]) v.bytes = expression(node["bytes"], field + ".bytes", params);
        gating(v, node, field);
        return v;
    }

    Suite suite(const YAML::Node& root) const
    {
        if (!root.IsMap()) fail(root, "", "a suite file is a YAML map (see docs/suite-format.md)");
        check_keys(root, "",
                   {"suite", "description", "include", "archs", "params", "reference", "tolerance", "timing",
                    "buffers", "flops", "bytes", "variants", "compare", "expect", "metrics"},
                   {"suite", "params", "reference", "variants"});
        Suite s;
        s.file = file_;
        s.name = scalar(root["suite"], "suite");
        static const std::regex suite_name("[A-Za-z0-9_.-]+");
        if (!std::regex_match(s.name, suite_name))
            fail(root["suite"], "suite", "a suite name uses only letters, digits, '_', '.' and '-'");
        if (root["description"]) s.description = scalar(root["description"], "description");

        if (root["include"]) {
            for (const auto& dir : string_list(root["include"], "include")) {
                const fs::path p = fs::weakly_canonical(dir_ / dir);
                if (!fs::is_directory(p)) fail(root["include"], "include", "no such directory: " + p.string());
                s.include_dirs.push_back(p);
            }
        } else if (fs::is_directory(dir_ / ".." / "kernels")) {
            s.include_dirs.push_back(fs::weakly_canonical(dir_ / ".." / "kernels"));
        }

        s.archs = root["archs"] ? string_list(root["archs"], "archs") : std::vector<std::string>{"sm_80", "sm_90"};
        static const std::regex arch("sm_[0-9]{2,3}[a-z]?");
        for (const auto& a : s.archs)
            if (!std::regex_match(a, arch)) fail(root["archs"], "archs", fmt::format("'{}' is not like sm_90", a));

        // Metrics to collect through the profiler; without the key, the metric table's default set.
        if (const YAML::Node metrics = root["metrics"]) {
            if (!metrics.IsSequence()) fail(metrics, "metrics", "expected a list of metric names");
            for (std::size_t i = 0; i < metrics.size(); ++i)
                s.metrics.push_back(metric_name(metrics[i], fmt::format("metrics[{}]", i)));
        }

        const YAML::Node params = root["params"];
        expect_map(params, "params");
        if (params.size() == 0) fail(params, "params", "needs at least one parameter");
        std::set<std::string, std::less<>> names;
        for (const auto& kv : params) {
            const std::string name = kv.first.as<std::string>();
            if (names.contains(name)) fail(kv.first, "params." + name, "declared twice");
            s.params.push_back(param(name, kv.second, "params." + name));
            names.insert(name);
        }

        if (root["tolerance"]) s.tolerance = tolerance(root["tolerance"], "tolerance", Tolerance{});
        if (root["timing"]) {
            const YAML::Node t = root["timing"];
            check_keys(t, "timing", {"min_samples", "max_noise", "budget_s", "timeout_s"});
            if (t["min_samples"]) {
                s.timing.min_samples = static_cast<int>(integer(t["min_samples"], "timing.min_samples"));
                if (s.timing.min_samples < 1) fail(t["min_samples"], "timing.min_samples", "must be at least 1");
            }
            if (t["max_noise"]) s.timing.max_noise = non_negative(t["max_noise"], "timing.max_noise");
            if (t["budget_s"]) s.timing.budget_s = non_negative(t["budget_s"], "timing.budget_s");
            if (t["timeout_s"]) {
                s.timing.timeout_s = number(t["timeout_s"], "timing.timeout_s");
                if (s.timing.timeout_s <= 0) fail(t["timeout_s"], "timing.timeout_s", "must be positive");
            }
        }
        if (root["buffers"]) s.buffers = buffers(root["buffers"], "buffers", names);
        if (root["compare"]) s.compare = compare_rules(root["compare"], "compare");
        if (root["expect"]) s.expect = expectations(root["expect"], "expect");

        std::optional<Expression> flops, bytes;
        if (root["flops"]) flops = expression(root["flops"], "flops", names);
        if (root["bytes"]) bytes = expression(root["bytes"], "bytes", names);

        const YAML::Node variants = root["variants"];
        expect_map(variants, "variants");
        if (variants.size() == 0) fail(variants, "variants", "needs at least one variant");
        for (const auto& kv : variants) {
            const std::string name = kv.first.as<std::string>();
            static const std::regex variant_name("[A-Za-z0-9_.-]+");
            if (!std::regex_match(name, variant_name))
                fail(kv.first, "variants." + name, "a variant name uses only letters, digits, '_', '.' and '-'");
            if (s.find_variant(name)) fail(kv.first, "variants." + name, "declared twice");
            VariantSpec v = variant(name, kv.second, "variants." + name, names, s.buffers);
            if (!v.flops) v.flops = flops;
            if (!v.bytes) v.bytes = bytes;
            s.variants.push_back(std::move(v));
        }

        s.reference = scalar(root["reference"], "reference");
        const VariantSpec* reference = s.find_variant(s.reference);
        if (!reference) {
            std::vector<std::string> known;
            for (const auto& v : s.variants) known.push_back(v.name);
            fail(root["reference"], "reference",
                 fmt::format("no variant named '{}'{}", s.reference, did_you_mean(s.reference, known)));
        }
        check_verified_buffers(s, *reference, variants);
        return s;
    }

    /// Every buffer a variant writes and we verify must also be written by the reference.
    void check_verified_buffers(const Suite& s, const VariantSpec& reference, const YAML::Node& variants) const
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

private:
    fs::path file_;
    fs::path dir_;
};

} // namespace

Suite parse_suite(const std::string& text, const fs::path& file)
{
    YAML::Node root;
    try {
        root = YAML::Load(text);
    } catch (const YAML::Exception& e) {
        throw InputError(file.string(), e.mark.line + 1, e.mark.column + 1, "", "YAML syntax error: " + e.msg);
    }
    try {
        return Loader(file).suite(root);
    } catch (const YAML::Exception& e) {
        throw InputError(file.string(), e.mark.line + 1, e.mark.column + 1, "", e.msg);
    }
}

Suite load_suite(const fs::path& file)
{
    std::ifstream in(file, std::ios::binary);
    if (!in) throw InputError(file.string(), 0, 0, "", "cannot open the suite file");
    std::stringstream text;
    text << in.rdbuf();
    return parse_suite(text.str(), file);
}

} // namespace harness::suite
