#include "harness/core/atomic_file.hxx"

#include "harness/core/error.hxx"

#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <fstream>
#include <unistd.h>

namespace harness {

void write_file_atomically(const std::filesystem::path& path, std::string_view content)
{
    namespace fs = std::filesystem;
    std::error_code ec;
    if (path.has_parent_path()) fs::create_directories(path.parent_path(), ec);
    if (ec) throw Error(ErrorKind::environment, fmt::format("cannot create {}: {}", path.parent_path().string(), ec.message()));
    const fs::path temp = path.string() + fmt::format(".tmp.{}", getpid());
    {
        std::ofstream out(temp, std::ios::binary | std::ios::trunc);
        out.write(content.data(), static_cast<std::streamsize>(content.size()));
        out.flush();
        if (!out) {
            fs::remove(temp, ec);
            throw Error(ErrorKind::environment, fmt::format("cannot write {}: {}", temp.string(), std::strerror(errno)));
        }
    }
    fs::rename(temp, path, ec);
    if (ec) {
        fs::remove(temp, ec);
        throw Error(ErrorKind::environment, fmt::format("cannot replace {}: {}", path.string(), ec.message()));
    }
}

} // namespace harness
