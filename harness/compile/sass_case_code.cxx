#include "harness/compile/sass_case_code.hxx"

#include "harness/core/text.hxx"
#include "harness/suite/compile_params.hxx"
#include "harness/suite/element_type.hxx"
#include "harness/suite/sweep.hxx"

#include <algorithm>
#include <fmt/format.h>

namespace harness::compile {

namespace {

std::string value_text(const suite::Expression& e, const suite::Bindings& params)
{
    try {
        return std::to_string(e.evaluate(params));
    } catch (const std::exception&) {
        return "(" + e.text() + ")";
    }
}

std::string dims_text(const std::vector<suite::Expression>& dims, const suite::Bindings& params)
{
    std::vector<std::string> parts;
    for (const auto& d : dims) parts.push_back(value_text(d, params));
    return join(parts, "x");
}

std::string buffer_text(const suite::BufferSpec& b, const suite::Bindings& params)
{
    return fmt::format("buffer {} {} count={} init={} seed={} min={} max={} index={} round_to={} role={}", b.name,
                       suite::element_type_name(b.type), value_text(b.count, params), static_cast<int>(b.init), b.seed,
                       b.min_expression ? value_text(*b.min_expression, params) : fmt::format("{}", b.min),
                       b.max_expression ? value_text(*b.max_expression, params) : fmt::format("{}", b.max),
                       b.index ? b.index->text() : "-", b.round_to ? suite::element_type_name(*b.round_to) : "-",
                       static_cast<int>(b.role));
}

} // namespace

std::string case_inputs_text(const suite::Suite& suite, const suite::VariantSpec& variant,
                             const suite::Bindings& params, const std::string& arch)
{
    std::string out = fmt::format("arch {}\npoint {}\n", arch, suite::params_text(suite, params));
    for (const auto& launch : variant.launches) {
        out += fmt::format("launch {} grid={} block={} shared={} cluster={}x{}x{}\n",
                           suite::resolve_entry(launch.entry, params), dims_text(launch.grid, params),
                           dims_text(launch.block, params), value_text(launch.shared_bytes, params), launch.cluster[0],
                           launch.cluster[1], launch.cluster[2]);
        for (const auto& a : launch.args)
            out += a.is_buffer()
                       ? fmt::format("  arg buffer {}\n", a.buffer)
                       : fmt::format("  arg {} {}\n", suite::element_type_name(a.scalar_type),
                                     a.literal ? fmt::format("{}", *a.literal) : value_text(a.scalar, params));
    }
    for (const auto& b : suite.buffers) out += buffer_text(b, params) + "\n";
    for (const auto& b : variant.buffers) out += fmt::format("variant {}\n", buffer_text(b, params));
    return out;
}

SassCaseCode add_case_code(SassCodeFile& file, const suite::Suite& suite, const suite::VariantSpec& variant,
                           const suite::Bindings& params, const std::string& arch, const CompiledModule& module,
                           const ModuleSass& sass)
{
    if (!sass.not_measured.empty() || !sass.error.empty()) return {};
    SassCaseCode out;
    std::vector<std::string> parts = {case_inputs_text(suite, variant, params, arch)};
    std::map<std::string, std::string> names; // a file as the line information names it -> as reports do
    for (const auto& launch : variant.launches) {
        const auto lowered = module.lowered_names.find(suite::resolve_entry(launch.entry, params));
        if (lowered == module.lowered_names.end()) return {};
        const auto k = std::find_if(sass.code.begin(), sass.code.end(),
                                    [&](const SassKernelCode& c) { return c.kernel == lowered->second; });
        if (k == sass.code.end()) return {};
        SassKernelCode named{kernel_name(k->kernel), {}};
        named.instructions.reserve(k->instructions.size());
        for (const auto& i : k->instructions) {
            auto [it, added] = names.try_emplace(i.file);
            if (added) it->second = sass_source_name(suite, variant, i.file);
            named.instructions.push_back({it->second, i.line, i.text});
        }
        // The hash takes the code without its lines: lines moved by an edit above the kernel change
        // no figure.
        std::string text = named.kernel;
        for (const auto& i : named.instructions) text += "\n" + i.text;
        parts.push_back(std::move(text));
        out.kernels.push_back(file.add_kernel(std::move(named)));
    }
    out.hash = sass_hash(parts);
    return out;
}

} // namespace harness::compile
