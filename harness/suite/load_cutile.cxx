// A suite's `cutile:` variants: kernels exported from cuTile (cutile_manifest.hxx), their arrays
// checked at every point against what the export assumed and passed as cuTile's calling
// convention says.

#include "harness/core/error.hxx"
#include "harness/suite/cutile_manifest.hxx"
#include "harness/suite/loader.hxx"

#include <algorithm>
#include <fmt/format.h>

namespace harness::suite {

namespace {

/// "out (f32 array of 2 dimensions), n (i32)": a manifest's parameters for messages.
std::string parameter_list(const CutileManifest& m)
{
    std::string out;
    for (const auto& p : m.parameters)
        out += fmt::format("{}{} ({})", out.empty() ? "" : ", ", p.name,
                           p.array ? fmt::format("{} array of {} dimension{}", element_type_name(p.type), p.array->ndim,
                                                 p.array->ndim == 1 ? "" : "s")
                                   : element_type_name(p.type));
    return out.empty() ? "no arguments" : out;
}

} // namespace

VariantSpec Loader::cutile_variant(VariantSpec v, const YAML::Node& node, const std::string& field,
                                   const std::set<std::string, std::less<>>& params,
                                   const std::vector<BufferSpec>& suite_buffers) const
{
    // What the manifest says is not written again in the suite, where it could disagree with it.
    static const std::pair<const char*, const char*> from_manifest[] = {
        {"entry", "the kernel's symbol"},         {"block", "the kernel's .reqntid"},
        {"shared_bytes", "static, in the cubin"}, {"launches", "one kernel per export"},
        {"source", "the exported cubin"},         {"module", "the exported cubin"},
        {"defines", "constants, compiled in"},    {"options", "compiled in"},
        {"built_from", "source_sha256"}};
    for (const auto& [key, fact] : from_manifest)
        if (node[key])
            fail(node[key], field + "." + key,
                 fmt::format("a 'cutile' variant takes '{}' from its manifest ({})", key, fact));
    check_keys(node, field,
               {"cutile", "grid", "args", "stale", "buffers", "flops", "bytes", "compare", "expect", "params"},
               {"cutile", "grid", "args"});

    const std::string written = scalar(node["cutile"], field + ".cutile");
    v.manifest = resolve(node["cutile"], field + ".cutile", written);
    check_inside_project(node["cutile"], field + ".cutile", v.manifest);
    if (!fs::is_regular_file(v.manifest))
        fail(node["cutile"], field + ".cutile",
             fmt::format("no such file: {} (ci/cutile_export.py writes it)", v.manifest.string()));
    CutileManifest m;
    try {
        m = read_cutile_manifest(v.manifest, options_.sources_anywhere ? v.manifest.root_path() : root_);
    } catch (const Error& e) {
        fail(node["cutile"], field + ".cutile", e.what());
    }
    v.exported_from = m.source;
    v.module = m.cubin;
    v.module_written = written.substr(0, written.find_last_of('/') + 1) + m.cubin.filename().string();
    v.allow_stale = true; // staleness is the manifest's hashes, not file times
    bool allow_stale = false;
    if (node["stale"]) {
        const std::string stale = scalar(node["stale"], field + ".stale");
        if (stale != "allow" && stale != "error")
            fail(node["stale"], field + ".stale",
                 fmt::format("'{}': write 'error' (the default: an export whose .py source changed fails) or 'allow'",
                             stale.substr(0, 100)));
        allow_stale = stale == "allow";
    }
    if (const std::string problem = cutile_staleness(m); !problem.empty() && !allow_stale)
        fail(node["cutile"], field + ".cutile", problem);
    const std::string arch = fmt::format("sm_{}", m.arch);
    for (const auto& a : archs_)
        if (a != arch)
            fail(node["cutile"], field + ".cutile",
                 fmt::format("exported for {} only, and the suite's archs include {}: give the suite `archs: [{}]`",
                             arch, a, arch));

    if (node["buffers"]) v.buffers = buffers(node["buffers"], field + ".buffers", params);
    std::vector<BufferSpec> known = suite_buffers;
    known.insert(known.end(), v.buffers.begin(), v.buffers.end());

    LaunchSpec l;
    l.where = where(node);
    l.entry = m.entry;
    l.block = {Expression::constant(m.block[0])};
    if (m.block[1] > 1 || m.block[2] > 1)
        l.block = {Expression::constant(m.block[0]), Expression::constant(m.block[1]),
                   Expression::constant(m.block[2])};
    l.grid = dims(node["grid"], field + ".grid", params);
    l.shared_bytes = Expression::constant(0); // cuTile's shared memory is static, in the cubin
    check_geometry(node, field, l);
    cutile_arguments(l, m, node, field, params, known);
    v.launches.push_back(std::move(l));
    work_figures(v, node, field, params);
    gating(v, node, field);
    return v;
}

void Loader::cutile_arguments(LaunchSpec& l, const CutileManifest& m, const YAML::Node& node, const std::string& field,
                              const std::set<std::string, std::less<>>& params,
                              const std::vector<BufferSpec>& known) const
{
    const YAML::Node args = node["args"];
    if (!args.IsSequence()) fail(args, field + ".args", "expected a list of arguments");
    if (args.size() != m.parameters.size())
        fail(args, field + ".args",
             fmt::format("{} takes {} argument{}: {} (constants are compiled in: {})", m.function, m.parameters.size(),
                         m.parameters.size() == 1 ? "" : "s", parameter_list(m), m.constants));
    std::vector<std::pair<std::string, const CutileParameter*>> arrays; // buffer, parameter
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string f = fmt::format("{}.args[{}]", field, i);
        const CutileParameter& p = m.parameters[i];
        if (p.array) {
            const std::string buffer = cutile_array(l, p, args[i], f, params, known);
            for (const auto& [other, q] : arrays)
                if (other == buffer &&
                    std::none_of(p.array->alias_groups.begin(), p.array->alias_groups.end(), [&](const std::string& g) {
                        return std::find(q->array->alias_groups.begin(), q->array->alias_groups.end(), g) !=
                               q->array->alias_groups.end();
                    }))
                    fail(args[i], f,
                         fmt::format("{} and {} are both buffer '{}', but the export assumes they do not alias "
                                     "(they share no alias group)",
                                     q->name, p.name, buffer));
            arrays.emplace_back(buffer, &p);
            continue;
        }
        // A scalar's type is the kernel's: `N` stands for {i32: N} when the parameter is i32.
        const std::string type = element_type_name(p.type);
        if (args[i].IsMap() && (args[i].size() != 1 || args[i].begin()->first.as<std::string>() != type))
            fail(args[i], f, fmt::format("{} is {}: write the value alone, or as {{{}: VALUE}}", p.name, type, type));
        if (!args[i].IsMap() && !args[i].IsScalar())
            fail(args[i], f, fmt::format("{} is {}: give a value", p.name, type));
        YAML::Node typed(YAML::NodeType::Map);
        typed[type] = args[i].IsMap() ? args[i].begin()->second : args[i];
        ArgSpec a = arg(typed, f, params, known);
        a.where = where(args[i]);
        l.args.push_back(std::move(a));
    }
}

