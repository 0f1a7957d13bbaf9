#include "harness/history/history_store.hxx"

#include "harness/core/atomic_file.hxx"
#include "harness/core/error.hxx"
#include "harness/core/file_descriptor.hxx"
#include "harness/core/input_files.hxx"
#include "harness/core/parallel.hxx"
#include "harness/core/sha256.hxx"

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <sqlite3.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace harness::history {

namespace fs = std::filesystem;

namespace {

constexpr const char* run_extension = ".json";
constexpr const char* temp_prefix = ".incoming-";
/// Runs of a suite read from their files on every load, to check the index against them.
constexpr std::size_t spot_checked_runs = 8;
/// How far the largest metric id may lie beyond the number of metrics: ids are assigned one by one.
constexpr std::int64_t max_metric_id_gap = 1024;
/// More samples than any run takes: a time summary in the index claiming more is not one.
constexpr double max_time_samples = 1e12;

Error store_error(const std::string& what, const fs::path& path, int error_number)
{
    return Error(ErrorKind::environment,
                 fmt::format("history store: cannot {} {}: {}", what, path.string(), std::strerror(error_number)));
}

using Fd = FileDescriptor;

void write_all(int fd, std::string_view bytes, const fs::path& path)
{
    while (!bytes.empty()) {
        const ssize_t n = ::write(fd, bytes.data(), bytes.size());
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) throw store_error("write", path, errno);
        bytes.remove_prefix(static_cast<std::size_t>(n));
    }
}

/// Creates `dir` (and the store's folders above it) as real folders; a link there is refused.
void make_folder(const fs::path& top, const fs::path& dir)
{
    refuse_linked_folders(top, dir);
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) throw store_error("create", dir, ec.value());
    refuse_linked_folders(top, dir);
}

/// A run file's bytes, read without following a link, at most max_run_file_bytes.
std::string read_run_file(const fs::path& path)
{
    Fd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
    if (fd.get() < 0) throw Error(ErrorKind::bad_input, fmt::format("{}: {}", path.string(), std::strerror(errno)));
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode))
        throw Error(ErrorKind::bad_input, fmt::format("{}: not a regular file", path.string()));
    if (static_cast<std::size_t>(st.st_size) > max_run_file_bytes)
        throw Error(ErrorKind::bad_input, fmt::format("{}: larger than {} bytes", path.string(), max_run_file_bytes));
    std::string text(static_cast<std::size_t>(st.st_size), '\0');
    std::size_t got = 0;
    while (got < text.size()) {
        const ssize_t n = ::read(fd.get(), text.data() + got, text.size() - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        got += static_cast<std::size_t>(n);
    }
    text.resize(got);
    return text;
}

// ---- SQLite, behind two small owners ----

class Statement {
public:
    Statement(sqlite3* db, const char* sql, const fs::path& file) : db_(db), file_(file)
    {
        if (sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr) != SQLITE_OK) fail("prepare");
    }
    ~Statement() { sqlite3_finalize(stmt_); }
    Statement(const Statement&) = delete;
    Statement& operator=(const Statement&) = delete;

    Statement& bind(int i, const std::string& text)
    {
        check(sqlite3_bind_text(stmt_, i, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT), "bind");
        return *this;
    }
    Statement& bind(int i, std::int64_t value)
    {
        check(sqlite3_bind_int64(stmt_, i, value), "bind");
        return *this;
    }
    Statement& bind_blob(int i, const std::string& bytes)
    {
        check(sqlite3_bind_blob(stmt_, i, bytes.data(), static_cast<int>(bytes.size()), SQLITE_TRANSIENT), "bind");
        return *this;
    }
    /// True while a row is there to read.
    bool step()
    {
        const int rc = sqlite3_step(stmt_);
        if (rc == SQLITE_ROW) return true;
        if (rc != SQLITE_DONE) fail("step");
        return false;
    }
    void run()
    {
        while (step()) {
        }
        sqlite3_reset(stmt_);
        sqlite3_clear_bindings(stmt_);
    }
    std::int64_t integer(int col) const { return sqlite3_column_int64(stmt_, col); }
    std::string text(int col) const
    {
        const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, col));
        return p ? std::string(p, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, col))) : std::string();
    }
    std::string_view blob(int col) const
    {
        const auto* p = static_cast<const char*>(sqlite3_column_blob(stmt_, col));
        return p ? std::string_view(p, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, col))) : std::string_view();
    }

