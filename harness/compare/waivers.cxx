#include "harness/compare/waivers.hxx"

#include "harness/core/cliff_map.hxx"
#include "harness/core/error.hxx"
#include "harness/core/input_files.hxx"
#include "harness/core/metrics.hxx"
#include "harness/core/text.hxx"

#include <ctime>
#include <fmt/format.h>
#include <fnmatch.h>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <yaml-cpp/yaml.h>

namespace harness::compare {

namespace {

bool glob(const std::string& pattern, const std::string& text)
{
    return fnmatch(pattern.c_str(), text.c_str(), 0) == 0;
}

std::vector<std::string> words(const std::string& text)
{
    std::istringstream in(text);
    std::vector<std::string> out;
    for (std::string w; in >> w;) out.push_back(w);
    return out;
}

[[noreturn]] void fail(const std::string& file, const YAML::Node& node, const std::string& field,
                       const std::string& message)
{
    const auto mark = node.Mark();
    if (mark.is_null()) throw InputError(file, 0, 0, field, message);
    throw InputError(file, mark.line + 1, mark.column + 1, field, message);
}

/// A real calendar date written YYYY-MM-DD.
bool is_date(const std::string& text)
{
    static const std::regex form("[0-9]{4}-[0-9]{2}-[0-9]{2}");
    if (!std::regex_match(text, form)) return false;
    std::tm tm{};
    tm.tm_year = std::stoi(text.substr(0, 4)) - 1900;
    tm.tm_mon = std::stoi(text.substr(5, 2)) - 1;
    tm.tm_mday = std::stoi(text.substr(8, 2));
    tm.tm_hour = 12;
    std::tm normalised = tm;
    if (timegm(&normalised) == -1) return false;
    return normalised.tm_mday == tm.tm_mday && normalised.tm_mon == tm.tm_mon;
}

} // namespace

std::vector<Waiver> parse_waivers(const std::string& text, const std::string& file)
{
    if (const std::size_t bad = invalid_utf8_offset(text); bad != std::string::npos) {
        const auto [line, column] = line_and_column(text, bad);
        throw InputError(file, line, column, "", "the file is not UTF-8 text");
    }
    YAML::Node root;
    try {
        root = YAML::Load(text);
    } catch (const YAML::Exception& e) {
        throw InputError(file, e.mark.line + 1, e.mark.column + 1, "", "YAML syntax error: " + e.msg);
    }
    std::vector<Waiver> out;
    if (root.IsNull()) return out;
    if (!root.IsMap() || !root["waivers"]) fail(file, root, "", "a waiver file is a map with a 'waivers' list");
    for (const auto& kv : root)
        if (kv.first.Scalar() != "waivers")
            fail(file, kv.first, kv.first.Scalar(), "unknown key" + did_you_mean(kv.first.Scalar(), {"waivers"}));
    if (root.size() != 1) fail(file, root, "waivers", "given twice (YAML would keep only the first)");
    const YAML::Node list = root["waivers"];
    if (list.IsNull()) return out;
    if (!list.IsSequence()) fail(file, list, "waivers", "expected a list of waivers");
    static const std::vector<std::string> keys = {"suite", "variant", "params", "metric", "reason", "expires"};
    for (std::size_t i = 0; i < list.size(); ++i) {
        const YAML::Node w = list[i];
        const std::string field = fmt::format("waivers[{}]", i);
        if (!w.IsMap()) fail(file, w, field, "expected a map with suite, variant, params, metric, reason, expires");
        std::set<std::string> seen;
        for (const auto& kv : w) {
            const std::string key = kv.first.Scalar();
            if (!seen.insert(key).second)
                fail(file, kv.first, field + "." + key, "given twice (YAML would keep only the first)");
            if (std::find(keys.begin(), keys.end(), key) == keys.end())
                fail(file, kv.first, field + "." + key,
                     "unknown key" + did_you_mean(key, keys) + "; allowed: " + join(keys));
            if (!kv.second.IsScalar()) fail(file, kv.second, field + "." + key, "expected a single value");
        }
        for (const char* key : {"suite", "metric", "reason", "expires"})
            if (!w[key]) fail(file, w, field + "." + key, "missing required key");
        Waiver waiver;
        waiver.suite = w["suite"].Scalar();
        if (w["variant"]) waiver.variant = w["variant"].Scalar();
        if (w["params"]) waiver.params = w["params"].Scalar();
        waiver.metric = w["metric"].Scalar();
        waiver.reason = w["reason"].Scalar();
        waiver.expires = w["expires"].Scalar();
        // A cliff along a scanned axis is waived by its verdict's name, "cliff@N" (docs/cliffs.md).
        if (waiver.metric != "*" && !find_metric(waiver.metric) && !is_cliff_verdict_metric(waiver.metric)) {
            std::vector<std::string> known;
            for (const auto& m : metric_table()) known.emplace_back(m.name);
            fail(file, w["metric"], field + ".metric",
                 fmt::format("unknown metric '{}'{}", waiver.metric.substr(0, max_name_length),
                             did_you_mean(waiver.metric, known)));
        }
        if (waiver.reason.empty()) fail(file, w["reason"], field + ".reason", "say why the regression is accepted");
        if (!is_date(waiver.expires))
            fail(file, w["expires"], field + ".expires", fmt::format("'{}' is not a date YYYY-MM-DD", waiver.expires));
        waiver.where = fmt::format("{}:{}", file, w.Mark().line + 1);
        out.push_back(std::move(waiver));
    }
    return out;
}

std::vector<Waiver> read_waivers(const std::filesystem::path& file, bool required)
{
    if (!required && !std::filesystem::exists(file)) return {};
    if (!std::filesystem::is_regular_file(file))
        throw InputError(file.string(), 0, 0, "--waivers",
                         std::filesystem::exists(file) ? "not a regular file" : "no such file");
    return parse_waivers(read_input_file(file, 1024 * 1024, "waiver file"), file.string());
}

bool waiver_matches(const Waiver& waiver, const CaseResult& result, const std::string& metric)
{
    if (!glob(waiver.suite, result.suite) || !glob(waiver.variant, result.variant)) return false;
    if (waiver.metric != "*" && waiver.metric != metric) return false;
    const auto case_words = words(result.params_text);
    for (const auto& pattern : words(waiver.params)) {
        if (pattern == "*") continue;
        if (std::none_of(case_words.begin(), case_words.end(), [&](const std::string& w) { return glob(pattern, w); }))
            return false;
    }
    return true;
}

void apply_waivers(CaseResult& result, const std::vector<Waiver>& waivers, const std::string& today)
{
    for (auto& v : result.verdicts) {
        if (v.verdict != Verdict::regressed && v.verdict != Verdict::expect_failed) continue;
        const Waiver* expired = nullptr;
        for (const auto& w : waivers) {
            if (!waiver_matches(w, result, v.metric)) continue;
            if (today <= w.expires) {
                v.verdict = Verdict::waived;
                v.message += fmt::format(" [waived until {}: {} ({})]", w.expires, w.reason, w.where);
                expired = nullptr;
                break;
            }
            expired = &w;
        }
        if (expired)
            v.message += fmt::format(" [the waiver at {} expired on {}: fix the regression, or renew the waiver]",
                                     expired->where, expired->expires);
    }
}

std::string today_utc()
{
    return utc_now("%Y-%m-%d");
}

} // namespace harness::compare
