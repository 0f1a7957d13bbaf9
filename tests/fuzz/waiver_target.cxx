// The waiver reader (baselines/waivers.yaml).

#include "rules.hxx"
#include "targets.hxx"

#include "harness/compare/waivers.hxx"
#include "harness/core/error.hxx"

#include <yaml-cpp/yaml.h>

namespace harness::fuzz {

Reception run_waivers(const std::string& input, const InputContext&)
{
    try {
        (void)compare::parse_waivers(input, "baselines/waivers.yaml");
    } catch (const Error& e) {
        if (e.kind() != ErrorKind::bad_input) throw;
        return {false, e.what()};
    }
    require_yaml_text(input, YAML::Load(input));
    return {true, ""};
}

std::span<const std::string_view> waiver_tokens()
{
    using namespace std::string_view_literals;
    // clang-format off
    static constexpr std::string_view tokens[] = {
        "waivers:\n"sv,    "  - suite: "sv,   "    suite: "sv,
        "    variant: "sv, "    params: "sv,  "    metric: "sv,
        "    reason: "sv,  "    expires: "sv, "2025-02-29"sv,
        "2024-02-29"sv,    "9999-12-31"sv,    "0000-00-00"sv, "2025-13-01"sv,    "99999-01-01"sv,   "*"sv,
        "[*]"sv,           "[!a]"sv,          "\\"sv,
        "time_median"sv,   "registers"sv,     "\"N=4096 K=*\""sv, "gemm"sv,
    };
    // clang-format on
    return tokens;
}

} // namespace harness::fuzz
