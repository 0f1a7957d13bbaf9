// The suite loader: buffers, variants, launches and their arguments.

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

} // namespace

BufferSpec Loader::buffer(const std::string& name, const YAML::Node& node, const std::string& field,
                          const std::set<std::string, std::less<>>& params) const
{
    check_keys(node, field, {"type", "count", "init", "seed", "min", "max", "index", "round_to", "role", "tolerance"},
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
                             held.empty() ? fmt::format("none but {} itself", element_type_name(b.type)) : join(held)));
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
    value_bounds(b, node, field, params);
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

void Loader::value_bounds(BufferSpec& b, const YAML::Node& node, const std::string& field,
                          const std::set<std::string, std::less<>>& params) const
{
    // A bound is a number (-0.5, 1e3) or an integer expression of the sweep (`V - 1`), the
    // latter read at each point: an integer buffer drawn in [0, V - 1] holds valid indices.
    const auto bound = [&](const char* key, double& number, std::optional<Expression>& written) {
        const YAML::Node value = node[key];
        if (!value) return;
        const std::string f = field + "." + key;
        if (const auto v = parse_decimal_number(scalar(value, f)))
            number = *v;
        else
            written = expression(value, f, params);
    };
    bound("min", b.min, b.min_expression);
    bound("max", b.max, b.max_expression);
    const auto at = [&](const char* key, double number, const std::optional<Expression>& e, std::size_t point) {
        return e ? static_cast<double>(value_at(node[key], field + "." + key, *e, point)) : number;
    };
    if (!b.min_expression && !b.max_expression) {
        if (b.max < b.min) fail(node, field, "'max' is below 'min'");
        return;
    }
    for (const std::size_t p : checked_points_) {
        const double low = at("min", b.min, b.min_expression, p);
        const double high = at("max", b.max, b.max_expression, p);
        if (high < low)
            fail(node, field, fmt::format("'max' ({:g}) is below 'min' ({:g}) at {}", high, low, point_texts_[p]));
    }
}

