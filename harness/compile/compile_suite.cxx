#include "harness/compile/compile_suite.hxx"

#include "harness/core/child_process.hxx"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace harness::compile {

CompileRequest request_for(const suite::Suite& suite, const suite::VariantSpec& variant, const std::string& arch)
{
    CompileRequest request;
    request.source = variant.source;
    request.include_dirs = suite.include_dirs;
    request.defines = variant.defines;
    request.options = variant.options;
    request.arch = arch;
    for (const auto& launch : variant.launches)
        if (std::find(request.entries.begin(), request.entries.end(), launch.entry) == request.entries.end())
            request.entries.push_back(launch.entry);
    return request;
}

SuiteModules compile_suite(const suite::Suite& suite, const std::string& arch, const CompileCache* cache)
{
    SuiteModules out;
    for (const auto& variant : suite.variants) {
        if (variant.is_builtin()) continue; // a library call: nothing to compile
        try {
            out.modules.emplace(variant.name, compile(request_for(suite, variant, arch), cache));
        } catch (const std::exception& e) {
            out.errors.emplace(variant.name, e.what());
        }
    }
    return out;
}

SuiteModules compile_suite_in_child(const suite::Suite& suite, const std::string& arch, const CompileCache* cache)
{
    const std::string packed = run_in_child("compiling " + suite.name, [&] {
        const SuiteModules compiled = compile_suite(suite, arch, cache);
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