private:
    void check(int rc, const char* what)
    {
        if (rc != SQLITE_OK) fail(what);
    }
    [[noreturn]] void fail(const char* what)
    {
        throw Error(ErrorKind::environment,
                    fmt::format("history index {}: {}: {}", file_.string(), what, sqlite3_errmsg(db_)));
    }
    sqlite3* db_;
    sqlite3_stmt* stmt_ = nullptr;
    const fs::path& file_;
};

/// An exclusive flock on `<index>-lock` for the object's lifetime: processes opening the index take
/// turns, so that none finds it half created (and takes it for damaged) or meets another's switch
/// to WAL (which SQLite answers with SQLITE_BUSY at once, without waiting).
class IndexOpenLock {
public:
    explicit IndexOpenLock(const fs::path& index)
    {
        const std::string name = index.string() + "-lock";
        fd_ = ::open(name.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd_ < 0)
            throw Error(ErrorKind::environment, fmt::format("history index {}: cannot open its lock file: {}",
                                                            index.string(), std::strerror(errno)));
        while (::flock(fd_, LOCK_EX) != 0)
            if (errno != EINTR)
                throw Error(ErrorKind::environment,
                            fmt::format("history index {}: cannot lock it: {}", index.string(), std::strerror(errno)));
    }
    ~IndexOpenLock() { ::close(fd_); }
    IndexOpenLock(const IndexOpenLock&) = delete;
    IndexOpenLock& operator=(const IndexOpenLock&) = delete;

private:
    int fd_ = -1;
};

class Index {
public:
    explicit Index(const fs::path& file) : file_(file)
    {
        const IndexOpenLock opening(file);
        if (!open() || !usable()) {
            // A damaged index, or one of another version: it is only a cache, so build it anew.
            sqlite3_close(db_);
            db_ = nullptr;
            for (const char* suffix : {"", "-wal", "-shm", "-journal"}) fs::remove(file.string() + suffix);
            if (!open()) fail("open");
            create();
        }
    }
    ~Index() { sqlite3_close(db_); }
    Index(const Index&) = delete;
    Index& operator=(const Index&) = delete;

