// harness_fuzz: a deterministic, seeded-mutation fuzz driver of the harness's parsers
// (docs/fuzzing.md). It replays the committed corpus, then mutates it for a time budget, and
// reports every input that breaks a parser's contract. Exit 0: no finding; 1: findings; 2: usage.

#include "campaign.hxx"
#include "tests/unit/test_paths.hxx"

#include "harness/core/error.hxx"

#include <algorithm>
#include <fmt/format.h>
#include <fstream>
#include <optional>
#include <sstream>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace harness::fuzz;

namespace {

std::string read_file(const fs::path& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in) throw harness::Error(harness::ErrorKind::bad_input, "harness_fuzz: cannot read " + path.string());
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
            seeds.push_back({entry.path().lexically_relative(folder).generic_string(), read_file(entry.path())});
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
            fmt::print("{}: {}: {}\n{}\n", file, finding_kind_name(outcome.finding->kind), outcome.finding->signature,
                       outcome.finding->report);
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
    fmt::print("\n{:<12} {:>8} {:>8} {:>8} {:>8} {:>8}", "target", "inputs", "exec/s", "refused", "accepted",
               "findings");
    for (std::size_t k = 0; k < finding_kind_count; ++k)
        fmt::print(" {:>9}", finding_kind_name(static_cast<FindingKind>(k)));
    fmt::print("\n");
    for (const auto& [target, t] : results) {
        std::uint64_t distinct = 0;
        for (auto d : t.distinct) distinct += d;
        fmt::print("{:<12} {:>8} {:>8.0f} {:>8} {:>8} {:>8}", target->name, t.inputs(),
                   t.seconds > 0 ? static_cast<double>(t.inputs()) / t.seconds : 0.0, t.refused, t.accepted, distinct);
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
        for (std::size_t k = 0; k < finding_kind_count; ++k) distinct += t.distinct[k], failing += t.failing[k];
        std::string out = fmt::format("{}inputs {}\n{}findings {}\n{}failing_inputs {}\n{}seconds {:.1f}\n", prefix,
                                      t.inputs(), prefix, distinct, prefix, failing, prefix, t.seconds);
        for (std::size_t k = 0; k < finding_kind_count; ++k)
            out += fmt::format("{}{} {}\n{}{}_distinct {}\n", prefix, finding_kind_name(static_cast<FindingKind>(k)),
                               t.failing[k], prefix, finding_kind_name(static_cast<FindingKind>(k)), t.distinct[k]);
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

/// Everything the command line sets.
struct Settings {
    CampaignOptions campaign;
    std::string target = "all";
    fs::path corpus;
    fs::path summary;
    std::vector<std::string> files;
    bool list = false;
};

/// One option: its name, the value it takes ("" for a flag), what --help says, and what it sets.
struct OptionRow {
    const char* name;
    const char* value;
    const char* help;
    void (*set)(Settings&, const std::string&);
};

// clang-format off
constexpr OptionRow option_table[] = {
    {"--target", "NAME", "a target, or all (default all)",
     [](Settings& s, const std::string& v) { s.target = v; }},
    {"--seconds", "S", "seconds of mutation per target, after the corpus replay (default 10)",
     [](Settings& s, const std::string& v) { s.campaign.seconds = std::stod(v); }},
    {"--runs", "N", "at most N mutated inputs per target",
     [](Settings& s, const std::string& v) { s.campaign.runs = std::stoull(v); }},
    {"--seed", "N", "campaign seed: the same seed mutates the same way (default 1)",
     [](Settings& s, const std::string& v) { s.campaign.seed = std::stoull(v); }},
    {"--corpus", "DIR", "corpus folder, one subfolder per target (default tests/fuzz/corpus)",
     [](Settings& s, const std::string& v) { s.corpus = v; }},
    {"--findings", "DIR", "folder for inputs that broke a contract (default fuzz-findings)",
     [](Settings& s, const std::string& v) { s.campaign.findings = v; }},
    {"--max-len", "BYTES", "size of a mutated input at most (default 262144)",
     [](Settings& s, const std::string& v) { s.campaign.max_len = std::stoull(v); }},
    {"--timeout", "S", "seconds one input may run (default 2)",
     [](Settings& s, const std::string& v) { s.campaign.timeout_s = std::stod(v); }},
    {"--memory-limit-mib", "MIB", "resident memory a worker may grow to (default 2048)",
     [](Settings& s, const std::string& v) { s.campaign.memory_limit_mib = std::stoull(v); }},
    {"--summary", "FILE", "also write the totals as `name value` lines to FILE",
     [](Settings& s, const std::string& v) { s.summary = v; }},
    {"--list", "", "list the targets and exit",
     [](Settings& s, const std::string&) { s.list = true; }},
};
// clang-format on

void print_usage()
{
    fmt::print("usage: harness_fuzz [OPTION...] [FILE...]\n"
               "Fuzzes the harness's parsers: replays the corpus, then mutates it (docs/fuzzing.md).\n"
               "With FILEs, runs just those through one --target and says what each did.\n\n");
    for (const auto& o : option_table) fmt::print("  {:<24} {}\n", fmt::format("{} {}", o.name, o.value), o.help);
}

/// Fills `settings`; returns an exit status when the program should stop (--help, a usage error).
std::optional<int> parse_command_line(const std::vector<std::string>& args, Settings& settings)
{
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& arg = args[i];
        if (arg == "-h" || arg == "--help") {
            print_usage();
            return 0;
        }
        if (!arg.starts_with("--")) {
            settings.files.push_back(arg);
            continue;
        }
        const std::string name = arg.substr(0, arg.find('='));
        const auto row = std::find_if(std::begin(option_table), std::end(option_table),
                                      [&](const OptionRow& o) { return name == o.name; });
        if (row == std::end(option_table)) {
            fmt::print(stderr, "harness_fuzz: unknown option '{}' (--help lists them)\n", arg);
            return 2;
        }
        std::string value;
        if (*row->value && name.size() < arg.size())
            value = arg.substr(name.size() + 1);
        else if (*row->value && i + 1 < args.size())
            value = args[++i];
        else if (*row->value) {
            fmt::print(stderr, "harness_fuzz: {} needs a value ({})\n", name, row->value);
            return 2;
        }
        try {
            row->set(settings, value);
        } catch (const std::exception&) {
            fmt::print(stderr, "harness_fuzz: {} {}: not a number\n", name, value);
            return 2;
        }
    }
    return std::nullopt;
}

} // namespace

