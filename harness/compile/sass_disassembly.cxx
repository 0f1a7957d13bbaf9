#include "harness/compile/sass_disassembly.hxx"

#include "harness/core/error.hxx"
#include "harness/core/text.hxx"

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace harness::compile {

namespace fs = std::filesystem;

namespace {

bool is_executable_file(const fs::path& path)
{
    std::error_code ec;
    return fs::is_regular_file(path, ec) && ::access(path.c_str(), X_OK) == 0;
}

/// The folders looked in, in order, each with what put it on the list.
std::vector<std::pair<fs::path, std::string>> nvdisasm_folders()
{
    std::vector<std::pair<fs::path, std::string>> folders;
    for (const char* variable : {"CUDA_PATH", "CUDA_HOME"})
        if (const char* value = std::getenv(variable); value && *value)
            folders.emplace_back(fs::path(value) / "bin", std::string("$") + variable);
#ifdef HARNESS_CUDA_INCLUDE_DIR
    folders.emplace_back(fs::path(HARNESS_CUDA_INCLUDE_DIR).parent_path() / "bin", "the toolkit built with");
#endif
    folders.emplace_back("/usr/local/cuda/bin", "/usr/local/cuda");
    if (const char* venv = std::getenv("VIRTUAL_ENV"); venv && *venv)
        folders.emplace_back(fs::path(venv) / "bin", "$VIRTUAL_ENV");
    if (const char* path = std::getenv("PATH"); path)
        for (std::string_view rest = path; !rest.empty();) {
            const auto colon = rest.find(':');
            const std::string_view part = rest.substr(0, colon);
            if (!part.empty()) folders.emplace_back(fs::path(part), "PATH");
            rest = colon == std::string_view::npos ? std::string_view{} : rest.substr(colon + 1);
        }
    return folders;
}

/// Runs `program args...` with its output into `out` and `err`, killed when it runs past the time
/// limit or prints more than the output limit (`over` then says which), its address space limited.
/// Returns the wait status.
int run_bounded(const fs::path& program, const std::vector<std::string>& args, const DisassemblyLimits& limits,
                std::string& out, std::string& err, bool& over)
{
    std::array<int, 2> out_pipe{-1, -1}, err_pipe{-1, -1};
    if (::pipe2(out_pipe.data(), O_CLOEXEC) != 0 || ::pipe2(err_pipe.data(), O_CLOEXEC) != 0)
        throw Error(ErrorKind::environment, fmt::format("{}: pipe failed: {}", program.string(), std::strerror(errno)));
    std::vector<std::string> argv_text = {program.string()};
    argv_text.insert(argv_text.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argv_text) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0) throw Error(ErrorKind::environment, fmt::format("fork failed: {}", std::strerror(errno)));
    if (pid == 0) {
        // Only async-signal-safe calls between fork and exec.
        const rlimit memory{limits.max_memory_bytes, limits.max_memory_bytes};
        ::setrlimit(RLIMIT_AS, &memory);
        const int in = ::open("/dev/null", O_RDONLY);
        ::dup2(in, STDIN_FILENO);
        ::dup2(out_pipe[1], STDOUT_FILENO);
        ::dup2(err_pipe[1], STDERR_FILENO);
        ::execv(argv[0], argv.data());
        ::_exit(127);
    }
    ::close(out_pipe[1]);
    ::close(err_pipe[1]);
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                               std::chrono::duration<double>(limits.timeout_s));
    std::array<pollfd, 2> fds{pollfd{out_pipe[0], POLLIN, 0}, pollfd{err_pipe[0], POLLIN, 0}};
    std::array<std::string*, 2> sinks{&out, &err};
    int open_pipes = 2;
    over = false;
    std::array<char, 1 << 16> buffer{};
    while (open_pipes > 0 && !over) {
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            over = true;
            break;
        }
        const int ready = ::poll(fds.data(), fds.size(), static_cast<int>(left.count()));
        if (ready < 0 && errno == EINTR) continue;
        if (ready <= 0) continue;
        for (std::size_t i = 0; i < fds.size(); ++i) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            const ssize_t n = ::read(fds[i].fd, buffer.data(), buffer.size());
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) {
                ::close(fds[i].fd);
                fds[i].fd = -1;
                --open_pipes;
                continue;
            }
            // Past the limit nothing more is kept, and a sink grows to the limit at most (doubling
            // from its own size would take twice the limit).
            const std::size_t size = static_cast<std::size_t>(n);
            if (out.size() + err.size() + size > limits.max_output_bytes) {
                over = true;
                break;
            }
            std::string& sink = *sinks[i];
            if (sink.size() + size > sink.capacity())
                sink.reserve(std::min(limits.max_output_bytes, std::max(2 * sink.capacity(), sink.size() + size)));
            sink.append(buffer.data(), size);
        }
    }
    if (over) ::kill(pid, SIGKILL);
    for (auto& f : fds)
        if (f.fd >= 0) ::close(f.fd);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return status;
}