    void exec(const char* sql)
    {
        char* message = nullptr;
        if (sqlite3_exec(db_, sql, nullptr, nullptr, &message) != SQLITE_OK) {
            const std::string text = message ? message : "";
            sqlite3_free(message);
            throw Error(ErrorKind::environment, fmt::format("history index {}: {}", file_.string(), text));
        }
    }
    Statement statement(const char* sql) { return Statement(db_, sql, file_); }
    std::int64_t last_id() const { return sqlite3_last_insert_rowid(db_); }

private:
    bool open()
    {
        const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_FULLMUTEX;
        if (sqlite3_open_v2(file_.c_str(), &db_, flags, nullptr) != SQLITE_OK) return false;
        // Writers wait for each other instead of failing: many jobs may query one store.
        sqlite3_busy_timeout(db_, 60000);
        return true;
    }
    /// The index has this version's tables, or is new (and gets them); false only for a file that
    /// is not this version's index (damaged, another format), never because another job holds it.
    bool usable()
    {
        const int rc = sqlite3_exec(db_, "PRAGMA journal_mode=WAL", nullptr, nullptr, nullptr);
        if (rc == SQLITE_NOTADB || rc == SQLITE_CORRUPT) return false;
        if (rc != SQLITE_OK) fail("open");
        sqlite3_stmt* stmt = nullptr;
        if (sqlite3_prepare_v2(db_, "SELECT value FROM meta WHERE key='index_schema_version'", -1, &stmt, nullptr) !=
            SQLITE_OK) {
            sqlite3_finalize(stmt);
            const int code = sqlite3_errcode(db_);
            if (code == SQLITE_NOTADB || code == SQLITE_CORRUPT) return false;
            // No such table: a new index.
            create();
            return true;
        }
        const int step = sqlite3_step(stmt);
        const std::string version =
            step == SQLITE_ROW ? reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0)) : std::string();
        sqlite3_finalize(stmt);
        if (step == SQLITE_NOTADB || step == SQLITE_CORRUPT) return false;
        if (step != SQLITE_ROW && step != SQLITE_DONE) fail("read");
        return version == std::to_string(index_schema_version) && ids_in_range();
    }
    /// Whether the metric ids are what this index assigns (0, 1, 2, ... one per metric name): an
    /// index with the right schema but crafted rows (an id of 4e11) would have the reader size a
    /// table by it; it is rebuilt from the run files instead.
    bool ids_in_range()
    {
        sqlite3_stmt* stmt = nullptr;
        if (sqlite3_prepare_v2(db_, "SELECT count(*), coalesce(min(id), 0), coalesce(max(id), 0) FROM metrics", -1,
                               &stmt, nullptr) != SQLITE_OK) {
            sqlite3_finalize(stmt);
            return false;
        }
        const bool ok = sqlite3_step(stmt) == SQLITE_ROW && sqlite3_column_int64(stmt, 1) >= 0 &&
                        sqlite3_column_int64(stmt, 2) <= sqlite3_column_int64(stmt, 0) + max_metric_id_gap;
        sqlite3_finalize(stmt);
        return ok;
    }
    void create()
    {
        exec("PRAGMA journal_mode=WAL");
        exec("BEGIN IMMEDIATE");
        exec("CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);"
             "CREATE TABLE IF NOT EXISTS runs(id INTEGER PRIMARY KEY, file TEXT UNIQUE NOT NULL, suite TEXT, "
             "commit_id TEXT, commit_date TEXT, timestamp TEXT, mode TEXT, arch TEXT, gpu TEXT, driver TEXT, "
             "cuda TEXT, harness TEXT, results TEXT);"
             "CREATE INDEX IF NOT EXISTS runs_by_suite ON runs(suite, commit_date);"
             "CREATE TABLE IF NOT EXISTS metrics(id INTEGER PRIMARY KEY, name TEXT UNIQUE NOT NULL);"
             "CREATE TABLE IF NOT EXISTS case_keys(id INTEGER PRIMARY KEY, variant TEXT, params TEXT, arch TEXT, "
             "UNIQUE(variant, params, arch));"
             "CREATE TABLE IF NOT EXISTS run_cases(run_id INTEGER, position INTEGER, case_id INTEGER, status TEXT, "
             "figures BLOB, time BLOB, PRIMARY KEY(run_id, position)) WITHOUT ROWID;");
        exec(fmt::format("INSERT OR REPLACE INTO meta VALUES('index_schema_version', '{}')", index_schema_version)
                 .c_str());
        exec("COMMIT");
    }
    [[noreturn]] void fail(const char* what)
    {
        throw Error(ErrorKind::environment, fmt::format("history index {}: cannot {}: {}", file_.string(), what,
                                                        db_ ? sqlite3_errmsg(db_) : "out of memory"));
    }
    fs::path file_;
    sqlite3* db_ = nullptr;
};

// Figures are packed as (metric id: u32, value: f64) pairs; a time summary as f64s:
// median, IQR, samples, quantiles...
void put(std::string& out, const void* p, std::size_t n)
{
    out.append(static_cast<const char*>(p), n);
}

std::string time_blob(const TimeSummary& t)
{
    std::string out;
    const double head[] = {t.median_us, t.iqr_us, static_cast<double>(t.samples)};
    put(out, head, sizeof head);
    put(out, t.quantiles_us.data(), t.quantiles_us.size() * sizeof(double));
    return out;
}

std::optional<TimeSummary> read_time_blob(std::string_view blob)
{
    if (blob.size() < 3 * sizeof(double) || blob.size() % sizeof(double) != 0) return std::nullopt;
    std::vector<double> v(blob.size() / sizeof(double));
    std::memcpy(v.data(), blob.data(), blob.size());
    // A sample count that is no count (an index crafted or damaged) has no time summary: converting
    // it to an integer would be undefined.
    if (!(v[2] >= 0 && v[2] <= max_time_samples)) return std::nullopt;
    return TimeSummary{v[0], v[1], static_cast<std::size_t>(v[2]), std::vector<double>(v.begin() + 3, v.end())};
}

/// A temporary run file that a killed `record` left, removed: one an hour old is no write in
/// progress (a record writes and links its file within seconds).
void remove_if_abandoned(const fs::path& temp)
{
    std::error_code ec;
    if (!fs::is_regular_file(fs::symlink_status(temp, ec))) return;
    const auto age = fs::file_time_type::clock::now() - fs::last_write_time(temp, ec);
    if (!ec && age > std::chrono::hours(1)) fs::remove(temp, ec);
}