int main(int argc, char** argv)
{
    Settings settings;
    settings.corpus = repo_root() / "tests" / "fuzz" / "corpus";
    settings.campaign.findings = "fuzz-findings";
    if (const auto status = parse_command_line({argv + 1, argv + argc}, settings)) return *status;
    CampaignOptions& o = settings.campaign;

    if (settings.list) {
        for (const auto& t : target_table()) fmt::print("{:<12} {}\n", t.name, t.description);
        return 0;
    }
    std::vector<const Target*> targets;
    if (settings.target == "all") {
        for (const auto& t : target_table()) targets.push_back(&t);
    } else if (const Target* t = find_target(settings.target)) {
        targets.push_back(t);
    } else {
        fmt::print(stderr, "harness_fuzz: unknown target '{}' (--list shows them)\n", settings.target);
        return 2;
    }
    if (!settings.files.empty() && targets.size() != 1) {
        fmt::print(stderr, "harness_fuzz: name one --target for the files to replay\n");
        return 2;
    }

    o.scratch = fs::temp_directory_path() / fmt::format("harness-fuzz-{}", getpid());
    fs::create_directories(o.scratch);
    int status = 0;
    try {
        if (!settings.files.empty()) {
            prepare_process(o.memory_limit_mib);
            status = replay(*targets.front(), settings.files, o.scratch);
        } else {
            fs::create_directories(o.findings);
            fmt::print("harness_fuzz: seed {}, {} s of mutation per target after the corpus, inputs up to {} bytes, "
                       "{} s and {} MiB per input; findings in {}\n",
                       o.seed, o.seconds, o.max_len, o.timeout_s, o.memory_limit_mib, o.findings.string());
            std::vector<std::pair<const Target*, CampaignTotals>> results;
            for (const Target* t : targets) {
                const auto seeds = load_seeds(settings.corpus / t->name);
                if (seeds.empty()) {
                    fmt::print(stderr, "harness_fuzz: no corpus in {}\n", (settings.corpus / t->name).string());
                    status = 2;
                    break;
                }
                fmt::print("harness_fuzz: {}: {} corpus files\n", t->name, seeds.size());
                std::fflush(stdout);
                results.emplace_back(t, run_campaign(*t, seeds, o));
            }
            print_totals(results);
            if (!settings.summary.empty()) write_summary(settings.summary, results);
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
