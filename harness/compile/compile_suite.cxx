#include "harness/compile/compile_suite.hxx"

#include <algorithm>

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
        try {
            out.modules.emplace(variant.name, compile(request_for(suite, variant, arch), cache));
        } catch (const std::exception& e) {
            out.errors.emplace(variant.name, e.what());
        }
    }
    return out;
}

} // namespace harness::compile