/// The run files in the folder: "suite/name.json", only real files under names a run file has.
std::vector<std::string> scan_run_files(const fs::path& runs)
{
    std::vector<std::string> files;
    std::error_code ec;
    if (!fs::is_directory(fs::symlink_status(runs, ec))) return files;
    for (const auto& suite_dir : fs::directory_iterator(runs, ec)) {
        const std::string suite = suite_dir.path().filename().string();
        // Never follow a link out of the store.
        if (!name_problem(suite).empty() || !fs::is_directory(fs::symlink_status(suite_dir.path(), ec))) continue;
        for (const auto& entry : fs::directory_iterator(suite_dir.path(), ec)) {
            const std::string name = entry.path().filename().string();
            if (name.starts_with(temp_prefix)) {
                remove_if_abandoned(entry.path());
                continue;
            }
            if (!name.ends_with(run_extension) || !fs::is_regular_file(fs::symlink_status(entry.path(), ec))) continue;
            if (!name_problem(name).empty()) continue;
            files.push_back(suite + "/" + name);
        }
    }
    std::sort(files.begin(), files.end());
    return files;
}

} // namespace

HistoryStore::HistoryStore(fs::path folder) : folder_(std::move(folder)) {}

AddResult HistoryStore::add(const RunRecord& record) const
{
    if (const std::string problem = record_problem(record); !problem.empty())
        throw Error(ErrorKind::bad_input, fmt::format("cannot record the run: {}", problem));
    const std::string text = run_file_text(record);
    const fs::path dir = child_path(folder_ / "runs", record.suite, "suite name");
    make_folder(folder_, dir);
    // Named by content: the same run twice is one file, two runs never share a name.
    const std::string name =
        fmt::format("{}-{}{}", record.commit.substr(0, 40), sha256_hex(text).substr(0, 16), run_extension);
    AddResult result{dir / name, false};

    // The store's own .gitignore keeps the index out of a branch that holds the store.
    const fs::path ignore = folder_ / ".gitignore";
    if (Fd fd(::open(ignore.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644)); fd.get() >= 0)
        write_all(fd.get(), "index.sqlite*\nruns/*/.incoming-*\n", ignore);

    // What an earlier record killed here left goes first.
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec))
        if (entry.path().filename().string().starts_with(temp_prefix)) remove_if_abandoned(entry.path());

    // Written in full beside its place, then linked in: link() fails rather than replace a file,
    // so a reader sees a whole run file or none, and two writers never overwrite each other.
    const fs::path temp = dir / (temp_prefix + unguessable_suffix());
    {
        Fd fd(::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
        if (fd.get() < 0) throw store_error("create", temp, errno);
        try {
            write_all(fd.get(), text, temp);
            if (::fsync(fd.get()) != 0) throw store_error("flush", temp, errno);
        } catch (...) {
            ::unlink(temp.c_str());
            throw;
        }
    }
    const int linked = ::link(temp.c_str(), result.file.c_str());
    const int link_error = errno;
    ::unlink(temp.c_str());
    if (linked != 0 && link_error != EEXIST) throw store_error("add", result.file, link_error);
    result.added = linked == 0;
    if (Fd d(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)); d.get() >= 0) ::fsync(d.get());
    return result;
}

