// Which NVRTC options a suite may pass to the compiler (docs/suite-format.md, "options").

#include "harness/suite/suite.hxx"

#include <algorithm>
#include <array>
#include <fmt/format.h>
#include <regex>
#include <string_view>

namespace harness::suite {

std::string nvrtc_option_problem(const std::string& option)
{
    // NVRTC options that only change code generation or diagnostics. Left out on purpose: those
    // that write files (--time, --fdevice-time-trace), widen the include search (-I,
    // --include-path, --pre-include), or replace what the harness sets (architecture, output kind).
    static const std::vector<std::string> allowed = {"-G",
                                                     "--device-debug",
                                                     "-lineinfo",
                                                     "--generate-line-info",
                                                     "-dopt",
                                                     "--dopt",
                                                     "-maxrregcount",
                                                     "--maxrregcount",
                                                     "-ftz",
                                                     "--ftz",
                                                     "-prec-sqrt",
                                                     "--prec-sqrt",
                                                     "-prec-div",
                                                     "--prec-div",
                                                     "-fmad",
                                                     "--fmad",
                                                     "-use_fast_math",
                                                     "--use_fast_math",
                                                     "-extra-device-vectorization",
                                                     "--extra-device-vectorization",
                                                     "-modify-stack-limit",
                                                     "--modify-stack-limit",
                                                     "-std",
                                                     "--std",
                                                     "-builtin-move-forward",
                                                     "--builtin-move-forward",
                                                     "-builtin-initializer-list",
                                                     "--builtin-initializer-list",
                                                     "-w",
                                                     "--disable-warnings",
                                                     "-restrict",
                                                     "--restrict",
                                                     "-default-device",
                                                     "--device-as-default-execution-space",
                                                     "-device-int128",
                                                     "--device-int128",
                                                     "-opt-info",
                                                     "--optimization-info",
                                                     "-err-no",
                                                     "--display-error-number",
                                                     "-no-err-no",
                                                     "--no-display-error-number",
                                                     "-diag-error",
                                                     "--diag-error",
                                                     "-diag-suppress",
                                                     "--diag-suppress",
                                                     "-diag-warn",
                                                     "--diag-warn",
                                                     "-brief-diag",
                                                     "--brief-diagnostics",
                                                     "-jump-table-density",
                                                     "--jump-table-density",
                                                     "-Xptxas",
                                                     "--ptxas-options"};
    static const std::vector<std::string> ptxas_allowed = {"-v",
                                                           "--verbose",
                                                           "-O0",
                                                           "-O1",
                                                           "-O2",
                                                           "-O3",
                                                           "--maxrregcount",
                                                           "-maxrregcount",
                                                           "--warn-on-spills",
                                                           "-warn-spills",
                                                           "--warn-on-local-memory-usage",
                                                           "-warn-lmem-usage",
                                                           "--allow-expensive-optimizations",
                                                           "-allow-expensive-optimizations",
                                                           "-dlcm",
                                                           "--def-load-cache",
                                                           "-dscm",
                                                           "--def-store-cache",
                                                           "--disable-optimizer-constants",
                                                           "-disable-optimizer-consts",
                                                           "--sp-bounds-check",
                                                           "-sp-bounds-check",
                                                           "-lineinfo",
                                                           "--generate-line-info",
                                                           "--fmad",
                                                           "-fmad",
                                                           "--device-debug",
                                                           "-g"};
    if (option.size() > 1000) return "longer than 1000 characters";
    if (std::any_of(option.begin(), option.end(), [](char c) { return std::iscntrl(static_cast<unsigned char>(c)); }))
        return "an option must not contain control characters";
    static const std::regex define_option("-[DU][A-Za-z_][A-Za-z0-9_]*(=.*)?");
    if (option.starts_with("-D") || option.starts_with("-U")) {
        if (std::regex_match(option, define_option)) return "";
        return "a macro option is -DNAME, -DNAME=VALUE or -UNAME";
    }
    const std::string name = option.substr(0, option.find('='));
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end())
        return fmt::format("'{}' is not an NVRTC option a suite may set (options that write files, change the "
                           "include search or the architecture are refused; see docs/suite-format.md)",
                           name.substr(0, 80));
    if (name == "-Xptxas" || name == "--ptxas-options") {
        const std::size_t eq = option.find('=');
        if (eq == std::string::npos) return fmt::format("{} takes its ptxas options after '='", name);
        std::istringstream list(option.substr(eq + 1));
        for (std::string sub; std::getline(list, sub, ',');) {
            const std::string sub_name = sub.substr(0, sub.find('='));
            if (std::find(ptxas_allowed.begin(), ptxas_allowed.end(), sub_name) == ptxas_allowed.end())
                return fmt::format("ptxas option '{}' is not one a suite may set", sub_name.substr(0, 80));
        }
    }
    return "";
}

} // namespace harness::suite
