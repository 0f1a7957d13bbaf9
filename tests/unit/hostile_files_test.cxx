// Files and what is written from them, as an attacker shapes them: outputs that are streams are
// written into, not replaced; a file-size limit is an error with a message, not a signal; baseline
// cells are quoted short and a byte-order mark is no part of the first line; a crafted history
// index is rebuilt, an edited run file left out, a killed record's leftovers removed; the summary
// and the history page turn text from results into text, never markup or a script link.

#include "harness/compare/baseline_file.hxx"
#include "harness/core/atomic_file.hxx"
#include "harness/core/error.hxx"
#include "harness/core/run_report.hxx"
#include "harness/core/text.hxx"
#include "harness/history/history_page.hxx"
#include "harness/history/history_store.hxx"
#include "harness/history/suite_history.hxx"
#include "harness/report/reporters.hxx"
#include "test_files.hxx"
#include "test_paths.hxx"

#include <csignal>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <string>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace hostile_files_test {

using namespace harness;
namespace fs = std::filesystem;

namespace {

const std::string baseline_head = "# harness baseline\n# schema_version: 1\n# suite: s\n# key: sm_90\n"
                                  "\"variant\",\"params\",\"metric\",\"value\",\"samples\",\"source\"\n";

history::RunRecord record_of(const std::string& commit, double registers)
{
    history::RunRecord r;
    r.suite = "memory";
    r.commit = commit;
    r.commit_date = "2026-11-28T00:00:00Z";
    r.timestamp = "2026-11-28T00:00:00Z";
    r.mode = RunMode::static_tier;
    r.arch = "sm_90";
    history::CaseFigures c;
    c.variant = "copy";
    c.params = "N=1024";
    c.arch = "sm_90";
    c.status = CaseStatus::passed;
    c.figures = {{"registers", registers}};
    r.cases.push_back(c);
    return r;
}

} // namespace

TEST(HostileFiles, AFifoOutputIsWrittenIntoNotReplaced)
{
    TempDir dir;
    const fs::path fifo = dir.path / "report.html";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    // Nothing reads it yet: an error, not a hang.
    EXPECT_THROW(write_file_atomically(fifo, "x"), Error);
    const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
    ASSERT_GE(reader, 0);
    write_file_atomically(fifo, "<html>the report</html>");
    char buffer[64] = {};
    const ssize_t got = ::read(reader, buffer, sizeof buffer);
    ::close(reader);
    EXPECT_EQ(std::string(buffer, got > 0 ? static_cast<std::size_t>(got) : 0), "<html>the report</html>");
    struct stat st {};
    ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
    EXPECT_TRUE(S_ISFIFO(st.st_mode)) << "the FIFO was replaced";
    // A character device is written into too, and stays one.
    write_file_atomically("/dev/null", "nothing");
    ASSERT_EQ(::lstat("/dev/null", &st), 0);
    EXPECT_TRUE(S_ISCHR(st.st_mode));
    // A folder is an error, not replaced.
    EXPECT_THROW(write_file_atomically(dir.path, "x"), Error);
}

TEST(HostileFiles, AFileSizeLimitIsAnErrorWithAMessageAndLeavesNoTemporaryFile)
{
    TempDir dir;
    const fs::path target = dir.path / "results.json";
    const pid_t child = fork();
    if (child == 0) {
        std::signal(SIGXFSZ, SIG_IGN); // as the tool's main() does
        rlimit limit{4096, 4096};
        setrlimit(RLIMIT_FSIZE, &limit);
        try {
            write_file_atomically(target, std::string(100000, 'x'));
            _exit(10);
        } catch (const Error& e) {
            const std::string what = e.what();
            _exit(e.kind() == ErrorKind::environment && what.find("results.json") != std::string::npos &&
                          what.find("File too large") != std::string::npos
                      ? 0
                      : 11);
        }
    }
    int status = 0;
    waitpid(child, &status, 0);
    ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
    EXPECT_EQ(WEXITSTATUS(status), 0);
    EXPECT_TRUE(snapshot(dir.path).empty()) << "a temporary file was left";
}

TEST(HostileFiles, BaselineCellsAreQuotedShortAndAByteOrderMarkIsNoPartOfTheFirstLine)
{
    const std::string row = "\"v\",\"N=1\",\"registers\",\"12\",\"" + std::string(10'000'000, 'A') + "\",\"static\"\n";
    try {
        compare::parse_baseline(baseline_head + row, "b.csv");
        ADD_FAILURE() << "a 10 MB cell read as samples";
    } catch (const Error& e) {
        const std::string what = e.what();
        EXPECT_LT(what.size(), 400u);
        EXPECT_NE(what.find("(10000000 bytes)"), std::string::npos) << what.substr(0, 300);
    }
    const auto with_mark = compare::parse_baseline(
        "\xEF\xBB\xBF" + baseline_head + "\"v\",\"N=1\",\"registers\",\"12\",\"\",\"static\"\n", "b.csv");
    ASSERT_EQ(with_mark.rows.size(), 1u);
    EXPECT_EQ(with_mark.meta("suite"), "s");
}