std::string Loader::cutile_array(LaunchSpec& l, const CutileParameter& p, const YAML::Node& node, const std::string& f,
                                 const std::set<std::string, std::less<>>& params,
                                 const std::vector<BufferSpec>& known) const
{
    const CutileArray& array = *p.array;
    const std::string form = fmt::format("{{array: BUFFER, shape: [{} extents]}} (strides: [...] optional, in "
                                         "elements; row-major without)",
                                         array.ndim);
    if (!node.IsMap() || !node["array"] || !node["shape"])
        fail(node, f,
             fmt::format("{} is a {} array of {} dimensions: write {}", p.name, element_type_name(p.type), array.ndim,
                         form));
    check_keys(node, f, {"array", "shape", "strides"}, {"array", "shape"});
    const std::string buffer = scalar(node["array"], f + ".array");
    const auto b = std::find_if(known.rbegin(), known.rend(), [&](const BufferSpec& x) { return x.name == buffer; });
    if (b == known.rend())
        fail(node["array"], f + ".array",
             fmt::format("'{}' is no buffer of the suite or the variant", buffer.substr(0, 100)));
    if (b->type != p.type)
        fail(node["array"], f + ".array",
             fmt::format("{} is an array of {}; buffer '{}' is {}", p.name, element_type_name(p.type), b->name,
                         element_type_name(b->type)));
    // Device allocations start 256-byte aligned: a base divisible by a divisor of 256 always holds.
    if (256 % array.base_addr_divisible_by != 0)
        fail(node["array"], f + ".array",
             fmt::format("the export assumes {}'s base address divisible by {} bytes; a buffer is aligned to 256",
                         p.name, array.base_addr_divisible_by));
    const std::vector<Expression> shape = dims_of(node["shape"], f + ".shape", array.ndim, params);
    std::vector<Expression> strides;
    if (node["strides"]) {
        strides = dims_of(node["strides"], f + ".strides", array.ndim, params);
    } else {
        // Row-major: the last dimension's stride is 1, each other's the product of the extents after it.
        std::string product = "1";
        strides.resize(array.ndim, Expression::constant(1));
        for (int d = array.ndim - 1; d >= 0; --d) {
            strides[d] = expression_text(node["shape"], product, f + ".shape", params);
            product = fmt::format("({}) * ({})", product, shape[d].text());
        }
    }
    for (const std::size_t point : checked_points_) check_array_at(node, f, p, *b, shape, strides, point);
    ArgSpec pointer;
    pointer.buffer = buffer;
    pointer.where = where(node);
    l.args.push_back(std::move(pointer));
    // cuTile's calling convention: the base pointer, then the shape, then the strides.
    const std::vector<Expression>* passed[] = {&shape, &strides};
    for (const auto* list : passed)
        for (const Expression& e : *list) {
            ArgSpec a;
            a.scalar_type = array.index_type;
            a.scalar = e;
            a.where = where(node);
            l.args.push_back(std::move(a));
        }
    return buffer;
}

