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

VariantSpec Loader::variant(const std::string& name, const YAML::Node& node, const std::string& field,
                            const std::set<std::string, std::less<>>& params,
                            const std::vector<BufferSpec>& suite_buffers) const
{
    static const std::vector<std::string> launch_keys = {"entry", "block", "grid", "shared_bytes", "args"};
    std::vector<std::string> allowed = {"source",  "module", "built_from", "stale",   "defines", "options", "launches",
                                        "buffers", "flops",  "bytes",      "builtin", "compare", "expect",  "params"};
    allowed.insert(allowed.end(), launch_keys.begin(), launch_keys.end());
    VariantSpec v;
    v.name = name;
    v.where = where(node);
    if (const auto own = variant_params_.find(name); own != variant_params_.end()) v.params = own->second;
    if (node.IsMap() && node["builtin"]) return builtin_variant(v, node, field, params, suite_buffers);
    if (node.IsMap() && node["triton"]) return triton_variant(v, node, field, params, suite_buffers);
    check_keys(node, field, allowed, {});
    if (node["module"]) {
        module_variant(v, node, field);
    } else {
        if (!node["source"]) fail(node, prefixed(field, "source"), "missing required key (or give 'module')");
        for (const char* key : {"built_from", "stale"})
            if (node[key])
                fail(node[key], field + "." + key, fmt::format("'{}' applies to a 'module' variant only", key));
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
            // An expression of the sweep is passed as its number: it must have one at every point.
            if (const auto e = define_expression(value, params)) check_computable(kv.second, f, *e);
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

/// A variant whose kernels come from a module file (cubin, fatbin or PTX) built by the project's
/// own compiler. The path is literal, but for one documented form: a leading `${NAME_DIR}`, a
/// variable whose name ends in `_DIR` and whose value is a folder (the build folder), followed by
/// a path inside it. No other variable is read, the module stays inside that folder (no `..`),
/// and messages show the path as written, never the variable's value: a suite must not be able
/// to put a job's token into a report ("no such module file: ghp_...") or climb out through
/// `${PWD}/..` or a symbolic link. A path written without a variable stays in the project.
void Loader::module_variant(VariantSpec& v, const YAML::Node& node, const std::string& field) const
{
    for (const char* key : {"source", "defines", "options"})
        if (node[key])
            fail(node[key], field + "." + key,
                 fmt::format("a 'module' variant is built already: '{}' does not apply", key));
    const std::string written = scalar(node["module"], field + ".module");
    if (written.empty() || written.find('\0') != std::string::npos)
        fail(node["module"], field + ".module", "must name a file");
    v.module_written = written;
    const std::size_t variable_at = written.find("${");
    if (variable_at == std::string::npos) {
        v.module = resolve(node["module"], field + ".module", written);
        check_inside_project(node["module"], field + ".module", v.module);
    } else {
        const std::size_t close = written.find('}');
        const std::string name = close == std::string::npos ? "" : written.substr(2, close - 2);
        static const std::regex folder_variable("[A-Za-z_][A-Za-z0-9_]*_DIR");
        if (variable_at != 0 || !std::regex_match(name, folder_variable) ||
            written.find("${", close) != std::string::npos)
            fail(node["module"], field + ".module",
                 "a module path is literal, or starts with one folder variable ${NAME_DIR} (a name ending in _DIR, "
                 "e.g. ${BUILD_DIR}/modules/x.fatbin); no other variable is read");
        const char* value = std::getenv(name.c_str());
        if (!value || !*value)
            fail(node["module"], field + ".module",
                 fmt::format("the environment variable {} is not set (it names where the module is built)", name));
        std::error_code ec;
        // A relative folder (BUILD_DIR=build) means it from the working folder, as a shell would (a
        // bisect step's: its worktree's, LoadOptions::working_folder). It need not exist until the
        // project is built.
        const fs::path given(value);
        const fs::path folder = fs::weakly_canonical(given.is_relative() && !options_.working_folder.empty()
                                                         ? options_.working_folder / given
                                                         : fs::absolute(given, ec),
                                                     ec);
        if (ec)
            fail(node["module"], field + ".module",
                 fmt::format("${{{}}} does not name a folder (its value is not shown)", name));
        const fs::path rest = fs::path(written.substr(close + 1)).relative_path();
        for (const auto& part : rest)
            if (part == "..")
                fail(node["module"], field + ".module",
                     fmt::format("'..' would leave the folder ${{{}}} names: a module stays inside it", name));
        // A folder above the project (a runner's builds folder holding other checkouts, a home, /)
        // is no build folder: through it a suite would reach every project beside this one. The
        // project's own folder (${CI_PROJECT_DIR}) is one.
        if (!options_.sources_anywhere && is_inside(root_, folder) && !is_inside(folder, root_))
            fail(node["module"], field + ".module",
                 fmt::format("${{{}}} names a folder that holds the project, not a build folder; the folder of a "
                             "module lies inside the project or beside it (pass --sources-anywhere to allow it)",
                             name));
        // Resolved before it is checked: a link inside the folder must not lead out of it.
        v.module = fs::weakly_canonical(folder / rest, ec);
        if (ec || (!options_.sources_anywhere && !is_inside(v.module, folder)))
            fail(node["module"], field + ".module",
                 fmt::format("{} leads out of the folder ${{{}}} names (through a symbolic link): a module stays "
                             "inside it",
                             written.substr(0, 200), name));
        v.module_folder = folder;
    }
    if (node["built_from"])
        for (const auto& source : string_list(node["built_from"], field + ".built_from")) {
            const fs::path p = resolve(node["built_from"], field + ".built_from", source);
            check_inside_project(node["built_from"], field + ".built_from", p);
            if (!fs::is_regular_file(p))
                fail(node["built_from"], field + ".built_from", fmt::format("no such file: {}", p.string()));
            v.built_from.push_back(p);
        }
    if (node["stale"]) {
        const std::string stale = scalar(node["stale"], field + ".stale");
        if (stale != "allow" && stale != "error")
            fail(node["stale"], field + ".stale",
                 fmt::format("'{}': write 'error' (the default: a module older than its sources fails) or 'allow'",
                             stale.substr(0, 100)));
        v.allow_stale = stale == "allow";
    }
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

/// A variant that calls a library routine (builtin_signatures.hxx) instead of a kernel.
VariantSpec Loader::builtin_variant(VariantSpec v, const YAML::Node& node, const std::string& field,
                                    const std::set<std::string, std::less<>>& params,
                                    const std::vector<BufferSpec>& suite_buffers) const
{
    check_keys(node, field, {"builtin", "args", "buffers", "flops", "bytes", "compare", "expect", "params"},
               {"builtin", "args"});
    v.builtin = scalar(node["builtin"], field + ".builtin");
    const BuiltinSignature* info = find_builtin_signature(v.builtin);
    if (!info) {
        std::vector<std::string> names;
        for (const auto& b : builtin_signatures()) names.push_back(b.name);
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