IndexRefresh HistoryStore::refresh_index() const
{
    IndexRefresh out;
    std::error_code ec;
    fs::create_directories(folder_, ec);
    if (ec) throw store_error("create", folder_, ec.value());
    const std::vector<std::string> files = scan_run_files(folder_ / "runs");
    out.files = files.size();
    Index index(index_file());

    const auto indexed_files = [&] {
        std::set<std::string> known;
        Statement s = index.statement("SELECT file FROM runs");
        while (s.step()) known.insert(s.text(0));
        return known;
    };
    std::set<std::string> known = indexed_files();
    std::vector<std::string> fresh;
    for (const auto& f : files)
        if (!known.contains(f)) fresh.push_back(f);

    // Parsing is most of the work: spread it over the cores, outside any transaction.
    std::vector<std::optional<RunRecord>> records(fresh.size());
    std::vector<std::string> problems(fresh.size());
    for_each_index(fresh.size(), 0, [&](std::size_t i) {
        const fs::path path = folder_ / "runs" / fresh[i];
        try {
            const std::string text = read_run_file(path);
            RunRecord r = parse_run_file(text, path.string());
            // A run file is named by its content: one whose content was edited in the
            // store (in its branch, say) is not history, and is left out.
            const std::string name = path.filename().string();
            const std::size_t dash = name.rfind('-');
            const std::string named = dash == std::string::npos ? std::string() : name.substr(dash + 1, 16);
            if (named != sha256_hex(text).substr(0, 16))
                throw Error(ErrorKind::bad_input,
                            fmt::format("{}: its content does not match its name (edited after it was "
                                        "recorded?): left out",
                                        path.string()));
            if (r.suite != fresh[i].substr(0, fresh[i].find('/')))
                throw Error(ErrorKind::bad_input,
                            fmt::format("{}: a run of suite '{}' in another suite's folder", path.string(), r.suite));
            records[i] = std::move(r);
        } catch (const Error& e) {
            problems[i] = e.what();
        }
    });
    for (auto& p : problems)
        if (!p.empty()) out.problems.push_back(std::move(p));

    index.exec("BEGIN IMMEDIATE");
    try {
        known = indexed_files(); // another job may have indexed some meanwhile
        std::map<std::string, std::int64_t> metric_ids;
        std::map<std::tuple<std::string, std::string, std::string>, std::int64_t> case_ids;
        {
            Statement s = index.statement("SELECT id, name FROM metrics");
            while (s.step()) metric_ids[s.text(1)] = s.integer(0);
            Statement c = index.statement("SELECT id, variant, params, arch FROM case_keys");
            while (c.step()) case_ids[{c.text(1), c.text(2), c.text(3)}] = c.integer(0);
        }
        Statement add_run = index.statement(
            "INSERT INTO runs(file, suite, commit_id, commit_date, timestamp, mode, arch, gpu, driver, cuda, harness, "
            "results) VALUES(?,?,?,?,?,?,?,?,?,?,?,?)");
        Statement add_metric = index.statement("INSERT INTO metrics(name) VALUES(?)");
        Statement add_case_key = index.statement("INSERT INTO case_keys(variant, params, arch) VALUES(?,?,?)");
        Statement add_case = index.statement(
            "INSERT INTO run_cases(run_id, position, case_id, status, figures, time) VALUES(?,?,?,?,?,?)");
        for (std::size_t i = 0; i < fresh.size(); ++i) {
            if (!records[i] || known.contains(fresh[i])) continue;
            const RunRecord& r = *records[i];
            add_run.bind(1, fresh[i]).bind(2, r.suite).bind(3, r.commit).bind(4, r.commit_date).bind(5, r.timestamp);
            add_run.bind(6, mode_name(r.mode)).bind(7, r.arch).bind(8, r.gpu).bind(9, r.driver).bind(10, r.cuda);
            add_run.bind(11, r.harness_version).bind(12, r.results_path).run();
            const std::int64_t run_id = index.last_id();
            for (std::size_t k = 0; k < r.cases.size(); ++k) {
                const CaseFigures& c = r.cases[k];
                auto [at, inserted] = case_ids.try_emplace({c.variant, c.params, c.arch}, 0);
                if (inserted) {
                    add_case_key.bind(1, c.variant).bind(2, c.params).bind(3, c.arch).run();
                    at->second = index.last_id();
                }
                std::string figures;
                for (const auto& [name, value] : c.figures) {
                    auto [m, fresh_metric] = metric_ids.try_emplace(name, 0);
                    if (fresh_metric) {
                        add_metric.bind(1, name).run();
                        m->second = index.last_id();
                    }
                    const auto id = static_cast<std::uint32_t>(m->second);
                    put(figures, &id, sizeof id);
                    put(figures, &value, sizeof value);
                }
                add_case.bind(1, run_id)
                    .bind(2, static_cast<std::int64_t>(k))
                    .bind(3, at->second)
                    .bind(4, case_status_name(c.status));
                add_case.bind_blob(5, figures);
                if (c.time) add_case.bind_blob(6, time_blob(*c.time));
                add_case.run();
            }
            ++out.added;
        }
        // Runs whose files are gone (the store's folder is another branch now) leave the index.
        const std::set<std::string> present(files.begin(), files.end());
        Statement drop_cases =
            index.statement("DELETE FROM run_cases WHERE run_id IN (SELECT id FROM runs WHERE file = ?)");
        Statement drop_run = index.statement("DELETE FROM runs WHERE file = ?");
        for (const auto& f : known)
            if (!present.contains(f)) {
                drop_cases.bind(1, f).run();
                drop_run.bind(1, f).run();
                ++out.removed;
            }
        index.exec("COMMIT");
    } catch (...) {
        try {
            index.exec("ROLLBACK");
        } catch (const Error&) {
        }
        throw;
    }
    return out;
}

