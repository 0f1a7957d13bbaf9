// A suite's `source:` variants: a .cu file of the project compiled by NVRTC, with the suite's
// defines and options, launched as the variant's launches say.

#include "harness/core/input_files.hxx"
#include "harness/suite/compile_params.hxx"
#include "harness/suite/loader.hxx"

#include <algorithm>
#include <cctype>
#include <fmt/format.h>
#include <regex>

namespace harness::suite {

VariantSpec Loader::source_variant(VariantSpec v, const YAML::Node& node, const std::string& field,
                                   const std::set<std::string, std::less<>>& params,
                                   const std::vector<BufferSpec>& suite_buffers) const
{
    check_keys(node, field, kernel_variant_keys(), {});
    if (!node["source"]) fail(node, prefixed(field, "source"), "missing required key (or give 'module')");
    for (const char* key : {"built_from", "stale"})
        if (node[key]) fail(node[key], field + "." + key, fmt::format("'{}' applies to a 'module' variant only", key));
    const std::string source = scalar(node["source"], field + ".source");
    v.source = resolve(node["source"], field + ".source", source);
    check_inside_project(node["source"], field + ".source", v.source);
    if (!fs::is_regular_file(v.source))
        fail(node["source"], field + ".source", fmt::format("no such file: {}", v.source.string()));
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
    return kernel_launches(std::move(v), node, field, params, suite_buffers);
}

} // namespace harness::suite
