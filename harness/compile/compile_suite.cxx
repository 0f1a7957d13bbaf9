#include "harness/compile/compile_suite.hxx"

#include "harness/core/child_process.hxx"
#include "harness/suite/compile_params.hxx"
#include "harness/suite/sweep.hxx"

#include <algorithm>
#include <atomic>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <thread>

namespace harness::compile {

const CompiledModule* SuiteModules::find(const suite::VariantSpec& variant, const suite::Bindings& point) const
{
    auto it = modules.find(suite::compile_key(variant, point));
    return it == modules.end() ? nullptr : &it->second;
}

const std::string* SuiteModules::error(const suite::VariantSpec& variant, const suite::Bindings& point) const
{
    auto it = errors.find(suite::compile_key(variant, point));
    return it == errors.end() ? nullptr : &it->second;
}

std::vector<CompileUnit> compile_units(const suite::Suite& suite)
{
    return compile_units(suite, suite::expand_cases(suite));
}

std::vector<CompileUnit> compile_units(const suite::Suite& suite, const std::vector<suite::Case>& cases)
{
    std::vector<CompileUnit> units;
    std::set<std::string> seen;
    for (const auto& c : cases) {
        const auto& variant = suite.variants[c.variant];
        if (variant.is_builtin()) continue; // a library call: nothing to compile
        std::string key = suite::compile_key(variant, c.params);
        if (seen.insert(key).second) units.push_back({std::move(key), c.variant, c.params});
    }
    return units;
}

CompileRequest request_for(const suite::Suite& suite, const suite::VariantSpec& variant, const suite::Bindings& point,
                           const std::string& arch)
{
    CompileRequest request;
    request.source = variant.source;
    request.module_file = variant.module;
    request.built_from = variant.built_from;
    request.allow_stale_module = variant.allow_stale;
    request.include_dirs = suite.include_dirs;
    request.defines = suite::resolve_defines(variant, point);
    request.options = variant.options;
    request.arch = arch;
    for (const auto& launch : variant.launches) {
        const std::string entry = suite::resolve_entry(launch.entry, point);
        if (std::find(request.entries.begin(), request.entries.end(), entry) == request.entries.end())
            request.entries.push_back(entry);
    }
    return request;
}

CompileRequest request_for(const suite::Suite& suite, const suite::VariantSpec& variant, const std::string& arch)
{
    return request_for(suite, variant, suite::Bindings{}, arch);
}

SuiteModules compile_suite(const suite::Suite& suite, const std::string& arch, const CompileCache* cache, unsigned jobs)
{
    return compile_suite(suite, suite::expand_cases(suite), arch, cache, jobs);
}

SuiteModules compile_suite(const suite::Suite& suite, const std::vector<suite::Case>& cases, const std::string& arch,
                           const CompileCache* cache, unsigned jobs)
{
    const auto units = compile_units(suite, cases);
    std::vector<std::optional<CompiledModule>> modules(units.size());
    std::vector<std::string> errors(units.size());
    std::atomic<std::size_t> next{0};
    auto work = [&] {
        for (std::size_t i = next++; i < units.size(); i = next++) {
            const auto& unit = units[i];
            try {
                modules[i] = compile(request_for(suite, suite.variants[unit.variant], unit.point, arch), cache);
            } catch (const std::exception& e) {
                errors[i] = e.what();
            }
        }
    };
    if (jobs == 0) jobs = std::max(1u, std::thread::hardware_concurrency());
    jobs = static_cast<unsigned>(std::min<std::size_t>(jobs, units.size()));
    {
        std::vector<std::jthread> workers;
        for (unsigned j = 1; j < jobs; ++j) workers.emplace_back(work);
        work();
    }
    SuiteModules out;
    for (std::size_t i = 0; i < units.size(); ++i) {
        if (modules[i])
            out.modules.emplace(units[i].key, std::move(*modules[i]));
        else
            out.errors.emplace(units[i].key, errors[i]);
    }
    return out;
}

SuiteModules compile_suite_in_child(const suite::Suite& suite, const std::vector<suite::Case>& cases,
                                    const std::string& arch, const CompileCache* cache)
{
    const std::string packed = run_in_child("compiling " + suite.name, [&] {
        const SuiteModules compiled = compile_suite(suite, cases, arch, cache);
        nlohmann::json j = {{"errors", compiled.errors}, {"modules", nlohmann::json::object()}};
        for (const auto& [name, m] : compiled.modules)
            j["modules"][name] = {
                {"cubin", nlohmann::json::binary_t(std::vector<std::uint8_t>(m.cubin.begin(), m.cubin.end()))},
                {"log", m.log},
                {"lowered_names", m.lowered_names},
                {"cache_key", m.cache_key},
                {"from_cache", m.from_cache}};
        const auto bytes = nlohmann::json::to_msgpack(j);
        return std::string(bytes.begin(), bytes.end());
    });
    const auto j = nlohmann::json::from_msgpack(packed);
    SuiteModules out;
    out.errors = j.at("errors").get<std::map<std::string, std::string>>();
    for (const auto& [name, m] : j.at("modules").items()) {
        CompiledModule module;
        const auto& cubin = m.at("cubin").get_binary();
        module.cubin.assign(cubin.begin(), cubin.end());
        module.log = m.at("log");
        module.lowered_names = m.at("lowered_names").get<std::map<std::string, std::string>>();
        module.cache_key = m.at("cache_key");
        module.from_cache = m.at("from_cache");
        out.modules.emplace(name, std::move(module));
    }
    return out;
}

} // namespace harness::compile