std::vector<BufferSpec> Loader::buffers(const YAML::Node& node, const std::string& field,
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

ArgSpec Loader::arg(const YAML::Node& node, const std::string& field, const std::set<std::string, std::less<>>& params,
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

LaunchSpec Loader::launch(const YAML::Node& node, const std::string& field,
                          const std::set<std::string, std::less<>>& params,
                          const std::vector<BufferSpec>& known_buffers) const
{
    LaunchSpec l;
    l.where = where(node);
    l.entry = scalar(node["entry"], field + ".entry");
    if (const std::string problem = entry_problem(l.entry); !problem.empty())
        fail(node["entry"], field + ".entry", problem);
    l.block = dims(node["block"], field + ".block", params);
    l.block_where = where(node["block"]);
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

namespace {

/// The kind a variant's keys make it: the first of `builtin`, `triton`, `cutile` and `module` it has, else a
/// `source:` variant (which then says what is missing).
VariantKind kind_of(const YAML::Node& node)
{
    if (!node.IsMap()) return VariantKind::source;
    for (const VariantKind kind : {VariantKind::builtin, VariantKind::triton, VariantKind::cutile, VariantKind::module})
        if (node[variant_kind_key(kind)]) return kind;
    return VariantKind::source;
}

const std::vector<std::string> launch_keys = {"entry", "block", "grid", "shared_bytes", "args"};

} // namespace

const std::vector<std::string>& Loader::kernel_variant_keys()
{
    static const std::vector<std::string> keys = [] {
        std::vector<std::string> allowed = {"source",  "module",   "built_from", "stale", "defines",
                                            "options", "launches", "buffers",    "flops", "bytes",
                                            "builtin", "compare",  "expect",     "params"};
        allowed.insert(allowed.end(), launch_keys.begin(), launch_keys.end());
        return allowed;
    }();
    return keys;
}

VariantSpec Loader::variant(const std::string& name, const YAML::Node& node, const std::string& field,
                            const std::set<std::string, std::less<>>& params,
                            const std::vector<BufferSpec>& suite_buffers) const
{
    VariantSpec v;
    v.name = name;
    v.where = where(node);
    if (const auto own = variant_params_.find(name); own != variant_params_.end()) v.params = own->second;
    v.kind = kind_of(node);
    switch (v.kind) {
    case VariantKind::source: return source_variant(std::move(v), node, field, params, suite_buffers);
    case VariantKind::module: return module_variant(std::move(v), node, field, params, suite_buffers);
    case VariantKind::triton: return triton_variant(std::move(v), node, field, params, suite_buffers);
    case VariantKind::cutile: return cutile_variant(std::move(v), node, field, params, suite_buffers);
    case VariantKind::builtin: return builtin_variant(std::move(v), node, field, params, suite_buffers);
    }
    fail(node, field, "a variant of no known kind"); // kind_of returns one of the above
}

VariantSpec Loader::kernel_launches(VariantSpec v, const YAML::Node& node, const std::string& field,
                                    const std::set<std::string, std::less<>>& params,
                                    const std::vector<BufferSpec>& suite_buffers) const
{
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
    v.compile_params = compile_params_of(v, params);
    work_figures(v, node, field, params);
    gating(v, node, field);
    return v;
}

/// The sweep parameters that reach the compiler through the variant's entries and defines, in
/// the suite's order.
std::vector<std::string> Loader::compile_params_of(const VariantSpec& v,
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
void Loader::work_figures(VariantSpec& v, const YAML::Node& node, const std::string& field,
                          const std::set<std::string, std::less<>>& params) const
{
    for (const auto& [key, target] : {std::pair{"flops", &v.flops}, std::pair{"bytes", &v.bytes}})
        if (node[key]) {
            *target = expression(node[key], field + "." + key, params);
            check_computable(node[key], field + "." + key, **target);
        }
}

/// A variant's `compare:` and `expect:`.
void Loader::gating(VariantSpec& v, const YAML::Node& node, const std::string& field) const
{
    if (node["compare"]) v.compare = compare_rules(node["compare"], field + ".compare");
    if (node["expect"]) v.expect = expectations(node["expect"], field + ".expect");
}

/// Every sweep point's launch fits what any GPU can launch: 1 to 1024 threads per block (z up
/// to 64), a grid of 1 to 2^31-1 x 65535 x 65535 blocks, and dynamic shared memory from 0 to
/// the suite's architectures' opt-in maximum per block.
void Loader::check_geometry(const YAML::Node& node, const std::string& field, const LaunchSpec& l) const
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
    for (const std::size_t p : checked_points_) {
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
void Loader::check_count(const YAML::Node& node, const std::string& field, const BufferSpec& b) const
{
    constexpr std::int64_t max_bytes = std::int64_t{1} << 40;
    for (const std::size_t p : checked_points_) {
        const std::int64_t count = value_at(node, field, b.count, p);
        if (count < 0 || count > max_bytes / static_cast<std::int64_t>(element_size(b.type)))
            fail(node, field,
                 fmt::format("{} elements at {}; a buffer holds 0 to {} bytes", count, point_texts_[p], max_bytes));
    }
}

/// A scalar given as an expression, at every sweep point: computable and within its type's
/// range (f16, bf16 and FP8: within their largest finite value).
void Loader::check_scalar(const YAML::Node& node, const std::string& field, const ArgSpec& a) const
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
    for (const std::size_t p : checked_points_) {
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
void Loader::check_float_scalar(const YAML::Node& node, const std::string& field, ElementType type, double value,
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
ElementType Loader::element_type(const YAML::Node& node, const std::string& name, const std::string& field,
                                 const std::string& what) const
{
    if (const auto t = element_type_from_name(name)) return *t;
    const auto names = element_type_names();
    const std::vector<std::string> known(names.begin(), names.end());
    fail(node, field,
         fmt::format("unknown {} '{}'{}; one of {}", what, name.substr(0, 40), did_you_mean(name, known), join(known)));
}

/// FP8 exists in hardware from sm_89 (Ada) on: a suite whose static tier or GPUs include an
/// older architecture may not hand FP8 data to a kernel.
void Loader::check_type_on_archs(const YAML::Node& node, const std::string& field, ElementType type,
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

} // namespace harness::suite