/// "13.2.86" from nvdisasm's `--version` text ("... release 13.2, V13.2.86"), or the whole last line.
std::string version_of(const fs::path& program)
{
    DisassemblyLimits limits;
    limits.timeout_s = 10;
    limits.max_output_bytes = 1 << 16;
    try {
        std::string text, err;
        bool over = false;
        const int status = run_bounded(program, {"--version"}, limits, text, err, over);
        if (over || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return "";
        if (const auto v = text.rfind(", V"); v != std::string::npos) {
            const auto end = text.find_first_of(" \n", v + 3);
            return text.substr(v + 3, end == std::string::npos ? std::string::npos : end - v - 3);
        }
        return std::string(trim(text));
    } catch (const std::exception&) {
        return "";
    }
}

} // namespace

const NvdisasmLocation& find_nvdisasm()
{
    static const NvdisasmLocation location = [] {
        NvdisasmLocation found;
        std::vector<std::string> looked;
        if (const char* named = std::getenv("HARNESS_NVDISASM"); named && *named) {
            if (is_executable_file(named)) {
                found.program = named;
            } else {
                found.not_found_reason =
                    fmt::format("$HARNESS_NVDISASM names {}, which is not an executable file", named);
                return found;
            }
        }
        if (found.program.empty())
            for (const auto& [folder, why] : nvdisasm_folders()) {
                if (is_executable_file(folder / "nvdisasm")) {
                    found.program = folder / "nvdisasm";
                    break;
                }
                const std::string shown = fmt::format("{} ({})", folder.string(), why);
                if (why != "PATH" && std::none_of(looked.begin(), looked.end(), [&](const std::string& l) {
                        return l.starts_with(folder.string() + " (");
                    }))
                    looked.push_back(shown);
            }
        if (found.program.empty()) {
            looked.push_back("PATH");
            found.not_found_reason = fmt::format("nvdisasm not found (looked in {}); install it with "
                                                 "ci/install-nvdisasm.sh or set HARNESS_NVDISASM",
                                                 join(looked));
            return found;
        }
        found.version = version_of(found.program);
        return found;
    }();
    return location;
}

std::string disassemble_cubin(const fs::path& nvdisasm, std::string_view cubin, const std::string& name,
                              const DisassemblyLimits& limits)
{
    // nvdisasm reads a file: the cubin goes to a private temporary one, removed on every path.
    const fs::path tmp_dir = [] {
        const char* t = std::getenv("TMPDIR");
        return fs::path(t && *t ? t : "/tmp");
    }();
    std::string pattern = (tmp_dir / "harness-sass-XXXXXX").string();
    const int fd = ::mkstemp(pattern.data());
    if (fd < 0)
        throw Error(ErrorKind::environment,
                    fmt::format("cannot create a temporary file in {}: {}", tmp_dir.string(), std::strerror(errno)));
    struct Remove {
        std::string path;
        ~Remove() { ::unlink(path.c_str()); }
    } remove{pattern};
    std::size_t done = 0;
    while (done < cubin.size()) {
        const ssize_t n = ::write(fd, cubin.data() + done, cubin.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            ::close(fd);
            throw Error(ErrorKind::environment, fmt::format("cannot write {}: {}", pattern, std::strerror(errno)));
        }
        done += static_cast<std::size_t>(n);
    }
    ::close(fd);

    std::string out, err;
    bool over = false;
    const int status = run_bounded(nvdisasm, {"-c", "-g", pattern}, limits, out, err, over);
    if (over)
        throw Error(ErrorKind::bad_input,
                    fmt::format("{}: its disassembly ran past the limits ({:.0f} s, {} MiB of output): "
                                "{} bytes read when {} was stopped",
                                name, limits.timeout_s, limits.max_output_bytes >> 20, out.size() + err.size(),
                                nvdisasm.string()));
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127 && out.empty())
        throw Error(ErrorKind::environment, fmt::format("cannot run {}", nvdisasm.string()));
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        std::string reason(trim(err.substr(0, std::min<std::size_t>(err.size(), 400))));
        for (auto& c : reason)
            if (c == '\n') c = ' ';
        throw Error(ErrorKind::bad_input,
                    fmt::format("{}: nvdisasm cannot disassemble it ({}){}{}", name,
                                WIFSIGNALED(status) ? fmt::format("killed by signal {}", WTERMSIG(status))
                                                    : fmt::format("exit status {}", WEXITSTATUS(status)),
                                reason.empty() ? "" : ": ", escape_control_characters(reason)));
    }
    return out;
}

