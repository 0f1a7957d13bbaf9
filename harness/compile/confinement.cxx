#include "harness/compile/confinement.hxx"

#include "harness/core/error.hxx"
#include "harness/core/file_descriptor.hxx"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <fstream>
#include <linux/landlock.h>
#include <sstream>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace harness::compile {

namespace {

// Rights added by later ABIs than the headers of older systems know.
constexpr __u64 access_fs_truncate = 1ULL << 14;  // ABI 3
constexpr __u64 access_fs_ioctl_dev = 1ULL << 15; // ABI 5

__u64 handled_rights(int abi)
{
    __u64 rights = (1ULL << 13) - 1; // ABI 1: execute .. make_sym
    if (abi >= 2) rights |= LANDLOCK_ACCESS_FS_REFER;
    if (abi >= 3) rights |= access_fs_truncate;
    if (abi >= 5) rights |= access_fs_ioctl_dev;
    return rights;
}

using Fd = FileDescriptor;

void allow(int ruleset, const std::filesystem::path& path, __u64 rights)
{
    // Never through a link: a rule is for the folder or file the caller resolved and checked, and a
    // link (`rootlink -> /`) would grant whatever it points to.
    const Fd dir(::open(path.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    if (dir.get() < 0) return; // a folder that does not exist grants nothing
    struct stat st {};
    if (::fstat(dir.get(), &st) != 0 || S_ISLNK(st.st_mode)) return;
    struct landlock_path_beneath_attr rule = {};
    rule.allowed_access = rights;
    // A file takes only the rights that apply to files: Landlock refuses a rule to list one.
    if (!S_ISDIR(st.st_mode))
        rule.allowed_access &= LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |
                               LANDLOCK_ACCESS_FS_READ_FILE | access_fs_truncate | access_fs_ioctl_dev;
    rule.parent_fd = dir.get();
    if (::syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0) != 0)
        throw Error(ErrorKind::internal, fmt::format("confining the compiler: landlock_add_rule({}) failed: {}",
                                                     path.string(), std::strerror(errno)));
}

} // namespace

ConfinementSupport confinement_support()
{
    ConfinementSupport support;
    const long abi = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
    if (abi > 0) {
        support.available = true;
        support.abi = static_cast<int>(abi);
    } else if (errno == ENOSYS) {
        support.reason = "this Linux kernel has no Landlock (5.13 or later has it)";
    } else if (errno == EOPNOTSUPP) {
        support.reason = "Landlock is disabled in this kernel (boot option lsm=)";
    } else {
        support.reason = fmt::format("Landlock is not usable here ({})", std::strerror(errno));
    }
    return support;
}

ConfinementSupport confine_to(const std::vector<std::filesystem::path>& readable,
                              const std::vector<std::filesystem::path>& executable)
{
    const ConfinementSupport support = confinement_support();
    if (!support.available) return support;
    struct landlock_ruleset_attr attributes = {};
    attributes.handled_access_fs = handled_rights(support.abi);
    const Fd ruleset(static_cast<int>(::syscall(SYS_landlock_create_ruleset, &attributes, sizeof attributes, 0)));
    if (ruleset.get() < 0)
        throw Error(ErrorKind::internal,
                    fmt::format("confining the compiler: landlock_create_ruleset failed: {}", std::strerror(errno)));
    const __u64 read = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR;
    for (const auto& path : readable) allow(ruleset.get(), path, read);
    for (const auto& path : executable) allow(ruleset.get(), path, read | LANDLOCK_ACCESS_FS_EXECUTE);
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        throw Error(ErrorKind::internal,
                    fmt::format("confining the compiler: prctl(PR_SET_NO_NEW_PRIVS) failed: {}", std::strerror(errno)));
    if (::syscall(SYS_landlock_restrict_self, ruleset.get(), 0) != 0)
        throw Error(ErrorKind::internal,
                    fmt::format("confining the compiler: landlock_restrict_self failed: {}", std::strerror(errno)));
    return support;
}

namespace {

constexpr const char* empty_folder_prefix = "harness-compile-";

/// Removes the empty folders that commands killed before they could remove theirs left in `temp`:
/// the user's, and a day old, so that no running command's folder goes.
void remove_abandoned_folders(const std::filesystem::path& temp)
{
    const auto day_ago = std::chrono::system_clock::now() - std::chrono::hours(24);
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(temp, ec)) {
        if (!entry.path().filename().string().starts_with(empty_folder_prefix)) continue;
        struct stat st {};
        if (::lstat(entry.path().c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid() ||
            std::chrono::system_clock::from_time_t(st.st_mtime) > day_ago)
            continue;
        ::rmdir(entry.path().c_str()); // only an empty folder goes
    }
}

} // namespace

EmptyFolder::EmptyFolder()
{
    remove_abandoned_folders(std::filesystem::temp_directory_path());
    std::string name =
        (std::filesystem::temp_directory_path() / (std::string(empty_folder_prefix) + "XXXXXX")).string();
    if (!::mkdtemp(name.data()))
        throw Error(ErrorKind::environment,
                    fmt::format("cannot make a working folder for the compiler in {}: {}",
                                std::filesystem::temp_directory_path().string(), std::strerror(errno)));
    path_ = name;
    // Read-only, so that even an unconfined compiler process cannot put a header there.
    ::chmod(path_.c_str(), 0500);
}

EmptyFolder::~EmptyFolder()
{
    ::rmdir(path_.c_str());
}

namespace {

/// Where this process's initial environment strings lie, the bytes /proc/self/environ reads:
/// fields 50 and 51 (env_start, env_end) of /proc/self/stat. {0, 0} when they cannot be read.
std::pair<unsigned long, unsigned long> environment_area()
{
    std::ifstream in("/proc/self/stat");
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    // Field 2, the command's name, is in parentheses and may hold spaces and parentheses itself.
    const std::size_t name_end = stat.rfind(')');
    if (name_end == std::string::npos) return {0, 0};
    std::istringstream fields(stat.substr(name_end + 1));
    unsigned long start = 0, end = 0;
    std::string field;
    for (int number = 3; number <= 51 && fields >> field; ++number) {
        if (number == 50) start = std::strtoul(field.c_str(), nullptr, 10);
        if (number == 51) end = std::strtoul(field.c_str(), nullptr, 10);
    }
    return start < end ? std::pair{start, end} : std::pair{0UL, 0UL};
}

std::atomic<bool> refuse_includes_unconfined{false};

} // namespace

void isolate_compiler_process(const std::filesystem::path& working_folder)
{
    if (::chdir(working_folder.c_str()) != 0)
        throw Error(ErrorKind::environment, fmt::format("cannot enter the compiler's working folder {}: {}",
                                                        working_folder.string(), std::strerror(errno)));
    // clearenv() empties the variables; /proc/self/environ still reads the strings the process
    // started with, in its own memory, which this (forked, never exec'd) process may overwrite.
    const auto [start, end] = environment_area();
    ::clearenv();
    if (start != 0) std::memset(reinterpret_cast<void*>(start), 0, end - start);
}

bool unconfined_project_includes_refused()
{
    return refuse_includes_unconfined.load();
}

void refuse_unconfined_project_includes(bool refuse)
{
    refuse_includes_unconfined.store(refuse);
}

} // namespace harness::compile
