// harness_fuzz: a deterministic, seeded-mutation fuzz driver of the harness's parsers
// (docs/fuzzing.md). It replays the committed corpus, then mutates it for a time budget, and
// reports every input that breaks a parser's contract. Exit 0: no finding; 1: findings; 2: usage.

#include "campaign.hxx"
#include "tests/unit/test_paths.hxx"

#include "harness/core/error.hxx"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <fmt/format.h>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace harness::fuzz;

namespace {

std::string read_file(const fs::path& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw harness::Error(harness::ErrorKind::bad_input, "harness_fuzz: cannot read " + path.string());
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

/// Every file under the target's corpus folder, in path order.
std::vector<Seed> load_seeds(const fs::path& folder)
{
    std::vector<Seed> seeds;
    if (!fs::is_directory(folder)) return seeds;
    for (const auto& entry : fs::recursive_directory_iterator(folder))
        if (entry.is_regular_file())
            seeds.push_back(
                {entry.path().lexically_relative(folder).generic_string(), read_file(entry.path())});
    std::sort(seeds.begin(), seeds.end(), [](const Seed& a, const Seed& b) { return a.name < b.name; });
    return seeds;
}

/// Runs the given files through one target in this process, saying what each did.
int replay(const Target& target, const std::vector<std::string>& files, const fs::path& scratch)
{
    int findings = 0;
    for (const auto& file : files) {
        const fs::path path = file;
        const std::string seed_name = target.keeps_seed_path
                                          ? (path.parent_path().filename() / path.filename()).string()
                                          : path.filename().string();
        const Outcome outcome = run_input(target, read_file(path), InputContext{seed_name, scratch});
        if (outcome.finding) {
            ++findings;
            fmt::print("{}: {}: {}\n{}\n", file, finding_kind_name(outcome.finding->kind),
                       outcome.finding->signature, outcome.finding->report);
        } else if (outcome.reception.accepted) {
            fmt::print("{}: accepted\n", file);
        } else {
            fmt::print("{}: refused: {}\n", file, outcome.reception.refusal);
        }
        std::fflush(stdout); // before the next input, which may crash
    }
    return findings == 0 ? 0 : 1;
}

void print_totals(const std::vector<std::pair<const Target*, CampaignTotals>>& results)
{
    fmt::print("\n{:<11} {:>8} {:>8} {:>8} {:>8} {:>8}", "target", "inputs", "exec/s", "refused", "accepted",
               "findings");
    for (std::size_t k = 0; k < finding_kind_count; ++k)
        fmt::print(" {:>9}", finding_kind_name(static_cast<FindingKind>(k)));
    fmt::print("\n");
    for (const auto& [target, t] : results) {
        std::uint64_t distinct = 0;
        for (auto d : t.distinct) distinct += d;
        fmt::print("{:<11} {:>8} {:>8.0f} {:>8} {:>8} {:>8}", target->name, t.inputs(),
                   t.seconds > 0 ? static_cast<double>(t.inputs()) / t.seconds : 0.0, t.refused, t.accepted,
                   distinct);
        for (std::size_t k = 0; k < finding_kind_count; ++k) fmt::print(" {:>9}", t.failing[k]);
        fmt::print("\n");
    }
    fmt::print("(findings: distinct signatures; the kind columns count failing inputs)\n");
}

/// `name value` lines for scripts: totals, then per target.
void write_summary(const fs::path& file, const std::vector<std::pair<const Target*, CampaignTotals>>& results)
{
    CampaignTotals all;
    std::string per_target;
    const auto lines = [](const std::string& prefix, const CampaignTotals& t) {
        std::uint64_t distinct = 0, failing = 0;
        for (std::size_t k = 0; k < finding_kind_count; ++k)
            distinct += t.distinct[k], failing += t.failing[k];
        std::string out =
            fmt::format("{}inputs {}\n{}findings {}\n{}failing_inputs {}\n{}seconds {:.1f}\n", prefix,
                        t.inputs(), prefix, distinct, prefix, failing, prefix, t.seconds);
        for (std::size_t k = 0; k < finding_kind_count; ++k)
            out += fmt::format("{}{} {}\n{}{}_distinct {}\n", prefix,
                               finding_kind_name(static_cast<FindingKind>(k)), t.failing[k], prefix,
                               finding_kind_name(static_cast<FindingKind>(k)), t.distinct[k]);
        return out;
    };
    for (const auto& [target, t] : results) {
        all.replayed += t.replayed;
        all.mutated += t.mutated;
        all.seconds += t.seconds;
        for (std::size_t k = 0; k < finding_kind_count; ++k) {
            all.failing[k] += t.failing[k];
            all.distinct[k] += t.distinct[k];
        }
        per_target += lines(std::string(target->name) + ".", t);
    }
    std::ofstream(file) << lines("", all) << per_target;
}

} // namespace

int main(int argc, char** argv)
{
    CLI::App app{"Fuzzes the harness's parsers: replays the corpus, then mutates it (docs/fuzzing.md). "
                 "With FILEs, runs just those through one --target and says what each did."};
    CampaignOptions o;
    std::string target_name = "all";
    fs::path corpus = repo_root() / "tests" / "fuzz" / "corpus";
    fs::path summary;
    std::vector<std::string> files;
    bool list = false;
    o.findings = "fuzz-findings";
    app.add_option("--target", target_name, "a target, or all")->capture_default_str();
    app.add_option("--seconds", o.seconds, "seconds of mutation per target, after the corpus replay")
        ->capture_default_str();
    app.add_option("--runs", o.runs, "at most this many mutated inputs per target");
    app.add_option("--seed", o.seed, "campaign seed: the same seed mutates the same way")
        ->capture_default_str();
    app.add_option("--corpus", corpus, "corpus folder, one subfolder per target")->capture_default_str();
    app.add_option("--findings", o.findings, "folder for inputs that broke a contract")
        ->capture_default_str();
    app.add_option("--max-len", o.max_len, "bytes of a mutated input at most")->capture_default_str();
    app.add_option("--timeout", o.timeout_s, "seconds one input may run")->capture_default_str();
    app.add_option("--memory-limit-mib", o.memory_limit_mib, "resident memory a worker may grow to")
        ->capture_default_str();
    app.add_option("--summary", summary, "also write the totals as `name value` lines to this file");
    app.add_flag("--list", list, "list the targets and exit");
    app.add_option("files", files, "inputs to replay through --target");
    CLI11_PARSE(app, argc, argv);

    if (list) {
        for (const auto& t : target_table()) fmt::print("{:<11} {}\n", t.name, t.description);
        return 0;
    }
    std::vector<const Target*> targets;
    if (target_name == "all") {
        for (const auto& t : target_table()) targets.push_back(&t);
    } else if (const Target* t = find_target(target_name)) {
        targets.push_back(t);
    } else {
        fmt::print(stderr, "harness_fuzz: unknown target '{}' (--list shows them)\n", target_name);
        return 2;
    }
    if (!files.empty() && targets.size() != 1) {
        fmt::print(stderr, "harness_fuzz: name one --target for the files to replay\n");
        return 2;
    }

    o.scratch = fs::temp_directory_path() / fmt::format("harness-fuzz-{}", getpid());
    fs::create_directories(o.scratch);
    int status = 0;
    try {
        if (!files.empty()) {
            prepare_process(o.memory_limit_mib);
            status = replay(*targets.front(), files, o.scratch);
        } else {
            fs::create_directories(o.findings);
            fmt::print(
                "harness_fuzz: seed {}, {} s of mutation per target after the corpus, inputs up to {} bytes, "
                "{} s and {} MiB per input; findings in {}\n",
                o.seed, o.seconds, o.max_len, o.timeout_s, o.memory_limit_mib, o.findings.string());
            std::vector<std::pair<const Target*, CampaignTotals>> results;
            for (const Target* t : targets) {
                const auto seeds = load_seeds(corpus / t->name);
                if (seeds.empty()) {
                    fmt::print(stderr, "harness_fuzz: no corpus in {}\n", (corpus / t->name).string());
                    status = 2;
                    break;
                }
                fmt::print("harness_fuzz: {}: {} corpus files\n", t->name, seeds.size());
                std::fflush(stdout);
                results.emplace_back(t, run_campaign(*t, seeds, o));
            }
            print_totals(results);
            if (!summary.empty()) write_summary(summary, results);
            for (const auto& [t, totals] : results)
                for (auto failing : totals.failing)
                    if (failing && status == 0) status = 1;
        }
    } catch (const std::exception& e) {
        fmt::print(stderr, "harness_fuzz: {}\n", e.what());
        status = 2;
    }
    std::error_code ignored;
    fs::remove_all(o.scratch, ignored);
    return status;
}