namespace {

[[noreturn]] void bad_line(const std::string& name, int line_number, std::string_view what, std::string_view line)
{
    const std::string shown(line.substr(0, std::min<std::size_t>(line.size(), 80)));
    throw Error(ErrorKind::bad_input,
                fmt::format("{}: disassembly line {}: {}: \"{}\"{}", name, line_number, what,
                            escape_control_characters(shown),
                            line.size() > 80 ? fmt::format(" ({} characters)", line.size()) : ""));
}

/// The file and line of a `//## File "path", line N[, column N][ inlined at ...]` directive.
bool parse_line_directive(std::string_view text, std::string& file, int& line)
{
    constexpr std::string_view prefix = "//## File \"";
    if (!text.starts_with(prefix)) return false;
    text.remove_prefix(prefix.size());
    const auto quote = text.find('"');
    if (quote == std::string_view::npos || quote == 0) return false;
    file = std::string(text.substr(0, quote));
    text.remove_prefix(quote + 1);
    constexpr std::string_view line_prefix = ", line ";
    if (!text.starts_with(line_prefix)) return false;
    text.remove_prefix(line_prefix.size());
    const auto end = text.find_first_not_of("0123456789");
    const auto number = parse_decimal_integer(text.substr(0, end));
    if (!number || *number < 0 || *number > 100'000'000) return false;
    line = static_cast<int>(*number);
    return true;
}

/// An instruction line: `/*0040*/  @!P0 ISETP.GE.AND P0, PT, R0, c[0x0][0x170], PT ;`.
std::optional<SassInstruction> parse_instruction(std::string_view text)
{
    if (!text.starts_with("/*")) return std::nullopt;
    const auto close = text.find("*/");
    if (close == std::string_view::npos || close == 2) return std::nullopt;
    SassInstruction instruction;
    const std::string_view offset = text.substr(2, close - 2);
    if (offset.size() > 8 || offset.find_first_not_of("0123456789abcdefABCDEF") != std::string_view::npos)
        return std::nullopt;
    instruction.offset = static_cast<std::uint32_t>(std::strtoul(std::string(offset).c_str(), nullptr, 16));
    std::string_view rest = trim(text.substr(close + 2));
    const auto semicolon = rest.rfind(';');
    if (semicolon == std::string_view::npos) return std::nullopt;
    rest = trim(rest.substr(0, semicolon));
    if (rest.starts_with("@")) {
        const auto space = rest.find(' ');
        if (space == std::string_view::npos) return std::nullopt;
        instruction.predicate = std::string(rest.substr(0, space));
        rest = trim(rest.substr(space));
    }
    const auto space = rest.find(' ');
    instruction.opcode = std::string(rest.substr(0, space));
    if (instruction.opcode.empty()) return std::nullopt;
    instruction.operands = space == std::string_view::npos ? "" : std::string(trim(rest.substr(space)));
    return instruction;
}

} // namespace

std::vector<SassFunction> parse_disassembly(std::string_view text, const std::string& name,
                                            std::size_t max_instructions)
{
    std::vector<SassFunction> functions;
    std::string file;
    int line = 0;
    int line_number = 0;
    std::size_t instructions = 0;
    for (std::string_view rest = text; !rest.empty();) {
        const auto newline = rest.find('\n');
        const std::string_view raw = rest.substr(0, newline);
        rest = newline == std::string_view::npos ? std::string_view{} : rest.substr(newline + 1);
        ++line_number;
        const std::string_view content = trim(raw);
        if (content.empty()) continue;
        if (content.starts_with(".section")) {
            // `.section .text.<function>,"ax",@progbits` opens a function's code; other sections end it.
            constexpr std::string_view code = ".text.";
            const auto at = content.find(code);
            if (at == std::string_view::npos) {
                file.clear();
                line = 0;
                continue;
            }
            const auto comma = content.find(',', at);
            const std::string_view symbol = content.substr(at + code.size(), comma - at - code.size());
            if (symbol.empty()) bad_line(name, line_number, "a code section without a name", content);
            functions.push_back({std::string(symbol), {}});
            file.clear();
            line = 0;
            continue;
        }
        if (content.starts_with("//##")) {
            if (!parse_line_directive(content, file, line))
                bad_line(name, line_number, "a line directive without a file and line", content);
            continue;
        }
        if (content.starts_with("/*")) {
            auto instruction = parse_instruction(content);
            if (!instruction) bad_line(name, line_number, "not an instruction", content);
            if (functions.empty()) bad_line(name, line_number, "an instruction outside any code section", content);
            if (++instructions > max_instructions)
                bad_line(name, line_number,
                         fmt::format("more instructions than the {} one cubin may hold", max_instructions), content);
            instruction->file = file;
            instruction->line = line;
            functions.back().instructions.push_back(std::move(*instruction));
            continue;
        }
        // Directives (.align, .global), labels (.L_x_0:, name:), section banners (//---).
        if (content.starts_with(".") || content.starts_with("//") || content.ends_with(":")) continue;
        bad_line(name, line_number, "not a line of nvdisasm's output", content);
    }
    return functions;
}

} // namespace harness::compile
