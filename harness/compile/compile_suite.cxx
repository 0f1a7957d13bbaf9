#include "harness/compile/compile_suite.hxx"

#include "harness/compile/compile_error.hxx"
#include "harness/compile/confinement.hxx"
#include "harness/compile/include_policy.hxx"
#include "harness/compile/module_file.hxx"
#include "harness/core/child_process.hxx"
#include "harness/suite/compile_params.hxx"
#include "harness/suite/sweep.hxx"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fmt/format.h>
#include <mutex>
#include <nlohmann/json.hpp>
#include <nvrtc.h>
#include <optional>
#include <poll.h>
#include <set>
#include <sys/resource.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <variant>

namespace harness::compile {

namespace fs = std::filesystem;

const CompiledModule* SuiteModules::find(const suite::VariantSpec& variant, const suite::Bindings& point) const
{
    auto it = modules.find(suite::compile_key(variant, point));
    return it == modules.end() ? nullptr : &it->second;
}

const std::string* SuiteModules::error(const suite::VariantSpec& variant, const suite::Bindings& point) const
{
    auto it = errors.find(suite::compile_key(variant, point));
    return it == errors.end() ? nullptr : &it->second;
}

std::vector<CompileUnit> compile_units(const suite::Suite& suite)
{
    return compile_units(suite, suite::expand_cases(suite));
}

std::vector<CompileUnit> compile_units(const suite::Suite& suite, const std::vector<suite::Case>& cases)
{
    std::vector<CompileUnit> units;
    std::set<std::string> seen;
    for (const auto& c : cases) {
        const auto& variant = suite.variants[c.variant];
        if (!suite::runs_module_kernels(variant.kind)) continue; // a library call: nothing to compile
        std::string key = suite::compile_key(variant, c.params);
        if (seen.insert(key).second) units.push_back({std::move(key), c.variant, c.params});
    }
    return units;
}

CompileRequest request_for(const suite::Suite& suite, const suite::VariantSpec& variant, const suite::Bindings& point,
                           const std::string& arch)
{
    CompileRequest request;
    switch (variant.kind) {
    case suite::VariantKind::source: request.source = variant.source; break;
    case suite::VariantKind::module:
    case suite::VariantKind::triton: // its cubin; the manifest's hashes judged its staleness at load
    case suite::VariantKind::cutile:
        request.module_file = variant.module;
        request.built_from = variant.built_from;
        request.allow_stale_module = variant.allow_stale;
        break;
    case suite::VariantKind::builtin: // a library call compiles nothing (compile_units leaves it out)
        break;
    }
    request.include_dirs = suite.include_dirs;
    request.readable_roots = {suite.project_root};
    request.defines = suite::resolve_defines(variant, point);
    request.options = variant.options;
    request.arch = arch;
    for (const auto& launch : variant.launches) {
        const std::string entry = suite::resolve_entry(launch.entry, point);
        if (std::find(request.entries.begin(), request.entries.end(), entry) == request.entries.end())
            request.entries.push_back(entry);
    }
    return request;
}

CompileRequest request_for(const suite::Suite& suite, const suite::VariantSpec& variant, const std::string& arch)
{
    return request_for(suite, variant, suite::Bindings{}, arch);
}

SuiteModules compile_suite(const suite::Suite& suite, const std::string& arch, const CompileCache* cache, unsigned jobs)
{
    return compile_suite(suite, suite::expand_cases(suite), arch, cache, jobs);
}

namespace {

/// `message` with a module variant's resolved path, and the folder its `${NAME_DIR}` named, shown
/// as the suite writes them: a variable's value never reaches a report.
std::string as_written(std::string message, const suite::VariantSpec& variant)
{
    if (variant.module_written.empty() || variant.module_folder.empty()) return message;
    const auto replace_all = [&](const std::string& from, const std::string& to) {
        if (from.empty()) return;
        for (std::size_t at = 0; (at = message.find(from, at)) != std::string::npos; at += to.size())
            message.replace(at, from.size(), to);
    };
    replace_all(fs::absolute(variant.module).string(), variant.module_written);
    replace_all(variant.module.string(), variant.module_written);
    const std::string written = variant.module_written;
    replace_all(variant.module_folder.string(), written.substr(0, written.find('}') + 1));
    return message;
}

} // namespace

namespace {

using Clock = std::chrono::steady_clock;

/// The file a request compiles, for messages: its source, or its module.
std::string compiled_file(const CompileRequest& request)
{
    return (request.module_file.empty() ? request.source : request.module_file).string();
}

/// The message a compiler process sends back: the module, or why there is none.
std::string pack(const CompiledModule& m)
{
    nlohmann::json sources = nlohmann::json::array();
    for (const auto& file : m.sources) sources.push_back({file.path.string(), file.xxh3_128});
    const nlohmann::json j = {
        {"cubin", nlohmann::json::binary_t(std::vector<std::uint8_t>(m.cubin.begin(), m.cubin.end()))},
        {"ptx", m.ptx},
        {"no_ptx", m.no_ptx},
        {"log", m.log},
        {"lowered_names", m.lowered_names},
        {"cache_key", m.cache_key},
        {"from_cache", m.from_cache},
        {"sources", sources}};
    const auto bytes = nlohmann::json::to_msgpack(j);
    return std::string(bytes.begin(), bytes.end());
}

std::string pack_error(const std::string& message, ErrorKind kind)
{
    const auto bytes = nlohmann::json::to_msgpack(nlohmann::json{{"error", message}, {"kind", static_cast<int>(kind)}});
    return std::string(bytes.begin(), bytes.end());
}

/// The module or the failure a compiler process sent; throws on a message cut short.
ConfinedCompile unpack(const std::string& packed)
{
    const auto j = nlohmann::json::from_msgpack(packed);
    if (j.contains("error"))
        return CompileFailure{static_cast<ErrorKind>(j.at("kind").get<int>()), j.at("error").get<std::string>()};
    CompiledModule module;
    const auto& cubin = j.at("cubin").get_binary();
    module.cubin.assign(cubin.begin(), cubin.end());
    module.ptx = j.at("ptx");
    module.no_ptx = j.at("no_ptx");
    module.log = j.at("log");
    module.lowered_names = j.at("lowered_names").get<std::map<std::string, std::string>>();
    module.cache_key = j.at("cache_key");
    module.from_cache = j.at("from_cache");
    for (const auto& file : j.at("sources"))
        module.sources.push_back({file.at(0).get<std::string>(), file.at(1).get<std::string>()});
    return module;
}

/// Throws Error (environment) when one of `requests` includes project files, compilation cannot be
/// confined here and the command refuses that (CI mode without --allow-unconfined-compile).
void refuse_unconfined_includes(const std::vector<CompileRequest>& requests)
{
    if (!unconfined_project_includes_refused()) return;
    const ConfinementSupport support = confinement_support();
    if (support.available) return;
    for (const auto& request : requests) {
        if (!request.module_file.empty()) continue; // built by the project's compiler: NVRTC reads nothing
        std::vector<fs::path> files;
        try {
            files = source_closure(request);
        } catch (const CompileError&) {
            continue; // refused by the scan: its compiler process says why, and compiles nothing
        }
        if (files.size() <= 1) continue;
        throw Error(ErrorKind::environment,
                    fmt::format("{}: not compiled: it includes {}{}, and compilation cannot be confined here ({}). In "
                                "CI mode a kernel that includes project files is compiled only under Landlock: "
                                "without it the include scan alone would stand between the kernel and every file "
                                "the job can read. Run where Landlock is available (Linux 5.13 or later, not "
                                "blocked by a seccomp profile), or pass {} to compile unconfined",
                                request.source.string(), files[1].string(),
                                files.size() > 2 ? fmt::format(" and {} more project files", files.size() - 2) : "",
                                support.reason, allow_unconfined_option));
    }
}

/// Scans the first kernel's includes here, so that every compiler process forked afterwards finds
/// the toolkit's headers already read (the scan reads each once per process); its verdict is the
/// compiler process's to give.
void warm_include_scan(const std::vector<CompileRequest>& requests)
{
    for (const auto& request : requests) {
        if (request.source.empty()) continue;
        try {
            source_closure(request);
        } catch (const Error&) {
        }
        return;
    }
}

/// The body of a compiler process: limits, the cache, an empty environment and working folder,
/// confinement, then NVRTC. Never returns.
[[noreturn]] void compile_in_this_child(int answer_fd, const CompileRequest& request, const CompileCache* cache,
                                        const suite::CompileLimits& limits, const fs::path& working_folder)
{
    std::string answer;
    try {
#if !defined(__SANITIZE_ADDRESS__)
        // AddressSanitizer's shadow memory counts as data: under it, the parent's watch of the
        // resident size alone holds the limit.
        const rlim_t memory = static_cast<rlim_t>(limits.memory_mib) << 20;
        const rlimit data = {memory, memory};
        ::setrlimit(RLIMIT_DATA, &data);
#endif
        const rlim_t cpu = static_cast<rlim_t>(std::ceil(limits.timeout_s)) + 5; // the parent stops it first
        const rlimit cpu_limit = {cpu, cpu};
        ::setrlimit(RLIMIT_CPU, &cpu_limit);
        const rlimit no_core = {0, 0};
        ::setrlimit(RLIMIT_CORE, &no_core);
        // The include scan runs first and reads only the project; a hit needs no compiler.
        if (cache && request.module_file.empty())
            if (const auto inputs = compile_inputs(request); auto hit = cache->load(cache_key(request, inputs)))
                if (hit->sources == inputs) { // the files its paths name (compile())
                    write_all(answer_fd, pack(*hit));
                    ::_exit(0);
                }
        isolate_compiler_process(working_folder);
        std::vector<fs::path> readable = confined_readable_folders(readable_folders(request), request.readable_roots);
        readable.push_back(working_folder); // empty: NVRTC looks there first and finds nothing
        confine_to(readable, {});
        answer = pack(compile(request, nullptr));
    } catch (const std::bad_alloc&) {
        answer = pack_error(fmt::format("{}: compiling for {} ran out of memory: the limit is {} MiB (the suite's "
                                        "compile.memory_mib)",
                                        compiled_file(request), request.arch, limits.memory_mib),
                            ErrorKind::bad_input);
    } catch (const std::exception& e) {
        std::string message = e.what();
        const auto* compile_error = dynamic_cast<const CompileError*>(&e);
        if (compile_error && compile_error->nvrtc_status() == NVRTC_ERROR_OUT_OF_MEMORY)
            message += fmt::format("\n  note: the compile memory limit is {} MiB (the suite's compile.memory_mib)",
                                   limits.memory_mib);
        const auto* error = dynamic_cast<const Error*>(&e);
        answer = pack_error(message, error ? error->kind() : ErrorKind::internal);
    }
    write_all(answer_fd, answer);
    ::_exit(0);
}

/// The resident memory of process `pid` in MiB, or 0 when it cannot be read.
long resident_mib(pid_t pid)
{
    std::FILE* statm = std::fopen(fmt::format("/proc/{}/statm", pid).c_str(), "r");
    if (!statm) return 0;
    long size = 0, resident = 0;
    const int read = std::fscanf(statm, "%ld %ld", &size, &resident);
    std::fclose(statm);
    return read == 2 ? resident * (::sysconf(_SC_PAGESIZE) / 1024) / 1024 : 0;
}

/// A compiler process under way.
struct Compiling {
    pid_t pid = -1;
    int fd = -1;
    std::size_t unit = 0;
    Clock::time_point deadline;
    std::string answer;
};

/// Kills whatever compiler processes are still running when the pool is left by an exception.
struct KillOnExit {
    std::vector<Compiling>& running;
    ~KillOnExit()
    {
        for (auto& c : running) {
            ::kill(c.pid, SIGKILL);
            ::close(c.fd);
            ::waitpid(c.pid, nullptr, 0);
        }
    }
};

std::string describe_death(int status, const rusage& usage, const CompileRequest& request,
                           const suite::CompileLimits& limits)
{
    const long peak_mib = usage.ru_maxrss / 1024;
    if (WIFSIGNALED(status))
        return fmt::format("{}: the compiler process for {} was killed by signal {} ({}); it may have reached the "
                           "compile memory limit of {} MiB (the suite's compile.memory_mib; peak resident {} MiB)",
                           compiled_file(request), request.arch, WTERMSIG(status), strsignal(WTERMSIG(status)),
                           limits.memory_mib, peak_mib);
    return fmt::format("{}: the compiler process for {} ended without an answer (exit status {}, peak {} MiB)",
                       compiled_file(request), request.arch, WEXITSTATUS(status), peak_mib);
}

} // namespace

void warn_if_unconfined()
{
    static std::once_flag once;
    std::call_once(once, [] {
        const ConfinementSupport support = confinement_support();
        if (!support.available)
            fmt::print(stderr,
                       "harness: note: compilation is not confined: {}; the include scan alone keeps kernels from "
                       "reading outside the project\n",
                       support.reason);
    });
}

std::vector<ConfinedCompile> compile_confined(std::vector<CompileRequest> requests, const suite::CompileLimits& limits,
                                              const CompileCache* cache, unsigned jobs, const std::string& what)
{
    for (CompileRequest& request : requests) {
        // The compiler process works in another folder: a relative path would name another file there.
        for (auto* paths : {&request.include_dirs, &request.readable_roots, &request.built_from})
            for (auto& path : *paths) path = fs::absolute(path);
        if (!request.source.empty()) request.source = fs::absolute(request.source);
        if (!request.module_file.empty()) request.module_file = fs::absolute(request.module_file);
    }
    if (jobs == 0) jobs = std::max(1u, std::thread::hardware_concurrency());
    warn_if_unconfined();
    refuse_unconfined_includes(requests);
    // Resolved here, from $CUDA_PATH and the like, before any compiler process empties its
    // environment; the compiler gets the folders as --include-path options.
    toolkit_include_dirs();
    warm_include_scan(requests);
    const EmptyFolder working_folder;
    // Loaded here, once, so no compiler process calls the dynamic loader after fork(): another
    // thread of this process may hold its lock at that moment. Loading the library runs no NVRTC.
    load_nvrtc_builtins();
    // The same for a module file's compressed entries (its code, or the PTX its accesses are predicted from).
    if (std::any_of(requests.begin(), requests.end(), [](const CompileRequest& r) { return !r.module_file.empty(); }))
        load_module_decompressor();

    std::vector<ConfinedCompile> results(requests.size());
    std::vector<Compiling> running;
    KillOnExit guard{running};
    std::size_t next = 0;
    while (next < requests.size() || !running.empty()) {
        while (next < requests.size() && running.size() < jobs) {
            const auto [pid, answer_fd] = fork_with_pipe(
                what,
                [&](int fd) -> int { compile_in_this_child(fd, requests[next], cache, limits, working_folder.path()); },
                1);
            const auto timeout =
                std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(limits.timeout_s));
            running.push_back({pid, answer_fd, next, Clock::now() + timeout, {}});
            ++next;
        }

        std::vector<pollfd> polled;
        for (const auto& c : running) polled.push_back({c.fd, POLLIN, 0});
        Clock::time_point soonest = running.front().deadline;
        for (const auto& c : running) soonest = std::min(soonest, c.deadline);
        const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(soonest - Clock::now()).count();
        if (::poll(polled.data(), polled.size(), static_cast<int>(std::clamp<long long>(wait + 1, 0, 200))) < 0 &&
            errno != EINTR)
            throw Error(ErrorKind::environment, fmt::format("{}: poll failed: {}", what, std::strerror(errno)));

        for (std::size_t i = running.size(); i-- > 0;) {
            Compiling& c = running[i];
            bool finished = false;
            bool timed_out = false;
            long over_memory_mib = 0;
            if (polled[i].revents & (POLLIN | POLLHUP | POLLERR)) {
                char chunk[65536];
                const ssize_t n = ::read(c.fd, chunk, sizeof chunk);
                if (n > 0)
                    c.answer.append(chunk, static_cast<std::size_t>(n));
                else if (n == 0 || errno != EINTR)
                    finished = true;
            }
            if (!finished && Clock::now() >= c.deadline) {
                ::kill(c.pid, SIGKILL);
                finished = timed_out = true;
            }
            if (!finished)
                if (const long mib = resident_mib(c.pid); mib > limits.memory_mib) {
                    ::kill(c.pid, SIGKILL);
                    finished = true;
                    over_memory_mib = mib;
                }
            if (!finished) continue;
            ::close(c.fd);
            int status = 0;
            rusage usage{};
            while (::wait4(c.pid, &status, 0, &usage) < 0 && errno == EINTR) {
            }
            const CompileRequest& request = requests[c.unit];
            ConfinedCompile& result = results[c.unit];
            if (over_memory_mib > 0) {
                result = CompileFailure{
                    ErrorKind::bad_input,
                    fmt::format("{}: compiling for {} took {} MiB, more than the limit of {} MiB, and was stopped (the "
                                "suite's compile.memory_mib)",
                                compiled_file(request), request.arch, over_memory_mib, limits.memory_mib)};
            } else if (timed_out) {
                result = CompileFailure{ErrorKind::bad_input,
                                        fmt::format("{}: compiling for {} took longer than {} s and was stopped (the "
                                                    "suite's compile.timeout_s)",
                                                    compiled_file(request), request.arch, limits.timeout_s)};
            } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || c.answer.empty()) {
                result = CompileFailure{ErrorKind::bad_input, describe_death(status, usage, request, limits)};
            } else {
                try {
                    result = unpack(c.answer);
                    if (auto* module = std::get_if<CompiledModule>(&result))
                        if (cache && !module->from_cache && request.module_file.empty()) cache->store(*module);
                } catch (const std::exception& e) {
                    result = CompileFailure{ErrorKind::internal,
                                            fmt::format("{}: the compiler process's answer is unreadable: {}",
                                                        compiled_file(request), e.what())};
                }
            }
            running.erase(running.begin() + static_cast<std::ptrdiff_t>(i));
        }
    }
    return results;
}

SuiteModules compile_suite(const suite::Suite& suite, const std::vector<suite::Case>& cases, const std::string& arch,
                           const CompileCache* cache, unsigned jobs)
{
    const auto units = compile_units(suite, cases);
    std::vector<CompileRequest> requests;
    for (const auto& unit : units)
        requests.push_back(request_for(suite, suite.variants[unit.variant], unit.point, arch));
    auto results = compile_confined(std::move(requests), suite.compile_limits, cache, jobs,
                                    fmt::format("compiling {}", suite.name));

    SuiteModules out;
    for (std::size_t i = 0; i < units.size(); ++i) {
        if (auto* module = std::get_if<CompiledModule>(&results[i]))
            out.modules.emplace(units[i].key, std::move(*module));
        else
            out.errors.emplace(units[i].key, as_written(std::get<CompileFailure>(results[i]).message,
                                                        suite.variants[units[i].variant]));
    }
    return out;
}

} // namespace harness::compile
