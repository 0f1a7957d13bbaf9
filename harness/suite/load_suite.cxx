#include "harness/core/arch_limits.hxx"
#include "harness/core/error.hxx"
#include "harness/core/input_files.hxx"
#include "harness/core/metrics.hxx"
#include "harness/core/text.hxx"
#include "harness/suite/builtin_signatures.hxx"
#include "harness/suite/compile_params.hxx"
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

namespace {

/// Why `entry` is not a C++ name expression NVRTC can look up (a qualified name with optional
/// template arguments), or "". It is compiled as code, so nothing else may ride along.
std::string entry_problem(const std::string& entry)
{
    if (entry.empty()) return "must not be empty";
    if (entry.size() > max_entry_length) return fmt::format("longer than {} characters", max_entry_length);
    static const std::regex head("[A-Za-z_][A-Za-z0-9_]*(::[A-Za-z_][A-Za-z0-9_]*)*");
    const std::size_t open = entry.find('<');
    if (!std::regex_match(entry.substr(0, open), head))
        return fmt::format("'{}' is not a kernel name (an identifier, optionally qualified with ::)",
                           entry.substr(0, std::min<std::size_t>(open, 80)));
    if (open == std::string::npos) return "";
    int angle = 0, paren = 0;
    for (std::size_t i = open; i < entry.size(); ++i) {
        const char c = entry[i];
        if (!std::isalnum(static_cast<unsigned char>(c)) &&
            std::string_view("_:<>,() +-*/.&").find(c) == std::string_view::npos)
            return fmt::format("character {} of the template arguments is not allowed in a kernel name", i + 1);
        angle += c == '<' ? 1 : c == '>' ? -1 : 0;
        paren += c == '(' ? 1 : c == ')' ? -1 : 0;
        if (angle < 0 || paren < 0 || (angle == 0 && i + 1 < entry.size()))
            return "the template arguments' brackets do not match";
    }
    if (angle != 0 || paren != 0) return "the template arguments' brackets do not match";
    return "";
}

/// Walks the YAML tree, keeping the file name so that every error can say where it is.
class Loader {
public:
    Loader(fs::path file, LoadOptions options)
        : file_(std::move(file)), dir_(fs::absolute(file_).parent_path()), root_(project_root(file_)), options_(options)
    {
    }

    [[noreturn]] void fail(const YAML::Node& node, const std::string& field, const std::string& message) const
    {
        const auto mark = node.Mark();
        if (mark.is_null()) throw InputError(file_.string(), 0, 0, field, message);
        throw InputError(file_.string(), mark.line + 1, mark.column + 1, field, message);
    }

    /// A map whose keys are single values, each given once (YAML would keep only the first).
    void expect_map(const YAML::Node& node, const std::string& field) const
    {
        if (!node.IsMap()) fail(node, field, "expected a map");
        std::set<std::string> seen;
        for (const auto& kv : node) {
            if (!kv.first.IsScalar()) fail(kv.first, field, "a key must be a single value");
            if (!seen.insert(kv.first.Scalar()).second)
                fail(kv.first, prefixed(field, kv.first.Scalar()), "given twice (YAML would keep only the first)");
        }
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
            if (used == text.size() && std::isfinite(v)) return v;
        } catch (const std::exception&) {
        }
        fail(node, field, fmt::format("expected a finite number, got '{}'", text));
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

    std::int64_t integer_in(const YAML::Node& node, const std::string& field, std::int64_t low, std::int64_t high) const
    {
        const std::int64_t v = integer(node, field);
        if (v < low || v > high) fail(node, field, fmt::format("{} is outside {}..{}", v, low, high));
        return v;
    }