std::vector<Expression> Loader::dims_of(const YAML::Node& node, const std::string& field, int ndim,
                                        const std::set<std::string, std::less<>>& params) const
{
    if (!node.IsSequence() || node.size() != static_cast<std::size_t>(ndim))
        fail(node, field, fmt::format("expected a list of {} value{}, one per dimension", ndim, ndim == 1 ? "" : "s"));
    std::vector<Expression> out;
    for (std::size_t d = 0; d < node.size(); ++d)
        out.push_back(expression(node[d], fmt::format("{}[{}]", field, d), params));
    return out;
}

void Loader::check_array_at(const YAML::Node& node, const std::string& f, const CutileParameter& p,
                            const BufferSpec& buffer, const std::vector<Expression>& shape,
                            const std::vector<Expression>& strides, std::size_t point) const
{
    const CutileArray& array = *p.array;
    const std::int64_t index_max = array.index_type == ElementType::i32 ? INT32_MAX : INT64_MAX;
    const std::string& at = point_texts_[point];
    std::int64_t last = 0; // the furthest element the array reaches
    bool empty = false;
    for (int d = 0; d < array.ndim; ++d) {
        const std::string sf = fmt::format("{}.shape[{}]", f, d);
        const std::string tf = fmt::format("{}.strides[{}]", f, d);
        const YAML::Node& shape_node = node["shape"][d];
        const YAML::Node& stride_node = node["strides"] ? node["strides"][d] : node["shape"];
        const std::int64_t extent = value_at(shape_node, sf, shape[d], point);
        const std::int64_t stride = value_at(stride_node, tf, strides[d], point);
        if (extent < 0 || extent > index_max)
            fail(shape_node, sf,
                 fmt::format("{}.shape[{}] is {} at {}: 0 to {} ({})", p.name, d, extent, at, index_max,
                             element_type_name(array.index_type)));
        if (stride < -index_max || stride > index_max)
            fail(stride_node, tf,
                 fmt::format("{}.strides[{}] is {} at {}: it does not fit {}", p.name, d, stride, at,
                             element_type_name(array.index_type)));
        // The kernel was compiled for these: another value runs it with wrong masks, misaligned
        // vector accesses or an address computed from a stride it folded in.
        if (extent % array.shape_divisible_by[d] != 0)
            fail(shape_node, sf,
                 fmt::format("{}.shape[{}] is {} at {}, but the export assumes a multiple of {} (shape_divisible_by): "
                             "give this variant values that are, or export one without it",
                             p.name, d, extent, at, array.shape_divisible_by[d]));
        if (stride % array.stride_divisible_by[d] != 0)
            fail(stride_node, tf,
                 fmt::format("{}.strides[{}] is {} at {}, but the export assumes a multiple of {} "
                             "(stride_divisible_by)",
                             p.name, d, stride, at, array.stride_divisible_by[d]));
        if (array.stride_constant[d] && stride != *array.stride_constant[d])
            fail(stride_node, tf,
                 fmt::format("{}.strides[{}] is {} at {}, but the export assumes it is {} (stride_constant)", p.name, d,
                             stride, at, *array.stride_constant[d]));
        if (array.stride_lower_bound[d] && stride < *array.stride_lower_bound[d])
            fail(stride_node, tf,
                 fmt::format("{}.strides[{}] is {} at {}, but the export assumes at least {} (stride_lower_bound)",
                             p.name, d, stride, at, *array.stride_lower_bound[d]));
        if (stride < 0)
            fail(stride_node, tf,
                 fmt::format("{}.strides[{}] is {} at {}: the array is passed as its buffer's start, and a negative "
                             "stride would reach before it",
                             p.name, d, stride, at));
        if (!array.may_alias_internally && stride == 0 && extent > 1)
            fail(stride_node, tf,
                 fmt::format("{}.strides[{}] is 0 at {}: two indices would name one element, and the export "
                             "assumes they do not (may_alias_internally is false)",
                             p.name, d, at));
        empty = empty || extent == 0;
        const std::int64_t steps = extent > 0 ? extent - 1 : 0;
        last = stride != 0 && steps > (INT64_MAX - last) / stride ? INT64_MAX : last + steps * stride;
    }
    const std::int64_t count = value_at(node["array"], f + ".array", buffer.count, point);
    if (!empty && last >= count)
        fail(node["shape"], f + ".shape",
             fmt::format("{} reaches element {} of buffer '{}' at {}, which holds {}", p.name, last, buffer.name, at,
                         count));
}

} // namespace harness::suite