std::vector<SuiteSummary> HistoryStore::suites() const
{
    Index index(index_file());
    Statement s = index.statement("SELECT suite, count(*), count(DISTINCT commit_id), min(commit_date), "
                                  "max(commit_date) FROM runs GROUP BY suite ORDER BY suite");
    std::vector<SuiteSummary> out;
    while (s.step())
        out.push_back({s.text(0), static_cast<std::size_t>(s.integer(1)), static_cast<std::size_t>(s.integer(2)),
                       s.text(3), s.text(4)});
    return out;
}

std::vector<RunListing> HistoryStore::list_runs(const std::string& suite) const
{
    if (auto listed = list_indexed_runs(suite)) return std::move(*listed);
    // An edited index: the run files say what it should hold.
    rebuild_index();
    if (auto listed = list_indexed_runs(suite)) return std::move(*listed);
    throw Error(ErrorKind::environment, "the history index, rebuilt, names a mode no run file has");
}

std::optional<std::vector<RunListing>> HistoryStore::list_indexed_runs(const std::string& suite) const
{
    Index index(index_file());
    Statement s = index.statement(
        "SELECT file, commit_id, commit_date, mode, arch, gpu, (SELECT count(*) FROM run_cases WHERE run_id = runs.id) "
        "FROM runs WHERE suite = ? ORDER BY commit_date, timestamp, file");
    s.bind(1, suite);
    std::vector<RunListing> out;
    while (s.step()) {
        const auto mode = mode_from_name(s.text(3));
        if (!mode) return std::nullopt;
        out.push_back({"runs/" + s.text(0), s.text(1), s.text(2), *mode, s.text(4), s.text(5),
                       static_cast<std::size_t>(s.integer(6))});
    }
    return out;
}

std::vector<RunRecord> HistoryStore::load_runs(const std::string& suite) const
{
    auto loaded = load_indexed_runs(suite);
    std::vector<std::pair<RunRecord, std::string>> indexed;
    if (loaded) indexed = std::move(*loaded);
    // The index is a cache of the run files: spot-check it against them. An index edited with its
    // schema intact (figures changed row by row) would otherwise show made-up figures as history;
    // reading every run file would cost what the index saves, so a few runs, chosen at random each
    // time, are compared, and any difference rebuilds the index.
    std::vector<std::size_t> order(indexed.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), std::mt19937(std::random_device{}()));
    bool consistent = loaded.has_value();
    for (std::size_t k = 0; k < order.size() && k < spot_checked_runs && consistent; ++k) {
        const auto& [record, file] = indexed[order[k]];
        const fs::path path = folder_ / file;
        try {
            const RunRecord on_disk = parse_run_file(read_run_file(path), path.string());
            consistent = on_disk.commit == record.commit && on_disk.cases.size() == record.cases.size();
            const auto same = [](std::optional<double> a, std::optional<double> b) {
                return a == b || (a && b && std::isnan(*a) && std::isnan(*b));
            };
            const auto median = [](const CaseFigures& f) {
                return f.time ? std::optional<double>(f.time->median_us) : std::nullopt;
            };
            for (std::size_t c = 0; consistent && c < on_disk.cases.size(); ++c) {
                const CaseFigures& in_file = on_disk.cases[c];
                const CaseFigures& indexed_case = record.cases[c];
                consistent = in_file.status == indexed_case.status && in_file.variant == indexed_case.variant &&
                             in_file.params == indexed_case.params && same(median(in_file), median(indexed_case));
                for (const auto& [metric, value] : in_file.figures)
                    if (!same(value, indexed_case.figure(metric))) consistent = false;
            }
        } catch (const Error&) {
            consistent = false; // gone or damaged since it was indexed: the rebuild says which
        }
    }
    if (!consistent) {
        rebuild_index();
        loaded = load_indexed_runs(suite);
        if (!loaded) throw Error(ErrorKind::environment, "the history index, rebuilt, names a mode no run file has");
        indexed = std::move(*loaded);
    }
    std::vector<RunRecord> runs;
    runs.reserve(indexed.size());
    for (auto& [record, file] : indexed) runs.push_back(std::move(record));
    return runs;
}