    double number_in(const YAML::Node& node, const std::string& field, double low, double high) const
    {
        const double v = number(node, field);
        if (v < low || v > high) fail(node, field, fmt::format("{} is outside {}..{}", v, low, high));
        return v;
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
            throw InputError(file_.string(), mark.line + 1, mark.column + 1 + quote + static_cast<int>(offset), field,
                             fmt::format("{} in '{}' at column {}", message, text, offset + 1));
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
        fail(key, field,
             fmt::format("unknown metric '{}'{} (`harness metrics` lists them; see docs/metrics.md)", name,
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
            Rule rule;
            try {
                rule = parse_rule(scalar(kv.second, f));
            } catch (const std::invalid_argument& e) {
                fail(kv.second, f, e.what());
            }
            // Only the median time keeps its samples (CaseResult::time_samples_us).
            if (rule.kind == RuleKind::samples && metric != metric::time_median)
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
                out.push_back({metric, parse_expect(scalar(kv.second, f)), where(kv.second)});
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
        for (std::size_t i = 0; i < node.size(); ++i) out.push_back(scalar(node[i], fmt::format("{}[{}]", field, i)));
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
        // A relative tolerance of 1 already accepts any output of the reference's sign.
        if (node["rel"]) base.rel = number_in(node["rel"], field + ".rel", 0.0, 1.0);
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
        // The length first: std::regex recurses once per character.
        if (name.size() > max_name_length || !std::regex_match(name, identifier))
            fail(node, field.substr(0, 200), "a parameter name must be an identifier of at most 100 characters");
        if (name == "i") fail(node, field, "'i' is reserved for buffer index expressions");
        if (node.IsSequence()) {
            if (node.size() == 0) fail(node, field, "needs at least one value");
            if (node.size() > max_param_values)
                fail(node, field, fmt::format("{} values, more than the {} allowed", node.size(), max_param_values));
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
                // Counted before a value is built, in unsigned arithmetic: to - from may exceed INT64_MAX.
                const std::uint64_t span = static_cast<std::uint64_t>(to) - static_cast<std::uint64_t>(from);
                const std::uint64_t count = span / static_cast<std::uint64_t>(step) + 1;
                if (count > max_param_values)
                    fail(node, field,
                         fmt::format("the range has {} values, more than the {} allowed", count, max_param_values));
                for (std::uint64_t k = 0; k < count; ++k)
                    p.values.push_back(static_cast<std::int64_t>(static_cast<std::uint64_t>(from) +
                                                                 k * static_cast<std::uint64_t>(step)));
            }
        } else {
            p.values.push_back(integer(node, field));
        }
        return p;
    }

    BufferSpec buffer(const std::string& name, const YAML::Node& node, const std::string& field,
                      const std::set<std::string, std::less<>>& params) const
    {
        check_keys(node, field,
                   {"type", "count", "init", "seed", "min", "max", "index", "round_to", "role", "tolerance"},
                   {"type", "count"});
        BufferSpec b;
        b.name = name;
        b.where = where(node);
        b.type = element_type(node["type"], scalar(node["type"], field + ".type"), field + ".type", "type");
        check_type_on_archs(node["type"], field + ".type", b.type, "a buffer");
        if (node["round_to"]) {
            const std::string f = field + ".round_to";
            b.round_to = element_type(node["round_to"], scalar(node["round_to"], f), f, "type");
            if (!holds_exactly(b.type, *b.round_to)) {
                std::vector<std::string> held;
                for (const auto& t : element_type_table())
                    if (t.type != b.type && holds_exactly(b.type, t.type)) held.emplace_back(t.name);
                fail(node["round_to"], f,
                     fmt::format("{} buffers cannot hold every {} value exactly; round_to takes a type whose every "
                                 "value {} holds ({})",
                                 element_type_name(b.type), element_type_name(*b.round_to), element_type_name(b.type),
                                 held.empty() ? fmt::format("none but {} itself", element_type_name(b.type))
                                              : join(held)));
            }
        }
        b.count = expression(node["count"], field + ".count", params);
        check_count(node["count"], field + ".count", b);
        const std::string init = node["init"] ? scalar(node["init"], field + ".init") : "zeros";
        static const std::vector<std::string> inits = {"zeros", "ones", "sequence", "uniform"};
        if (init == "zeros")
            b.init = InitKind::zeros;
        else if (init == "ones")
            b.init = InitKind::ones;
        else if (init == "sequence")
            b.init = InitKind::sequence;
        else if (init == "uniform")
            b.init = InitKind::uniform;
        else
            fail(node["init"], field + ".init",
                 fmt::format("unknown init '{}'{}; one of {}", init, did_you_mean(init, inits), join(inits)));
        if (b.init == InitKind::uniform && !node["seed"]) fail(node, field + ".seed", "init 'uniform' needs a seed");
        if (node["seed"]) b.seed = static_cast<std::uint64_t>(integer_in(node["seed"], field + ".seed", 0, INT64_MAX));
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
        if (role == "in")
            b.role = BufferRole::in;
        else if (role == "out")
            b.role = BufferRole::out;
        else if (role == "inout")
            b.role = BufferRole::inout;
        else if (role == "temp")
            b.role = BufferRole::temp;
        else
            fail(node["role"], field + ".role",
                 fmt::format("unknown role '{}'{}; one of {}", role, did_you_mean(role, roles), join(roles)));
        if (node["tolerance"]) b.tolerance = tolerance(node["tolerance"], field + ".tolerance", Tolerance{});
        return b;
    }

    std::vector<BufferSpec> buffers(const YAML::Node& node, const std::string& field,
                                    const std::set<std::string, std::less<>>& params) const
    {
        std::vector<BufferSpec> out;
        expect_map(node, field);
        static const std::regex identifier("[A-Za-z_][A-Za-z0-9_]*");
        for (const auto& kv : node) {
            const std::string name = kv.first.as<std::string>();
            if (name.size() > max_name_length || !std::regex_match(name, identifier))
                fail(kv.first, prefixed(field, name.substr(0, max_name_length)),
                     "a buffer name must be an identifier of at most 100 characters");
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
        a.scalar_type = element_type(kv.first, type, field, "scalar type");
        check_type_on_archs(kv.first, field + "." + type, a.scalar_type, "a scalar");
        const std::string text = scalar(kv.second, field + "." + type);
        if (is_floating(a.scalar_type) && text.find_first_of(".eE") != std::string::npos &&
            text.find('(') == std::string::npos) {
            a.literal = number(kv.second, field + "." + type);
            a.scalar = Expression::constant(0);
            check_float_scalar(kv.second, field + "." + type, a.scalar_type, *a.literal, "");
        } else {
            a.scalar = expression(kv.second, field + "." + type, params);
            check_scalar(kv.second, field + "." + type, a);
        }
        return a;
    }

    LaunchSpec launch(const YAML::Node& node, const std::string& field,
                      const std::set<std::string, std::less<>>& params,
                      const std::vector<BufferSpec>& known_buffers) const
    {
        LaunchSpec l;
        l.where = where(node);
        l.entry = scalar(node["entry"], field + ".entry");
        if (const std::string problem = entry_problem(l.entry); !problem.empty())
            fail(node["entry"], field + ".entry", problem);
        l.block = dims(node["block"], field + ".block", params);
        l.grid = dims(node["grid"], field + ".grid", params);
        l.shared_bytes = node["shared_bytes"] ? expression(node["shared_bytes"], field + ".shared_bytes", params)
                                              : Expression::constant(0);
        check_geometry(node, field, l);
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
        std::vector<std::string> allowed = {"source",  "module", "built_from", "defines", "options", "launches",
                                            "buffers", "flops",  "bytes",      "builtin", "compare", "expect"};
        allowed.insert(allowed.end(), launch_keys.begin(), launch_keys.end());
        VariantSpec v;
        v.name = name;
        v.where = where(node);
        if (node.IsMap() && node["builtin"]) return builtin_variant(v, node, field, params, suite_buffers);
        check_keys(node, field, allowed, {});
        if (node["module"]) {
            module_variant(v, node, field);
        } else {
            if (!node["source"]) fail(node, prefixed(field, "source"), "missing required key (or give 'module')");
            if (node["built_from"])
                fail(node["built_from"], field + ".built_from", "only a 'module' variant names what it is built from");
            const std::string source = scalar(node["source"], field + ".source");
            v.source = resolve(node["source"], field + ".source", source);
            check_inside_project(node["source"], field + ".source", v.source);
            if (!fs::is_regular_file(v.source))
                fail(node["source"], field + ".source", fmt::format("no such file: {}", v.source.string()));
        }
        if (node["defines"]) {
            expect_map(node["defines"], field + ".defines");
            static const std::regex macro("[A-Za-z_][A-Za-z0-9_]*");
            for (const auto& kv : node["defines"]) {
                const std::string name = kv.first.Scalar();
                const std::string f = field + ".defines." + name;
                if (name.size() > max_name_length || !std::regex_match(name, macro))
                    fail(kv.first, f.substr(0, 200), "a macro name must be an identifier of at most 100 characters");
                const std::string value = scalar(kv.second, f);
                if (std::any_of(value.begin(), value.end(),
                                [](char c) { return std::iscntrl(static_cast<unsigned char>(c)); }))
                    fail(kv.second, f, "a macro value must be one line without control characters");
                v.defines[name] = value;
            }
        }
        if (node["options"]) {
            v.options = string_list(node["options"], field + ".options");
            for (std::size_t i = 0; i < v.options.size(); ++i)
                if (const std::string problem = nvrtc_option_problem(v.options[i]); !problem.empty())
                    fail(node["options"].IsSequence() ? node["options"][i] : node["options"],
                         fmt::format("{}.options[{}]", field, i), problem);
        }
        if (node["buffers"]) v.buffers = buffers(node["buffers"], field + ".buffers", params);

        std::vector<BufferSpec> known = suite_buffers;
        known.insert(known.end(), v.buffers.begin(), v.buffers.end());
        if (node["launches"]) {
            for (const auto& key : launch_keys)
                if (node[key])
                    fail(node[key], field + "." + key, "give either 'launches' or a single launch, not both");
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
        v.compile_params = compile_params_of(v, params);
        work_figures(v, node, field, params);
        gating(v, node, field);
        return v;
    }

    /// A variant whose kernels come from a module file (cubin, fatbin or PTX) built by the project's
    /// own compiler. `${VAR}` in the path is taken from the environment; a path that comes from a
    /// variable (a build folder) may lie anywhere, one written in the suite stays in the project.
    void module_variant(VariantSpec& v, const YAML::Node& node, const std::string& field) const
    {
        for (const char* key : {"source", "defines", "options"})
            if (node[key])
                fail(node[key], field + "." + key,
                     fmt::format("a 'module' variant is built already: '{}' does not apply", key));
        const std::string written = scalar(node["module"], field + ".module");
        std::string path;
        bool from_environment = false;
        for (std::size_t i = 0; i < written.size();) {
            if (written.compare(i, 2, "${") != 0) {
                path += written[i++];
                continue;
            }
            const std::size_t close = written.find('}', i);
            const std::string name = close == std::string::npos ? "" : written.substr(i + 2, close - i - 2);
            static const std::regex variable("[A-Za-z_][A-Za-z0-9_]*");
            if (!std::regex_match(name, variable))
                fail(node["module"], field + ".module", "write an environment variable as ${NAME}");
            const char* value = std::getenv(name.c_str());
            if (!value || !*value)
                fail(node["module"], field + ".module",
                     fmt::format("the environment variable {} is not set (it names where the module is built)", name));
            path += value;
            from_environment = true;
            i = close + 1;
        }
        if (path.empty() || path.find('\0') != std::string::npos)
            fail(node["module"], field + ".module", "must name a file");
        v.module = resolve(node["module"], field + ".module", path);
        if (!from_environment) check_inside_project(node["module"], field + ".module", v.module);
        if (node["built_from"])
            for (const auto& source : string_list(node["built_from"], field + ".built_from")) {
                const fs::path p = resolve(node["built_from"], field + ".built_from", source);
                check_inside_project(node["built_from"], field + ".built_from", p);
                if (!fs::is_regular_file(p))
                    fail(node["built_from"], field + ".built_from", fmt::format("no such file: {}", p.string()));
                v.built_from.push_back(p);
            }
    }

    /// The sweep parameters that reach the compiler through the variant's entries and defines, in
    /// the suite's order.
    std::vector<std::string> compile_params_of(const VariantSpec& v,
                                               const std::set<std::string, std::less<>>& params) const
    {
        std::set<std::string, std::less<>> used;
        for (const auto& l : v.launches)
            if (const std::size_t open = l.entry.find('<'); open != std::string::npos)
                for (auto& name : param_names_in(std::string_view(l.entry).substr(open), params)) used.insert(name);
        for (const auto& [name, value] : v.defines)
            for (auto& p : param_names_in(value, params)) used.insert(p);
        std::vector<std::string> ordered;
        for (const auto& p : param_order_)
            if (used.contains(p)) ordered.push_back(p);
        return ordered;
    }

    /// A variant's own `flops:` and `bytes:`, computable at every sweep point.
    void work_figures(VariantSpec& v, const YAML::Node& node, const std::string& field,
                      const std::set<std::string, std::less<>>& params) const
    {
        for (const auto& [key, target] : {std::pair{"flops", &v.flops}, std::pair{"bytes", &v.bytes}})
            if (node[key]) {
                *target = expression(node[key], field + "." + key, params);
                check_computable(node[key], field + "." + key, **target);
            }
    }

    /// A variant's `compare:` and `expect:`.
    void gating(VariantSpec& v, const YAML::Node& node, const std::string& field) const
    {
        if (node["compare"]) v.compare = compare_rules(node["compare"], field + ".compare");
        if (node["expect"]) v.expect = expectations(node["expect"], field + ".expect");
    }

    /// A variant that calls a library routine (builtin_signatures.hxx) instead of a kernel.
    VariantSpec builtin_variant(VariantSpec v, const YAML::Node& node, const std::string& field,
                                const std::set<std::string, std::less<>>& params,
                                const std::vector<BufferSpec>& suite_buffers) const
    {
        check_keys(node, field, {"builtin", "args", "buffers", "flops", "bytes", "compare", "expect"},
                   {"builtin", "args"});
        v.builtin = scalar(node["builtin"], field + ".builtin");
        const BuiltinSignature* info = find_builtin_signature(v.builtin);
        if (!info) {
            std::vector<std::string> names;
            for (const auto& b : builtin_signatures()) names.push_back(b.name);
            fail(node["builtin"], field + ".builtin",
                 fmt::format("unknown built-in '{}'{}; one of {}", v.builtin, did_you_mean(v.builtin, names),
                             join(names)));
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
                fail(args[i], fmt::format("{}.args[{}]", field, i),
                     fmt::format("{} takes {}", v.builtin, info->signature));
            // A library routine reads its buffers as one type: another would be read past its end.
            // The variant's own buffer of a name comes last in `known` and replaces the suite's.
            const auto b = std::find_if(known.rbegin(), known.rend(),
                                        [&](const BufferSpec& x) { return x.name == l.args.back().buffer; });
            if (b != known.rend() && b->type != info->buffer_type)
                fail(args[i], fmt::format("{}.args[{}]", field, i),
                     fmt::format("{} reads {} buffers; '{}' is {}", v.builtin, element_type_name(info->buffer_type),
                                 b->name, element_type_name(b->type)));
        }
        v.launches.push_back(std::move(l));
        work_figures(v, node, field, params);
        gating(v, node, field);
        return v;
    }

    Suite suite(const YAML::Node& root)
    {
        if (!root.IsMap()) fail(root, "", "a suite file is a YAML map (see docs/suite-format.md)");
        check_keys(root, "",
                   {"suite", "description", "include", "archs", "params", "reference", "tolerance", "timing", "buffers",
                    "flops", "bytes", "variants", "compare", "expect", "metrics"},
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

        if (root["include"]) {
            for (const auto& dir : string_list(root["include"], "include")) {
                const fs::path p = resolve(root["include"], "include", dir);
                if (!fs::is_directory(p)) fail(root["include"], "include", "no such directory: " + p.string());
                check_inside_project(root["include"], "include", p);
                s.include_dirs.push_back(p);
            }
        } else if (fs::is_directory(dir_ / ".." / "kernels")) {
            s.include_dirs.push_back(fs::weakly_canonical(dir_ / ".." / "kernels"));
        }

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

        const YAML::Node params = root["params"];
        expect_map(params, "params");
        if (params.size() == 0) fail(params, "params", "needs at least one parameter");
        std::set<std::string, std::less<>> names;
        for (const auto& kv : params) {
            const std::string name = kv.first.as<std::string>();
            if (names.contains(name)) fail(kv.first, "params." + name, "declared twice");
            s.params.push_back(param(name, kv.second, "params." + name));
            names.insert(name);
            param_order_.push_back(name);
        }
        std::size_t point_count = 1;
        for (const auto& p : s.params) {
            point_count *= p.values.size();
            if (point_count > max_cases)
                fail(params, "params",
                     fmt::format("the sweep has more than {} points (the product of every parameter's values)",
                                 max_cases));
        }
        points_ = sweep_points(s);
        for (const auto& point : points_) point_texts_.push_back(params_text(s, point));
        archs_ = s.archs;
        archs_given_ = static_cast<bool>(root["archs"]);

        if (root["tolerance"]) s.tolerance = tolerance(root["tolerance"], "tolerance", Tolerance{});
        if (root["timing"]) {
            const YAML::Node t = root["timing"];
            check_keys(t, "timing", {"min_samples", "max_noise", "budget_s", "timeout_s"});
            if (t["min_samples"])
                s.timing.min_samples = static_cast<int>(integer_in(t["min_samples"], "timing.min_samples", 1, 100000));
            if (t["max_noise"]) s.timing.max_noise = number_in(t["max_noise"], "timing.max_noise", 0.0, 1.0);
            if (t["budget_s"]) s.timing.budget_s = number_in(t["budget_s"], "timing.budget_s", 0.0, 3600.0);
            if (t["timeout_s"]) {
                s.timing.timeout_s = number_in(t["timeout_s"], "timing.timeout_s", 0.0, 86400.0);
                if (s.timing.timeout_s <= 0) fail(t["timeout_s"], "timing.timeout_s", "must be positive");
            }
        }
        if (root["buffers"]) s.buffers = buffers(root["buffers"], "buffers", names);
        if (root["compare"]) s.compare = compare_rules(root["compare"], "compare");
        if (root["expect"]) s.expect = expectations(root["expect"], "expect");

        std::optional<Expression> flops, bytes;
        for (const auto& [key, target] : {std::pair{"flops", &flops}, std::pair{"bytes", &bytes}})
            if (root[key]) {
                *target = expression(root[key], key, names);
                check_computable(root[key], key, **target);
            }

        const YAML::Node variants = root["variants"];
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
            VariantSpec v = variant(name, kv.second, "variants." + name, names, s.buffers);
            if (!v.flops) v.flops = flops;
            if (!v.bytes) v.bytes = bytes;
            s.variants.push_back(std::move(v));
        }
        if (s.variants.size() * points_.size() > max_cases)
            fail(variants, "variants",
                 fmt::format("{} variants x {} sweep points make more than the {} cases allowed", s.variants.size(),
                             points_.size(), max_cases));

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

    /// `path` relative to the suite's folder, made absolute with symbolic links resolved.
    fs::path resolve(const YAML::Node& node, const std::string& field, const std::string& path) const
    {
        std::error_code ec;
        fs::path out = fs::weakly_canonical(dir_ / path, ec);
        if (ec) fail(node, field, fmt::format("cannot resolve '{}': {}", path.substr(0, 200), ec.message()));
        return out;
    }

    /// Refuses a source or include folder outside the project, unless the user allowed it.
    void check_inside_project(const YAML::Node& node, const std::string& field, const fs::path& path) const
    {
        if (options_.sources_anywhere || is_inside(path, root_)) return;
        fail(node, field,
             fmt::format("{} lies outside the project {} (the nearest folder above the suite that holds kernels/, "
                         "baselines/ or .git); pass --sources-anywhere to allow it",
                         path.string(), root_.string()));
    }

    /// The value of `e` at sweep point `point`, or an error naming the field and the point.
    std::int64_t value_at(const YAML::Node& node, const std::string& field, const Expression& e,
                          std::size_t point) const
    {
        try {
            return e.evaluate(points_[point]);
        } catch (const ExpressionError& err) {
            fail(node, field, fmt::format("{} in '{}' at {}", err.what(), e.text(), point_texts_[point]));
        }
    }

    /// Every sweep point's launch fits what any GPU can launch: 1 to 1024 threads per block (z up
    /// to 64), a grid of 1 to 2^31-1 x 65535 x 65535 blocks, and dynamic shared memory from 0 to
    /// the suite's architectures' opt-in maximum per block.
    void check_geometry(const YAML::Node& node, const std::string& field, const LaunchSpec& l) const
    {
        static constexpr std::int64_t block_max[3] = {1024, 1024, 64};
        static constexpr std::int64_t grid_max[3] = {2147483647, 65535, 65535};
        static constexpr char axis[3] = {'x', 'y', 'z'};
        std::int64_t shared_max = INT64_MAX;
        std::string shared_arch;
        for (const auto& arch : archs_)
            if (const ArchLimits* limits = find_arch_limits(arch);
                limits && limits->shared_bytes_per_block_optin < shared_max) {
                shared_max = limits->shared_bytes_per_block_optin;
                shared_arch = arch;
            }
        for (std::size_t p = 0; p < points_.size(); ++p) {
            const auto& where = point_texts_[p];
            std::int64_t threads = 1;
            for (std::size_t d = 0; d < l.block.size(); ++d) {
                const std::int64_t v = value_at(node["block"], field + ".block", l.block[d], p);
                if (v < 1 || v > block_max[d])
                    fail(node["block"], field + ".block",
                         fmt::format("block.{} is {} at {}; it must be 1 to {}", axis[d], v, where, block_max[d]));
                threads *= v;
            }
            if (threads > 1024)
                fail(node["block"], field + ".block",
                     fmt::format("{} threads per block at {}; a block holds at most 1024", threads, where));
            for (std::size_t d = 0; d < l.grid.size(); ++d) {
                const std::int64_t v = value_at(node["grid"], field + ".grid", l.grid[d], p);
                if (v < 1 || v > grid_max[d])
                    fail(node["grid"], field + ".grid",
                         fmt::format("grid.{} is {} at {}; it must be 1 to {}", axis[d], v, where, grid_max[d]));
            }
            if (!node["shared_bytes"]) continue;
            const std::int64_t shared = value_at(node["shared_bytes"], field + ".shared_bytes", l.shared_bytes, p);
            if (shared < 0 || shared > shared_max)
                fail(node["shared_bytes"], field + ".shared_bytes",
                     fmt::format("{} bytes of dynamic shared memory at {}; it must be 0 to {} ({} per block)", shared,
                                 where, shared_max, shared_arch));
        }
    }

    /// A buffer's element count at every sweep point: not negative, at most 1 TiB of data.
    void check_count(const YAML::Node& node, const std::string& field, const BufferSpec& b) const
    {
        constexpr std::int64_t max_bytes = std::int64_t{1} << 40;
        for (std::size_t p = 0; p < points_.size(); ++p) {
            const std::int64_t count = value_at(node, field, b.count, p);
            if (count < 0 || count > max_bytes / static_cast<std::int64_t>(element_size(b.type)))
                fail(node, field,
                     fmt::format("{} elements at {}; a buffer holds 0 to {} bytes", count, point_texts_[p], max_bytes));
        }
    }

    /// A scalar given as an expression, at every sweep point: computable and within its type's
    /// range (f16, bf16 and FP8: within their largest finite value).
    void check_scalar(const YAML::Node& node, const std::string& field, const ArgSpec& a) const
    {
        if (a.literal) return;
        std::int64_t low = INT64_MIN, high = INT64_MAX;
        const auto& info = element_type_info(a.scalar_type);
        if (info.kind != ElementKind::floating && info.bytes < 8) {
            low = static_cast<std::int64_t>(lowest_value(a.scalar_type));
            high = static_cast<std::int64_t>(max_value(a.scalar_type));
        } else if (info.kind == ElementKind::unsigned_integer) {
            low = 0;
        }
        for (std::size_t p = 0; p < points_.size(); ++p) {
            const std::int64_t v = value_at(node, field, a.scalar, p);
            if (v < low || v > high)
                fail(node, field,
                     fmt::format("{} at {} does not fit {}", v, point_texts_[p], element_type_name(a.scalar_type)));
            if (info.kind == ElementKind::floating)
                check_float_scalar(node, field, a.scalar_type, static_cast<double>(v), " at " + point_texts_[p]);
        }
    }

    /// A scalar of a narrow float type (f16, bf16, FP8) within its largest finite value: beyond
    /// it the kernel would get infinity, NaN or a saturated value nobody wrote. f32 and f64 convert
    /// as C++ does, as they always have.
    void check_float_scalar(const YAML::Node& node, const std::string& field, ElementType type, double value,
                            const std::string& at) const
    {
        if (type == ElementType::f32 || type == ElementType::f64) return;
        if (std::fabs(value) > max_value(type))
            fail(node, field,
                 fmt::format("{:g}{} is beyond the largest finite {} ({:g})", value, at, element_type_name(type),
                             max_value(type)));
    }

    /// The element type called `name`, or an error listing them; `what` says which kind of
    /// field it is ("type", "scalar type").
    ElementType element_type(const YAML::Node& node, const std::string& name, const std::string& field,
                             const std::string& what) const
    {
        if (const auto t = element_type_from_name(name)) return *t;
        const auto names = element_type_names();
        const std::vector<std::string> known(names.begin(), names.end());
        fail(node, field,
             fmt::format("unknown {} '{}'{}; one of {}", what, name.substr(0, 40), did_you_mean(name, known),
                         join(known)));
    }

    /// FP8 exists in hardware from sm_89 (Ada) on: a suite whose static tier or GPUs include an
    /// older architecture may not hand FP8 data to a kernel.
    void check_type_on_archs(const YAML::Node& node, const std::string& field, ElementType type,
                             const std::string& what) const
    {
        const int needed = element_type_info(type).min_sm_version;
        if (needed == 0) return;
        for (const auto& arch : archs_)
            if (const ArchLimits* limits = find_arch_limits(arch); limits && limits->sm_version < needed)
                fail(node, field,
                     fmt::format("{} of type {} needs sm_{} or newer, but the suite's archs include {}{}; list only "
                                 "sm_{} and newer architectures in `archs`",
                                 what, element_type_name(type), needed, arch,
                                 archs_given_ ? "" : " (a suite without `archs` covers sm_80 and sm_90)", needed));
    }

    /// An expression of the sweep (flops, bytes) is computable at every point.
    void check_computable(const YAML::Node& node, const std::string& field, const Expression& e) const
    {
        for (std::size_t p = 0; p < points_.size(); ++p) value_at(node, field, e, p);
    }

private:
    fs::path file_;
    fs::path dir_;
    fs::path root_;
    LoadOptions options_;
    std::vector<Bindings> points_;
    std::vector<std::string> point_texts_;
    std::vector<std::string> archs_;
    std::vector<std::string> param_order_; ///< the sweep parameters in declaration order
    bool archs_given_ = false;             ///< the suite has an `archs:` key
};

} // namespace

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
