#include "harness/core/atomic_file.hxx"
#include "harness/report/run_report.hxx"

#include <fmt/format.h>
#include <fmt/ostream.h>

namespace harness::report {

namespace {

const ReporterInfo reporters[] = {
    {"console", "a table of every case on standard output",
     [](const RunReport& r, const std::filesystem::path&, std::ostream& console) { write_console_table(r, console); }},
    {"csv", "results.csv: one row per case and metric (long form)",
     [](const RunReport& r, const std::filesystem::path& dir, std::ostream& console) {
         write_file_atomically(dir / "results.csv", results_csv(r));
         fmt::print(console, "wrote {}\n", (dir / "results.csv").string());
     }},
    {"json", "results.json: the whole run, versioned; `harness report` and `harness merge` read it",
     [](const RunReport& r, const std::filesystem::path& dir, std::ostream& console) {
         write_file_atomically(dir / "results.json", results_json(r));
         fmt::print(console, "wrote {}\n", (dir / "results.json").string());
     }},
};

} // namespace

std::span<const ReporterInfo> reporter_table()
{
    return reporters;
}

} // namespace harness::report
