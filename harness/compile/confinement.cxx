#include "harness/compile/confinement.hxx"

#include "harness/core/error.hxx"
#include "harness/core/file_descriptor.hxx"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <linux/landlock.h>
#include <sys/prctl.h>
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
    const Fd dir(::open(path.c_str(), O_PATH | O_CLOEXEC));
    if (dir.get() < 0) return; // a folder that does not exist grants nothing
    struct landlock_path_beneath_attr rule = {};
    rule.allowed_access = rights;
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

} // namespace harness::compile
