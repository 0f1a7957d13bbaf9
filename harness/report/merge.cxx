#include "harness/report/merge.hxx"

#include "harness/core/error.hxx"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <set>
#include <tuple>

namespace harness::report {

RunReport merge_reports(const std::vector<RunReport>& reports, const std::vector<std::string>& names)
{
    if (reports.empty()) throw Error(ErrorKind::bad_input, "nothing to merge");
    const auto name = [&](std::size_t i) { return i < names.size() ? names[i] : fmt::format("report {}", i + 1); };
    RunReport merged = reports.front();
    merged.results.clear();
    std::map<std::tuple<std::string, std::string, std::string>, std::size_t> seen; // case -> report index
    std::set<std::string> archs;
    for (std::size_t i = 0; i < reports.size(); ++i) {
        const RunReport& r = reports[i];
        const auto refuse = [&](const char* what, const std::string& a, const std::string& b) {
            throw Error(ErrorKind::bad_input, fmt::format("cannot merge {} ({} '{}') with {} ({} '{}'): results of one "
                                                          "suite on one kind of machine only",
                                                          name(0), what, a, name(i), what, b));
        };
        if (r.suite != merged.suite) refuse("suite", merged.suite, r.suite);
        if (r.mode != merged.mode) refuse("mode", merged.mode, r.mode);
        if (r.device_name != merged.device_name) refuse("GPU", merged.device_name, r.device_name);
        if (r.mode != "static" && r.arch != merged.arch) refuse("architecture", merged.arch, r.arch);
        for (const auto& c : r.results) {
            const auto key = std::make_tuple(c.variant, c.params_text, c.arch);
            if (auto [it, fresh] = seen.emplace(key, i); !fresh)
                throw Error(ErrorKind::bad_input, fmt::format("{} {} ({}) is in both {} and {}", c.variant,
                                                              c.params_text, c.arch, name(it->second), name(i)));
            merged.results.push_back(c);
        }
        for (const auto& f : r.baseline_files)
            if (std::find(merged.baseline_files.begin(), merged.baseline_files.end(), f) == merged.baseline_files.end())
                merged.baseline_files.push_back(f);
        if (i > 0)
            for (const auto& n : r.notes)
                if (std::find(merged.notes.begin(), merged.notes.end(), n) == merged.notes.end())
                    merged.notes.push_back(n);
        merged.timestamp = std::min(merged.timestamp, r.timestamp);
        merged.profiled = merged.profiled && r.profiled;
        merged.fail_on_improvement = merged.fail_on_improvement || r.fail_on_improvement;
        if (r.mode == "static")
            for (std::size_t p = 0, q; p <= r.arch.size(); p = q + 1) {
                q = std::min(r.arch.find(',', p), r.arch.size());
                if (q > p) archs.insert(r.arch.substr(p, q - p));
            }
    }
    if (merged.mode == "static") merged.arch = fmt::format("{}", fmt::join(archs, ","));
    return merged;
}

} // namespace harness::report
