#include "harness/core/file_transaction.hxx"

#include "harness/core/atomic_file.hxx"
#include "harness/core/error.hxx"
#include "harness/core/file_descriptor.hxx"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <optional>
#include <string>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>
#include <vector>

namespace harness {

namespace fs = std::filesystem;

namespace {

// The names a replacement uses inside the folder it works in. The staged files are named by their
// place in the journal ("0", "1", ...), so a file bound for a subfolder needs none in the staging folder.
constexpr const char* journal_name = ".harness-journal";
constexpr std::string_view staging_prefix = ".harness-staging.";
constexpr const char* staged_journal_name = "journal";
constexpr std::string_view journal_header = "harness replacement journal 1";
constexpr std::size_t max_journal_bytes = 1024 * 1024;

[[noreturn]] void fail(const std::string& what, const fs::path& path, int error)
{
    // Every open here refuses to follow a link (O_NOFOLLOW), which the system reports as ELOOP.
    const std::string reason =
        error == ELOOP ? "it is a symbolic link, which is never followed" : std::string(std::strerror(error));
    throw Error(ErrorKind::environment, fmt::format("cannot {} {}: {}", what, path.string(), reason));
}

void step(const TransactionStep& before_step, const std::string& what)
{
    if (before_step) before_step(what);
}

using Fd = FileDescriptor;

/// The folder `name` of `dir`, never through a link; on failure errno is ELOOP for a link (which
/// O_DIRECTORY reports as ENOTDIR).
Fd open_folder_below(int dir, const char* name)
{
    Fd fd(::openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd && errno == ENOTDIR) {
        struct stat st {};
        errno = ::fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode) ? ELOOP : ENOTDIR;
    }
    return fd;
}

/// What a committed replacement does: rename <staging>/<i> to targets[i], for every i.
struct Journal {
    std::string staging;           ///< the staging folder's name, inside the shared folder
    std::vector<fs::path> targets; ///< relative to the shared folder
};

/// A path below the shared folder that names a file and climbs nowhere: no "..", ".", root or
/// empty part, and no line break (the journal holds one path a line).
bool is_plain_relative(const fs::path& path)
{
    if (path.empty() || path.has_root_path() || path.native().find('\n') != std::string::npos) return false;
    return std::ranges::all_of(path, [](const fs::path& part) { return !part.empty() && part != "." && part != ".."; });
}

bool is_staging_name(std::string_view name)
{
    return name.size() > staging_prefix.size() && name.starts_with(staging_prefix) &&
           name.find('/') == std::string_view::npos;
}

std::string journal_text(const Journal& journal)
{
    std::string text = fmt::format("{}\nstaging {}\n", journal_header, journal.staging);
    for (const auto& target : journal.targets) text += "file " + target.string() + "\n";
    return text + "end\n";
}

Journal parse_journal(std::string_view text, const fs::path& file)
{
    const auto damaged = [&](std::string_view why) {
        return Error(ErrorKind::environment,
                     fmt::format("cannot complete the replacement recorded in {}: the journal is damaged ({}); remove "
                                 "it to keep the files as they are",
                                 file.string(), why));
    };
    std::vector<std::string_view> lines;
    while (!text.empty()) {
        const std::size_t end = text.find('\n');
        if (end == std::string_view::npos) throw damaged("its last line is cut short");
        lines.push_back(text.substr(0, end));
        text.remove_prefix(end + 1);
    }
    if (lines.size() < 3 || lines.front() != journal_header || lines.back() != "end") throw damaged("no header or end");
    Journal journal;
    if (!lines[1].starts_with("staging ") || !is_staging_name(lines[1].substr(8))) throw damaged("no staging folder");
    journal.staging = std::string(lines[1].substr(8));
    for (std::size_t i = 2; i + 1 < lines.size(); ++i) {
        if (!lines[i].starts_with("file ")) throw damaged(fmt::format("line {}", i + 1));
        fs::path target(std::string(lines[i].substr(5)));
        if (!is_plain_relative(target)) throw damaged(fmt::format("line {} names a path outside the folder", i + 1));
        journal.targets.push_back(std::move(target));
    }
    return journal;
}

/// The journal of a committed replacement in `dir`, or nothing when there is none.
std::optional<Journal> read_journal(int dir, const fs::path& folder)
{
    const fs::path file = folder / journal_name;
    // O_NONBLOCK: a FIFO planted under the name must not hang the open.
    Fd fd(::openat(dir, journal_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    if (!fd) {
        if (errno == ENOENT) return std::nullopt;
        fail("read", file, errno);
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) fail("read", file, errno);
    if (!S_ISREG(st.st_mode))
        throw Error(ErrorKind::environment, fmt::format("cannot read {}: it is not a regular file", file.string()));
    if (static_cast<std::size_t>(st.st_size) > max_journal_bytes)
        throw Error(ErrorKind::environment, fmt::format("cannot read {}: it is larger than a journal", file.string()));
    std::string text(static_cast<std::size_t>(st.st_size), '\0');
    std::size_t got = 0;
    while (got < text.size()) {
        const ssize_t n = ::read(fd.get(), text.data() + got, text.size() - got);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) fail("read", file, errno);
        if (n == 0) break;
        got += static_cast<std::size_t>(n);
    }
    text.resize(got);
    return parse_journal(text, file);
}

/// Names of the entries of `dir` (without "." and "..") that `keep` accepts.
template <typename Keep> std::vector<std::string> entries_of(int dir, const fs::path& shown, Keep keep)
{
    // A descriptor of its own: a directory stream moves the offset of the descriptor it reads.
    const int fd = ::openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) fail("list", shown, errno);
    DIR* stream = ::fdopendir(fd);
    if (!stream) {
        const int error = errno;
        ::close(fd);
        fail("list", shown, error);
    }
    std::vector<std::string> names;
    errno = 0;
    while (const dirent* entry = ::readdir(stream)) {
        const std::string_view name = entry->d_name;
        if (name != "." && name != ".." && keep(name)) names.emplace_back(name);
    }
    const int error = errno;
    ::closedir(stream);
    if (error != 0) fail("list", shown, error);
    std::sort(names.begin(), names.end());
    return names;
}

/// Removes the staging folder `name` of `dir` and what it holds (never following a link).
void remove_staging(int dir, const std::string& name, const fs::path& folder, const TransactionStep& before_step)
{
    const fs::path shown = folder / name;
    Fd staging = open_folder_below(dir, name.c_str());
    if (!staging) {
        if (errno == ENOENT) return;
        if (errno != ELOOP && errno != ENOTDIR) fail("open", shown, errno);
        // Not a folder (a link or file planted under the name): only the name goes.
        step(before_step, "remove the staging folder");
        if (::unlinkat(dir, name.c_str(), 0) != 0 && errno != ENOENT) fail("remove", shown, errno);
        return;
    }
    for (const auto& entry : entries_of(staging.get(), shown, [](std::string_view) { return true; })) {
        step(before_step, "remove the staged " + entry);
        if (::unlinkat(staging.get(), entry.c_str(), 0) == 0 || errno == ENOENT) continue;
        if (errno != EISDIR || ::unlinkat(staging.get(), entry.c_str(), AT_REMOVEDIR) != 0)
            fail("remove", shown / entry, errno);
    }
    step(before_step, "remove the staging folder");
    if (::unlinkat(dir, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) fail("remove", shown, errno);
}

/// The folder `relative` below `dir`, opened one name at a time without following a link.
/// Missing folders are created when `create`; otherwise the deepest folder there is returned,
/// with `complete` false.
Fd open_below(int dir, const fs::path& relative, const fs::path& shown, bool create, bool& complete,
              const TransactionStep& before_step)
{
    Fd current(::fcntl(dir, F_DUPFD_CLOEXEC, 0));
    if (!current) fail("open the folder of", shown, errno);
    complete = true;
    for (const auto& part : relative) {
        Fd next = open_folder_below(current.get(), part.c_str());
        if (!next && errno == ENOENT && create) {
            step(before_step, "create the folder " + part.string());
            if (::mkdirat(current.get(), part.c_str(), 0777) != 0 && errno != EEXIST)
                fail("create the folder of", shown, errno);
            next = open_folder_below(current.get(), part.c_str());
        }
        if (!next && errno == ENOENT && !create) {
            complete = false;
            return current;
        }
        if (!next) fail(fmt::format("open the folder {} of", part.string()), shown, errno);
        current = std::move(next);
    }
    return current;
}

/// Renames the staged files of a committed replacement into place, then removes its journal and its
/// staging folder. Each step may be repeated after a kill: a staged file already renamed is gone.
void roll_forward(int dir, const fs::path& folder, const Journal& journal, const TransactionStep& before_step)
{
    const fs::path staging_shown = folder / journal.staging;
    Fd staging = open_folder_below(dir, journal.staging.c_str());
    if (!staging && errno != ENOENT) fail("open", staging_shown, errno);
    std::vector<Fd> parents; // flushed once every rename is done, before the journal goes
    for (std::size_t i = 0; staging && i < journal.targets.size(); ++i) {
        const fs::path& target = journal.targets[i];
        const fs::path shown = folder / target;
        const std::string staged = std::to_string(i);
        struct stat st {};
        if (::fstatat(staging.get(), staged.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
            if (errno == ENOENT) continue; // renamed before the kill
            fail("read", staging_shown / staged, errno);
        }
        if (!S_ISREG(st.st_mode))
            throw Error(ErrorKind::environment, fmt::format("cannot replace {}: {} is not a file the update wrote",
                                                            shown.string(), (staging_shown / staged).string()));
        bool complete = true;
        Fd parent = open_below(dir, target.parent_path(), shown, true, complete, before_step);
        step(before_step, "rename " + target.string());
        if (::renameat(staging.get(), staged.c_str(), parent.get(), target.filename().c_str()) != 0)
            fail("replace", shown, errno);
        parents.push_back(std::move(parent));
    }
    for (const auto& parent : parents)
        if (::fsync(parent.get()) != 0) fail("flush the folder of", folder, errno);
    step(before_step, "remove the journal");
    if (::unlinkat(dir, journal_name, 0) != 0 && errno != ENOENT) fail("remove", folder / journal_name, errno);
    remove_staging(dir, journal.staging, folder, before_step);
}

/// Whether a killed replacement left something in `dir`: a journal, or a staging folder.
bool needs_recovery(int dir, const fs::path& folder)
{
    struct stat st {};
    if (::fstatat(dir, journal_name, &st, AT_SYMLINK_NOFOLLOW) == 0) return true;
    if (errno != ENOENT) fail("read", folder / journal_name, errno);
    return !entries_of(dir, folder, is_staging_name).empty();
}

void recover(int dir, const fs::path& folder, const TransactionStep& before_step)
{
    if (const auto journal = read_journal(dir, folder)) roll_forward(dir, folder, *journal, before_step);
    // Any staging folder left now belongs to a replacement killed before its commit: undone.
    for (const auto& name : entries_of(dir, folder, is_staging_name)) remove_staging(dir, name, folder, before_step);
}

/// Writes `content` to the new file `name` in `dir` and flushes it to disk; errors name `shown`.
void write_new_file(int dir, const char* name, std::string_view content, const fs::path& shown)
{
    // The staging folder is private (0700): the file can have its final mode (0644 less the umask)
    // from the start.
    Fd fd(::openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
    if (!fd) fail("create a staging file for", shown, errno);
    while (!content.empty()) {
        const ssize_t written = ::write(fd.get(), content.data(), content.size());
        if (written < 0 && errno == EINTR) continue;
        if (written < 0) fail("write", shown, errno);
        content.remove_prefix(static_cast<std::size_t>(written));
    }
    if (::fsync(fd.get()) != 0) fail("flush", shown, errno);
    if (::close(fd.release()) != 0) fail("write", shown, errno);
}

/// The deepest folder that holds every path (all absolute and normal).
fs::path shared_folder(const std::vector<fs::path>& paths)
{
    fs::path shared = paths.front().parent_path();
    for (const auto& path : paths) {
        const fs::path parent = path.parent_path();
        fs::path common;
        for (auto a = shared.begin(), b = parent.begin(); a != shared.end() && b != parent.end() && *a == *b; ++a, ++b)
            common /= *a;
        shared = common;
    }
    return shared;
}

void lock(int fd, int operation, const fs::path& folder)
{
    while (::flock(fd, operation) != 0)
        if (errno != EINTR) fail("lock", folder, errno);
}

} // namespace

void replace_files_together(const std::vector<std::pair<fs::path, std::string>>& files,
                            const TransactionStep& before_step)
{
    if (files.empty()) return;
    std::vector<fs::path> absolute;
    for (const auto& [path, content] : files) {
        std::error_code ec;
        absolute.push_back(fs::absolute(path, ec).lexically_normal());
        if (ec) fail("find", path, ec.value());
        const fs::path name = absolute.back().filename();
        if (name.empty() || name == "." || name == "..")
            throw Error(ErrorKind::environment, fmt::format("cannot replace {}: it names no file", path.string()));
    }
    const fs::path folder = shared_folder(absolute);
    std::error_code ec;
    fs::create_directories(folder, ec);
    if (ec) fail("create the folder of", files.front().first, ec.value());
    Fd dir(::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!dir) fail("open the folder of", files.front().first, errno);
    struct stat folder_stat {};
    if (::fstat(dir.get(), &folder_stat) != 0) fail("open the folder of", files.front().first, errno);

    // A replacement a killed process left here comes first: its journal name is about to be reused.
    recover(dir.get(), folder, before_step);

    // Everything that could fail a rename is checked before the commit, so that after it only the
    // system itself (a full or failing disk) can stop the renames.
    Journal journal;
    for (std::size_t i = 0; i < files.size(); ++i) {
        const fs::path& shown = files[i].first;
        const fs::path target = absolute[i].lexically_relative(folder);
        if (!is_plain_relative(target))
            throw Error(ErrorKind::environment,
                        fmt::format("cannot replace {}: its name holds a line break", shown.string()));
        if (const std::string first = target.begin()->string(); first == journal_name || is_staging_name(first))
            throw Error(
                ErrorKind::environment,
                fmt::format("cannot replace {}: the name is kept for the replacement's own files", shown.string()));
        for (const auto& earlier : journal.targets) {
            const auto [a, b] = std::ranges::mismatch(earlier, target);
            if (a == earlier.end() || b == target.end())
                throw Error(
                    ErrorKind::environment,
                    fmt::format("cannot replace {}: it is given twice, or as a file and as a folder", shown.string()));
        }
        bool complete = true;
        const Fd parent = open_below(dir.get(), target.parent_path(), shown, false, complete, {});
        struct stat st {};
        if (::fstat(parent.get(), &st) != 0) fail("open the folder of", shown, errno);
        if (st.st_dev != folder_stat.st_dev)
            throw Error(ErrorKind::environment, fmt::format("cannot replace {}: its folder is on another file system "
                                                            "than {}",
                                                            shown.string(), folder.string()));
        if (complete && ::fstatat(parent.get(), target.filename().c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
            S_ISDIR(st.st_mode))
            throw Error(ErrorKind::environment, fmt::format("cannot replace {}: it is a folder", shown.string()));
        journal.targets.push_back(target);
    }

    step(before_step, "create the staging folder");
    for (int attempt = 0;; ++attempt) {
        journal.staging = std::string(staging_prefix) + unguessable_suffix();
        if (::mkdirat(dir.get(), journal.staging.c_str(), 0700) == 0) break;
        if (errno != EEXIST || attempt == 16) fail("create a staging folder in", folder, errno);
    }
    Fd staging = open_folder_below(dir.get(), journal.staging.c_str());
    if (!staging) {
        const int error = errno;
        ::unlinkat(dir.get(), journal.staging.c_str(), AT_REMOVEDIR);
        fail("open", folder / journal.staging, error);
    }
    try {
        for (std::size_t i = 0; i < files.size(); ++i) {
            step(before_step, "stage " + journal.targets[i].string());
            write_new_file(staging.get(), std::to_string(i).c_str(), files[i].second, files[i].first);
        }
        step(before_step, "write the journal");
        write_new_file(staging.get(), staged_journal_name, journal_text(journal), folder / journal_name);
        if (::fsync(staging.get()) != 0) fail("flush", folder / journal.staging, errno);
        // The commit: from here on the new files are the folder's content.
        step(before_step, "commit");
        if (::renameat(staging.get(), staged_journal_name, dir.get(), journal_name) != 0)
            fail("rename the journal to", folder / journal_name, errno);
    } catch (...) {
        try {
            remove_staging(dir.get(), journal.staging, folder, {});
        } catch (const Error&) {
            // Left for the next lock on the folder to remove.
        }
        throw;
    }
    try {
        if (::fsync(dir.get()) != 0) fail("flush", folder, errno);
        roll_forward(dir.get(), folder, journal, before_step);
    } catch (const Error& e) {
        throw Error(ErrorKind::environment,
                    fmt::format("{} (the replacement is committed in {}: the next update or run that reads the folder "
                                "completes it)",
                                e.what(), (folder / journal_name).string()));
    }
}

void recover_replacement(const fs::path& folder, const TransactionStep& before_step)
{
    Fd dir(::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!dir) {
        if (errno == ENOENT) return;
        fail("open", folder, errno);
    }
    recover(dir.get(), folder, before_step);
}

bool replacement_pending(const fs::path& folder)
{
    struct stat st {};
    return ::lstat((folder / journal_name).c_str(), &st) == 0;
}

FolderLock::FolderLock(const fs::path& folder)
{
    std::error_code ec;
    fs::create_directories(folder, ec);
    if (ec) fail("create", folder, ec.value());
    fd_ = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd_ < 0) fail("open", folder, errno);
    try {
        lock(fd_, LOCK_EX, folder);
        recover(fd_, folder, {});
    } catch (...) {
        ::close(fd_);
        throw;
    }
}

FolderLock::~FolderLock()
{
    if (fd_ >= 0) ::close(fd_);
}

FolderReadLock::FolderReadLock(const fs::path& folder)
{
    fd_ = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd_ < 0) {
        if (errno == ENOENT || errno == ENOTDIR) return;
        fail("open", folder, errno);
    }
    try {
        lock(fd_, LOCK_SH, folder);
        // The exclusive lock is taken only to recover; between the two another process may have
        // updated the folder and been killed, so the check repeats.
        while (needs_recovery(fd_, folder)) {
            lock(fd_, LOCK_EX, folder);
            recover(fd_, folder, {});
            lock(fd_, LOCK_SH, folder);
        }
    } catch (...) {
        ::close(fd_);
        fd_ = -1;
        throw;
    }
}

FolderReadLock::~FolderReadLock()
{
    if (fd_ >= 0) ::close(fd_);
}

} // namespace harness
