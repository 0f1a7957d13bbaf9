// A suite's `triton:` variants: kernels exported from Triton (triton_manifest.hxx), launched as
// Triton's own launcher would launch them.

#include "harness/core/error.hxx"
#include "harness/suite/loader.hxx"
#include "harness/suite/triton_manifest.hxx"

#include <algorithm>
#include <fmt/format.h>

namespace harness::suite {

namespace {

/// "a_ptr (*fp32), n_cols (i32)": a manifest's parameters for messages.
std::string parameter_list(const TritonManifest& m)
{
    std::string out;
    for (const auto& p : m.parameters) out += fmt::format("{}{} ({})", out.empty() ? "" : ", ", p.name, p.type);
    return out.empty() ? "no arguments" : out;
}

} // namespace

VariantSpec Loader::triton_variant(VariantSpec v, const YAML::Node& node, const std::string& field,
                                   const std::set<std::string, std::less<>>& params,
                                   const std::vector<BufferSpec>& suite_buffers) const
{
    // What the manifest says is not written again in the suite, where it could disagree with it.
    static const std::pair<const char*, const char*> from_manifest[] = {{"entry", "the kernel's name"},
                                                                        {"block", "num_warps: 32 threads per warp"},
                                                                        {"shared_bytes", "shared"},
                                                                        {"launches", "one kernel per export"},
                                                                        {"source", "the exported cubin"},
                                                                        {"module", "the exported cubin"},
                                                                        {"defines", "constexprs, compiled in"},
                                                                        {"options", "compiled in"},
                                                                        {"built_from", "source_sha256"}};
    for (const auto& [key, fact] : from_manifest)
        if (node[key])
            fail(node[key], field + "." + key,
                 fmt::format("a 'triton' variant takes '{}' from its manifest ({})", key, fact));
    check_keys(node, field,
               {"triton", "grid", "args", "stale", "buffers", "flops", "bytes", "compare", "expect", "params"},
               {"triton", "grid", "args"});

    const std::string written = scalar(node["triton"], field + ".triton");
    v.manifest = resolve(node["triton"], field + ".triton", written);
    check_inside_project(node["triton"], field + ".triton", v.manifest);
    if (!fs::is_regular_file(v.manifest))
        fail(node["triton"], field + ".triton",
             fmt::format("no such file: {} (ci/triton_export.py writes it)", v.manifest.string()));
    TritonManifest m;
    try {
        m = read_triton_manifest(v.manifest, options_.sources_anywhere ? v.manifest.root_path() : root_);
    } catch (const Error& e) {
        fail(node["triton"], field + ".triton", e.what());
    }
    v.exported_from = m.source;
    v.module = m.cubin;
    v.module_written = written.substr(0, written.find_last_of('/') + 1) + m.cubin.filename().string();
    // Staleness is the manifest's hashes, not file times, which a checkout sets at random.
    v.allow_stale = true;
    bool allow_stale = false;
    if (node["stale"]) {
        const std::string stale = scalar(node["stale"], field + ".stale");
        if (stale != "allow" && stale != "error")
            fail(node["stale"], field + ".stale",
                 fmt::format("'{}': write 'error' (the default: an export whose .py source changed fails) or 'allow'",
                             stale.substr(0, 100)));
        allow_stale = stale == "allow";
    }
    if (const std::string problem = triton_staleness(m); !problem.empty() && !allow_stale)
        fail(node["triton"], field + ".triton", problem);
    if (!triton_version_.empty() && m.triton_version != triton_version_)
        fail(node["triton"], field + ".triton",
             fmt::format("exported with Triton {}, but the suite's triton_version is {}: export it again with {}",
                         m.triton_version, triton_version_, triton_version_));
    const std::string arch = fmt::format("sm_{}", m.arch);
    for (const auto& a : archs_)
        if (a != arch)
            fail(node["triton"], field + ".triton",
                 fmt::format("exported for {} only, and the suite's archs include {}: give the suite `archs: [{}]`",
                             arch, a, arch));

    if (node["buffers"]) v.buffers = buffers(node["buffers"], field + ".buffers", params);
    std::vector<BufferSpec> known = suite_buffers;
    known.insert(known.end(), v.buffers.begin(), v.buffers.end());

    LaunchSpec l;
    l.where = where(node);
    l.block_where = l.where;
    l.entry = m.entry;
    l.block = {Expression::constant(std::int64_t{m.num_warps} * 32)};
    l.grid = dims(node["grid"], field + ".grid", params);
    // A program of num_ctas CTAs is a thread block cluster: the grid counts CTAs, as Triton's
    // launcher makes it (its x times num_ctas, clusters of num_ctas along x).
    if (m.num_ctas > 1) {
        l.grid[0] = expression_text(node["grid"], fmt::format("({}) * {}", l.grid[0].text(), m.num_ctas),
                                    field + ".grid[0]", params);
        l.cluster = {m.num_ctas, 1, 1};
    }
    l.shared_bytes = Expression::constant(m.shared_bytes);
    check_geometry(node, field, l);
    triton_arguments(v, l, m, node, field, params, known);
    v.launches.push_back(std::move(l));
    work_figures(v, node, field, params);
    gating(v, node, field);
    return v;
}

void Loader::triton_arguments(VariantSpec& v, LaunchSpec& l, const TritonManifest& m, const YAML::Node& node,
                              const std::string& field, const std::set<std::string, std::less<>>& params,
                              const std::vector<BufferSpec>& known) const
{
    const YAML::Node args = node["args"];
    if (!args.IsSequence()) fail(args, field + ".args", "expected a list of arguments");
    if (args.size() != m.parameters.size())
        fail(args, field + ".args",
             fmt::format("{} takes {} argument{}: {}{}", m.function, m.parameters.size(),
                         m.parameters.size() == 1 ? "" : "s", parameter_list(m),
                         args.size() == m.parameters.size() + m.hidden.size()
                             ? "; leave out Triton's hidden scratch parameters: they are passed for you"
                             : ""));
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string f = fmt::format("{}.args[{}]", field, i);
        const TritonParameter& p = m.parameters[i];
        const ElementType type = *triton_element_type(std::string_view(p.type).substr(p.is_pointer() ? 1 : 0));
        if (p.is_pointer()) {
            const bool is_buffer =
                args[i].IsScalar() && std::any_of(known.begin(), known.end(),
                                                  [&](const BufferSpec& b) { return b.name == args[i].Scalar(); });
            if (!is_buffer)
                fail(args[i], f,
                     fmt::format("{} is {}: give a buffer's name{}", p.name, p.type,
                                 args[i].IsScalar() ? fmt::format(" ('{}' is no buffer of the suite or the variant)",
                                                                  args[i].Scalar().substr(0, 100))
                                                    : ""));
            ArgSpec a = arg(args[i], f, params, known);
            // The variant's own buffer of a name comes last in `known` and replaces the suite's.
            const auto b =
                std::find_if(known.rbegin(), known.rend(), [&](const BufferSpec& x) { return x.name == a.buffer; });
            if (b->type != type)
                fail(args[i], f,
                     fmt::format("{} is {}, a pointer to {}; buffer '{}' is {}", p.name, p.type,
                                 element_type_name(type), b->name, element_type_name(b->type)));
            l.args.push_back(std::move(a));
            continue;
        }
        // A scalar's type is the kernel's: `N` stands for {i32: N} when the parameter is i32.
        YAML::Node typed(YAML::NodeType::Map);
        typed[element_type_name(type)] = args[i].IsMap() ? args[i].begin()->second : args[i];
        if (args[i].IsMap() &&
            (args[i].size() != 1 || args[i].begin()->first.as<std::string>() != element_type_name(type)))
            fail(args[i], f,
                 fmt::format("{} is {}: write the value alone, or as {{{}: VALUE}}", p.name, p.type,
                             element_type_name(type)));
        if (!args[i].IsMap() && !args[i].IsScalar())
            fail(args[i], f, fmt::format("{} is {}: give a value", p.name, p.type));
        ArgSpec a = arg(typed, f, params, known);
        a.where = where(args[i]);
        // The kernel was compiled assuming the value a multiple of `divisibility`: another value
        // would run a kernel with wrong masks or misaligned vector accesses.
        if (p.divisibility > 1)
            for (const std::size_t point : checked_points_) {
                if (a.literal) break;
                const std::int64_t value = value_at(args[i], f, a.scalar, point);
                if (value % p.divisibility != 0)
                    fail(args[i], f,
                         fmt::format("{} is {} at {}, but the export assumes a multiple of {} (divisible_by_16): give "
                                     "this variant values that are, or export one without it",
                                     p.name, value, point_texts_[point], p.divisibility));
            }
        l.args.push_back(std::move(a));
    }
    // Triton's hidden parameters, after the user's: null when the kernel needs no scratch (as
    // Triton's launcher passes it), else zeroed scratch of `size` bytes per program and CTA.
    for (const auto& h : m.hidden) {
        ArgSpec a;
        a.where = where(node["triton"]);
        if (h.size == 0) {
            a.scalar_type = ElementType::u64;
            a.scalar = Expression::constant(0);
        } else {
            if (h.align > 256)
                fail(node["triton"], field + ".triton",
                     fmt::format("{} asks for {}-byte alignment; device allocations give 256", h.name, h.align));
            BufferSpec scratch;
            scratch.name = "triton_" + h.name;
            if (std::any_of(known.begin(), known.end(), [&](const BufferSpec& b) { return b.name == scratch.name; }))
                fail(node["triton"], field + ".triton",
                     fmt::format("the buffer name '{}' is the harness's for Triton's {} parameter: rename the "
                                 "suite's buffer",
                                 scratch.name, h.name));
            scratch.type = ElementType::u8;
            std::string programs = std::to_string(h.size); // per CTA: the grid counts CTAs
            for (const auto& g : l.grid) programs += fmt::format(" * ({})", g.text());
            scratch.count = Expression::parse(programs);
            scratch.init = InitKind::zeros;
            scratch.role = BufferRole::temp;
            scratch.where = a.where;
            check_count(node["triton"], field + ".triton", scratch);
            v.buffers.push_back(scratch);
            a.buffer = scratch.name;
        }
        l.args.push_back(std::move(a));
    }
}

} // namespace harness::suite