void HistoryStore::rebuild_index() const
{
    {
        const IndexOpenLock opening(index_file());
        std::error_code ec;
        for (const char* suffix : {"", "-wal", "-shm", "-journal"}) fs::remove(index_file().string() + suffix, ec);
    }
    refresh_index();
}

std::optional<std::vector<std::pair<RunRecord, std::string>>>
HistoryStore::load_indexed_runs(const std::string& suite) const
{
    Index index(index_file());
    std::vector<std::string> metric_names;
    {
        Statement s = index.statement("SELECT id, name FROM metrics");
        while (s.step()) {
            const auto id = static_cast<std::size_t>(s.integer(0));
            if (metric_names.size() <= id) metric_names.resize(id + 1);
            metric_names[id] = s.text(1);
        }
    }
    std::map<std::int64_t, std::array<std::string, 3>> case_keys;
    {
        Statement s = index.statement("SELECT id, variant, params, arch FROM case_keys");
        while (s.step()) case_keys[s.integer(0)] = {s.text(1), s.text(2), s.text(3)};
    }
    std::vector<RunRecord> runs;
    std::vector<std::string> files;
    std::map<std::int64_t, std::size_t> run_at;
    {
        Statement s = index.statement("SELECT id, commit_id, commit_date, timestamp, mode, arch, gpu, driver, cuda, "
                                      "harness, results, file FROM runs WHERE suite = ? ORDER BY commit_date, "
                                      "timestamp, file");
        s.bind(1, suite);
        while (s.step()) {
            RunRecord r;
            r.suite = suite;
            r.commit = s.text(1);
            r.commit_date = s.text(2);
            r.timestamp = s.text(3);
            const auto mode = mode_from_name(s.text(4));
            if (!mode) return std::nullopt;
            r.mode = *mode;
            r.arch = s.text(5);
            r.gpu = s.text(6);
            r.driver = s.text(7);
            r.cuda = s.text(8);
            r.harness_version = s.text(9);
            r.results_path = s.text(10);
            run_at[s.integer(0)] = runs.size();
            runs.push_back(std::move(r));
            files.push_back("runs/" + s.text(11));
        }
    }
    Statement s = index.statement("SELECT run_id, case_id, status, figures, time FROM run_cases WHERE run_id IN "
                                  "(SELECT id FROM runs WHERE suite = ?) ORDER BY run_id, position");
    s.bind(1, suite);
    constexpr std::size_t pair_bytes = sizeof(std::uint32_t) + sizeof(double);
    while (s.step()) {
        const auto run = run_at.find(s.integer(0));
        const auto key = case_keys.find(s.integer(1));
        if (run == run_at.end() || key == case_keys.end()) continue;
        CaseStatus status = CaseStatus::skipped;
        try {
            status = case_status_from_name(s.text(2));
        } catch (const Error&) {
            return std::nullopt;
        }
        CaseFigures c{key->second[0], key->second[1], key->second[2], status, {}, read_time_blob(s.blob(4))};
        const std::string_view figures = s.blob(3);
        c.figures.reserve(figures.size() / pair_bytes);
        for (std::size_t at = 0; at + pair_bytes <= figures.size(); at += pair_bytes) {
            std::uint32_t id = 0;
            double value = 0.0;
            std::memcpy(&id, figures.data() + at, sizeof id);
            std::memcpy(&value, figures.data() + at + sizeof id, sizeof value);
            if (id < metric_names.size()) c.figures.emplace_back(metric_names[id], value);
        }
        runs[run->second].cases.push_back(std::move(c));
    }
    std::vector<std::pair<RunRecord, std::string>> out;
    out.reserve(runs.size());
    for (std::size_t i = 0; i < runs.size(); ++i) out.emplace_back(std::move(runs[i]), std::move(files[i]));
    return out;
}

} // namespace harness::history
