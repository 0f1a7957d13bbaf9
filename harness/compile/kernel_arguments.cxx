#include "harness/compile/kernel_arguments.hxx"

#include "harness/core/error.hxx"
#include "harness/core/text.hxx"
#include "harness/suite/compile_params.hxx"

#include <algorithm>
#include <fmt/format.h>

namespace harness::compile {

namespace {

/// A device pointer, as the driver passes a buffer.
constexpr std::size_t pointer_bytes = 8;

/// "{f32: 0.75}", "buffer x": the argument as the suite writes it.
std::string argument_text(const suite::ArgSpec& arg)
{
    if (arg.is_buffer()) return "buffer " + arg.buffer;
    const std::string value = arg.literal ? fmt::format("{}", *arg.literal) : arg.scalar.text();
    return fmt::format("{{{}: {}}}", suite::element_type_name(arg.scalar_type), value);
}

/// "(2 bytes: f16, bf16, i16 or u16)": what a suite may pass to a parameter of `bytes` bytes.
std::string arguments_of_size(std::size_t bytes)
{
    std::vector<std::string> kinds;
    if (bytes == pointer_bytes) kinds.emplace_back("a buffer");
    for (const auto& info : suite::element_type_table())
        if (info.bytes == bytes) kinds.emplace_back(info.name);
    if (kinds.empty()) return fmt::format("(no buffer or scalar type has {} bytes)", bytes);
    const std::string last = kinds.back();
    kinds.pop_back();
    return fmt::format("({} bytes: {}{}{})", bytes, join(kinds), kinds.empty() ? "" : " or ", last);
}

std::string sizes_text(const std::vector<KernelParameter>& parameters)
{
    std::vector<std::string> sizes;
    for (const auto& p : parameters) sizes.push_back(std::to_string(p.size_bytes));
    if (sizes.size() < 2) return sizes.empty() ? "" : sizes.front();
    const std::string last = sizes.back();
    sizes.pop_back();
    return join(sizes) + " and " + last;
}

} // namespace

std::size_t argument_bytes(const suite::ArgSpec& arg)
{
    return arg.is_buffer() ? pointer_bytes : suite::element_size(arg.scalar_type);
}

std::vector<std::string> argument_mismatches(const suite::Suite& suite, const suite::VariantSpec& variant,
                                             std::size_t launch, const KernelResources& kernel,
                                             const std::string& entry)
{
    if (!kernel.parameters) return {};
    const std::vector<KernelParameter>& parameters = *kernel.parameters;
    const suite::LaunchSpec& l = variant.launches.at(launch);
    const std::string field = variant.launches.size() == 1
                                  ? fmt::format("variants.{}.args", variant.name)
                                  : fmt::format("variants.{}.launches[{}].args", variant.name, launch);
    const std::string file = suite.file.string();
    std::vector<std::string> problems;
    if (l.args.size() != parameters.size()) {
        const suite::SourceLocation at = l.args.empty() ? l.where : l.args.front().where;
        const std::string takes = parameters.empty()
                                      ? "takes no parameters"
                                      : fmt::format("takes {} parameter{} (of {} bytes)", parameters.size(),
                                                    parameters.size() == 1 ? "" : "s", sizes_text(parameters));
        problems.push_back(InputError(file, at.line, at.column, field,
                                      fmt::format("{} argument{}, but kernel {} {}", l.args.size(),
                                                  l.args.size() == 1 ? "" : "s", entry, takes))
                               .what());
        return problems;
    }
    for (std::size_t i = 0; i < l.args.size(); ++i) {
        const suite::ArgSpec& arg = l.args[i];
        const std::size_t given = argument_bytes(arg);
        const auto wanted = static_cast<std::size_t>(parameters[i].size_bytes);
        if (given == wanted) continue;
        problems.push_back(InputError(file, arg.where.line, arg.where.column, fmt::format("{}[{}]", field, i),
                                      fmt::format("{} is {} bytes{}, but parameter {} of kernel {} is {} bytes {}",
                                                  argument_text(arg), given, arg.is_buffer() ? " (a pointer)" : "", i,
                                                  entry, wanted, arguments_of_size(wanted)))
                               .what());
    }
    return problems;
}

void check_kernel_arguments(const suite::Suite& suite, const SuiteModules& compiled)
{
    std::vector<std::string> problems;
    for (const CompileUnit& unit : compile_units(suite)) {
        const auto module = compiled.modules.find(unit.key);
        if (module == compiled.modules.end()) continue;
        const suite::VariantSpec& variant = suite.variants[unit.variant];
        CubinInfo info;
        try {
            info = read_cubin_info(module->second.cubin);
        } catch (const std::exception&) {
            continue; // reported where the cubin's resources are read, or when the module is loaded
        }
        for (std::size_t launch = 0; launch < variant.launches.size(); ++launch) {
            const std::string entry = suite::resolve_entry(variant.launches[launch].entry, unit.point);
            const auto lowered = module->second.lowered_names.find(entry);
            const KernelResources* kernel =
                info.find(lowered == module->second.lowered_names.end() ? entry : lowered->second);
            if (!kernel) continue;
            for (auto& problem : argument_mismatches(suite, variant, launch, *kernel, entry))
                if (std::find(problems.begin(), problems.end(), problem) == problems.end())
                    problems.push_back(std::move(problem));
        }
    }
    if (!problems.empty()) throw Error(ErrorKind::bad_input, join(problems, "\n"));
}

} // namespace harness::compile
