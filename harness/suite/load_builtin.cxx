// A suite's `builtin:` variants: a library routine (builtin_signatures.hxx) called in place of a
// kernel, with the suite's buffers and scalars as its arguments.

#include "harness/core/text.hxx"
#include "harness/suite/builtin_signatures.hxx"
#include "harness/suite/loader.hxx"

#include <algorithm>
#include <fmt/format.h>

namespace harness::suite {

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

} // namespace harness::suite
