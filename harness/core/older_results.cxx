#include "harness/core/older_results.hxx"

#include "harness/core/rule_syntax.hxx"

#include <charconv>
#include <stdexcept>

namespace harness {

std::optional<ToleranceBand> tolerance_of_older_rule(std::string_view rule)
{
    const std::size_t note = rule.find(" (");
    try {
        return tolerance_band(parse_rule(rule.substr(0, note)));
    } catch (const std::invalid_argument&) {
        return std::nullopt;
    }
}

std::string not_compared_of_older_message(std::string_view message)
{
    const std::size_t colon = message.find(':');
    if (colon == std::string_view::npos) return std::string(message);
    std::string_view reason = message.substr(colon + 1);
    if (reason.starts_with(' ')) reason.remove_prefix(1);
    return std::string(reason);
}

std::map<std::string, std::int64_t> other_params_of_older_text(std::string_view others)
{
    std::map<std::string, std::int64_t> params;
    while (!others.empty()) {
        const std::size_t space = others.find(' ');
        const std::string_view word = others.substr(0, space);
        others = space == std::string_view::npos ? std::string_view{} : others.substr(space + 1);
        const std::size_t eq = word.find('=');
        if (eq == std::string_view::npos || eq == 0) continue;
        std::int64_t value = 0;
        const std::string_view digits = word.substr(eq + 1);
        const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
        if (error == std::errc() && end == digits.data() + digits.size() && !digits.empty())
            params.emplace(std::string(word.substr(0, eq)), value);
    }
    return params;
}

namespace {

void read_facts_of_older_verdict(MetricVerdict& v)
{
    v.tolerance = tolerance_of_older_rule(v.rule);
    if (v.verdict == Verdict::skipped) v.not_compared = not_compared_of_older_message(v.message);
}

} // namespace

void read_facts_of_older_results(std::vector<CaseResult>& results, std::vector<CliffMap>& maps)
{
    for (auto& r : results) {
        for (auto& v : r.verdicts) read_facts_of_older_verdict(v);
        // Labels were "<entry>#<n>" exactly where an entry was launched more than once.
        for (auto& l : r.launches) l.repeated = l.label.find('#') != std::string::npos;
    }
    for (auto& m : maps) {
        m.other_params = other_params_of_older_text(m.others);
        for (auto& v : m.verdicts) read_facts_of_older_verdict(v.judgement);
    }
}

} // namespace harness
