#include "harness/core/input_files.hxx"

#include "harness/core/error.hxx"
#include "harness/core/text.hxx"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

namespace harness {

namespace fs = std::filesystem;

std::string name_problem(std::string_view name)
{
    if (name.empty()) return "is empty";
    if (name.size() > max_name_length)
        return fmt::format("is {} characters long (at most {})", name.size(), max_name_length);
    const auto allowed = [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
               c == '-';
    };
    for (char c : name)
        if (!allowed(c)) return "uses a character other than letters, digits, '_', '.' and '-'";
    if (name.front() == '.' || name.front() == '-') return "starts with '.' or '-'";
    return "";
}

fs::path child_path(const fs::path& dir, std::string_view name, std::string_view what, std::string_view extension)
{
    if (const std::string problem = name_problem(name); !problem.empty())
        throw Error(ErrorKind::bad_input, fmt::format("{} '{}' {}: it cannot name a file inside {}", what,
                                                      name.substr(0, max_name_length), problem, dir.string()));
    return dir / (std::string(name) + std::string(extension));
}

bool is_inside(const fs::path& path, const fs::path& root)
{
    std::error_code ec;
    const fs::path p = fs::weakly_canonical(fs::absolute(path, ec), ec);
    if (ec) return false;
    const fs::path r = fs::weakly_canonical(fs::absolute(root, ec), ec);
    if (ec) return false;
    auto pi = p.begin();
    for (auto ri = r.begin(); ri != r.end(); ++ri, ++pi) {
        if (ri->empty()) continue; // a trailing separator
        if (pi == p.end() || *pi != *ri) return false;
    }
    return true;
}

void refuse_linked_folders(const fs::path& top, const fs::path& folder)
{
    const fs::path below = folder.lexically_normal().lexically_relative(top.lexically_normal());
    if (below.empty() || *below.begin() == "..") return;
    fs::path at = top;
    for (const auto& part : below) {
        if (part.empty() || part == ".") continue;
        at /= part;
        std::error_code ec;
        const auto status = fs::symlink_status(at, ec);
        if (ec || !fs::exists(status)) return; // created later, as a real folder
        if (fs::is_symlink(status))
            throw Error(ErrorKind::environment,
                        fmt::format("{} is a symbolic link (to {}): the harness writes reports and baselines only into "
                                    "real folders, not through links; make it a folder, or name another one with "
                                    "--out or --baseline-dir",
                                    at.string(), fs::read_symlink(at, ec).string()));
    }
}

fs::path project_root(const fs::path& suite_file)
{
    std::error_code ec;
    const fs::path start = fs::weakly_canonical(fs::absolute(suite_file, ec), ec).parent_path();
    for (fs::path dir = start; !dir.empty() && dir != dir.root_path(); dir = dir.parent_path()) {
        for (const char* marker : {"kernels", "baselines"})
            if (fs::is_directory(dir / marker, ec)) return dir;
        if (fs::exists(dir / ".git", ec)) return dir;
    }
    return start;
}

std::size_t invalid_utf8_offset(std::string_view text)
{
    for (std::size_t i = 0; i < text.size();) {
        const auto point = utf8_code_point(text, i);
        if (!point) return i;
        i += point->second;
    }
    return std::string_view::npos;
}

std::pair<int, int> line_and_column(std::string_view text, std::size_t offset)
{
    int line = 1, column = 1;
    for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
        if (text[i] == '\n') {
            ++line;
            column = 1;
        } else {
            ++column;
        }
    }
    return {line, column};
}

std::string read_input_file(const fs::path& path, std::size_t max_bytes, std::string_view what)
{
    const std::string name = path.string();
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) throw InputError(name, 0, 0, "", fmt::format("cannot open the {}: {}", what, std::strerror(errno)));
    struct Closer {
        int fd;
        ~Closer() { ::close(fd); }
    } closer{fd};
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        throw InputError(name, 0, 0, "", fmt::format("the {} is not a regular file", what));
    if (static_cast<std::uintmax_t>(st.st_size) > max_bytes)
        throw InputError(
            name, 0, 0, "",
            fmt::format("the {} is {} bytes, more than the {} bytes allowed", what, st.st_size, max_bytes));
    std::string text;
    char buffer[65536];
    for (;;) {
        const ssize_t n = ::read(fd, buffer, sizeof buffer);
        if (n < 0) {
            if (errno == EINTR) continue;
            throw InputError(name, 0, 0, "", fmt::format("cannot read the {}: {}", what, std::strerror(errno)));
        }
        if (n == 0) break;
        text.append(buffer, static_cast<std::size_t>(n));
        if (text.size() > max_bytes)
            throw InputError(name, 0, 0, "", fmt::format("the {} is more than the {} bytes allowed", what, max_bytes));
    }
    return text;
}

} // namespace harness