TEST(HostileFiles, ACraftedHistoryIndexIsRebuiltAndAnEditedRunFileLeftOut)
{
    TempDir dir;
    const history::HistoryStore store(dir.path / "store");
    store.add(record_of("0123456789ab", 12));
    store.refresh_index();
    // A metric id far beyond any the index assigns.
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open((dir.path / "store" / "index.sqlite").c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, "UPDATE metrics SET id = 400000000000 WHERE id = (SELECT min(id) FROM metrics)", nullptr,
                           nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(db);
    store.refresh_index();
    const auto runs = store.load_runs("memory");
    ASSERT_EQ(runs.size(), 1u);
    ASSERT_EQ(runs[0].cases.size(), 1u);
    EXPECT_EQ(runs[0].cases[0].figure("registers"), 12.0);

    // Figures edited in the index, its schema intact: the spot check against the run files rebuilds it.
    ASSERT_EQ(sqlite3_open((dir.path / "store" / "index.sqlite").c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, "UPDATE run_cases SET figures = zeroblob(length(figures))", nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(db);
    const auto checked = store.load_runs("memory");
    ASSERT_EQ(checked.size(), 1u);
    EXPECT_EQ(checked[0].cases[0].figure("registers"), 12.0);

    // A run file edited in the store: its name no longer matches its content.
    const auto added = store.add(record_of("0123456789ac", 28));
    std::string text = read_file(added.file);
    const auto at = text.find("28");
    ASSERT_NE(at, std::string::npos);
    text.replace(at, 2, "99");
    write_file(added.file, text);
    const auto refreshed = store.refresh_index();
    EXPECT_FALSE(refreshed.problems.empty());
    for (const auto& r : store.load_runs("memory")) EXPECT_NE(r.cases[0].figure("registers"), 99.0);

    // What a killed record left: a temporary file an hour old.
    const fs::path left = dir.path / "store" / "runs" / "memory" / ".incoming-killed";
    write_file(left, "half a run");
    fs::last_write_time(left, fs::file_time_type::clock::now() - std::chrono::hours(2));
    store.refresh_index();
    EXPECT_FALSE(fs::exists(left));
}

TEST(HostileReports, TheSummaryTurnsResultsTextIntoTextNeverMarkup)
{
    RunReport report = read_results_json(repo_root() / "tests/fixtures/gemm_static_results.json");
    report.device_name = "H100 <img src=https://attacker.example/p.png onerror=alert(1)> [details](https://x.example)";
    report.git_revision = "abc123<img src=x onerror=alert(2)>\u202e";
    const std::string md = report::markdown_summary(report);
    EXPECT_EQ(md.find("<img"), std::string::npos) << md.substr(0, 400);
    EXPECT_EQ(md.find("[details]("), std::string::npos) << md.substr(0, 400);
    EXPECT_EQ(md.find("\u202e"), std::string::npos);
    EXPECT_NE(md.find("&lt;img"), std::string::npos);
    EXPECT_EQ(escape_control_characters("a\u202eb"), "a\\u202eb");
}

TEST(HostileReports, TheHistoryPageLinksARecordedPathNeverAsAScheme)
{
    TempDir dir;
    const fs::path folder = dir.path / "javascript:alert(document.domain)";
    write_file(folder / "results.json", "{}");
    auto first = record_of("0123456789ab", 12), second = record_of("0123456789ac", 28),
         third = record_of("0123456789ad", 28);
    for (auto* r : {&first, &second, &third}) r->results_path = (folder / "results.json").string();
    third.commit_date = second.commit_date = "2026-11-29T00:00:00Z";
    const auto h = history::build_suite_history("memory", {first, second, third},
                                                history::CommitOrder(std::vector<std::string>{}));
    history::PageContext context;
    context.output = dir.path / "page.html";
    const std::string html = history::history_page(h, context);
    EXPECT_EQ(html.find("href=\"javascript:"), std::string::npos);
    EXPECT_NE(html.find("href=\"./javascript%3Aalert%28document.domain%29/results.json\""), std::string::npos)
        << html.substr(html.find("<table"), 2000);
}

} // namespace hostile_files_test
