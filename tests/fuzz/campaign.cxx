#include "campaign.hxx"

#include "rules.hxx"

#include "harness/core/error.hxx"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstring>
#include <cxxabi.h>
#include <execinfo.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <fstream>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/common_interface_defs.h>

// One allocation past this is reported at once, before a runaway size pages the machine to a halt.
extern "C" const char* __asan_default_options()
{
    return "max_allocation_size_mb=2048";
}
#endif

namespace harness::fuzz {

namespace {

std::int64_t now_ns()
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

/// State the worker shares with its supervisor through an anonymous shared mapping, so that it
/// survives the worker's death: which input runs, since when, and the counts. The input's bytes
/// follow the struct.
struct Shared {
    std::atomic<std::uint64_t> next_input{0}; ///< corpus files are 0..seeds-1, mutations follow
    std::atomic<std::uint64_t> current_input{0};
    std::atomic<std::uint64_t> current_seed{0};
    std::atomic<std::int64_t> started_ns{0};           ///< when the running input started; 0 between inputs
    std::atomic<std::int64_t> mutation_deadline_ns{0}; ///< set when the replay ends
    std::atomic<std::int64_t> log_offset{0};           ///< of the worker's stderr when the input started
    std::atomic<bool> sanitizer_reported{false};
    std::atomic<bool> finished{false};
    std::atomic<std::uint64_t> replayed{0}, mutated{0}, refused{0}, accepted{0};
    std::array<std::atomic<std::uint64_t>, finding_kind_count> failing{};
    static constexpr std::size_t max_distinct = 1024;
    std::atomic<std::size_t> distinct_count{0};
    std::array<std::uint64_t, max_distinct> distinct_hash{};
    std::array<FindingKind, max_distinct> distinct_kind{};
    std::atomic<std::size_t> input_size{0};

    char* input() { return reinterpret_cast<char*>(this + 1); }
};

Shared* worker_state = nullptr; // for the signal handlers and the sanitizer's death callback

/// The shared mapping, unmapped when the campaign ends.
class SharedMapping {
public:
    explicit SharedMapping(std::size_t capacity) : bytes_(sizeof(Shared) + capacity)
    {
        void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) throw Error(ErrorKind::environment, "harness_fuzz: cannot map shared memory");
        state_ = new (p) Shared;
    }
    ~SharedMapping()
    {
        state_->~Shared();
        munmap(state_, bytes_);
    }
    SharedMapping(const SharedMapping&) = delete;
    SharedMapping& operator=(const SharedMapping&) = delete;
    Shared& state() { return *state_; }

private:
    std::size_t bytes_;
    Shared* state_;
};

void write_text(const char* text)
{
    [[maybe_unused]] const auto ignored = write(STDERR_FILENO, text, std::strlen(text));
}

void print_stack()
{
#ifdef __SANITIZE_ADDRESS__
    __sanitizer_print_stack_trace();
#else
    void* frames[64];
    backtrace_symbols_fd(frames, backtrace(frames, 64), STDERR_FILENO);
#endif
}

/// SIGUSR1 from the supervisor: the input ran too long or grew too large. Says where it is, then ends.
void on_watchdog(int)
{
    write_text("harness_fuzz: watchdog: stopped while running an input; its stack:\n");
    print_stack();
    _exit(70);
}

#ifndef __SANITIZE_ADDRESS__
/// Without a sanitizer, a fatal signal prints its name and stack, then ends the process as it would.
void on_fatal_signal(int signal)
{
    write_text("harness_fuzz: signal ");
    write_text(sigabbrev_np(signal) ? sigabbrev_np(signal) : "?");
    write_text("\n");
    print_stack();
    std::signal(signal, SIG_DFL);
    raise(signal);
}
#endif

std::string exception_type_name()
{
    const std::type_info* type = abi::__cxa_current_exception_type();
    if (!type) return "unknown";
    int status = 0;
    char* demangled = abi::__cxa_demangle(type->name(), nullptr, nullptr, &status);
    std::string name = status == 0 && demangled ? demangled : type->name();
    std::free(demangled);
    return name;
}

const char* error_kind_name(ErrorKind kind)
{
    switch (kind) {
    case ErrorKind::bad_input: return "bad_input";
    case ErrorKind::environment: return "environment";
    case ErrorKind::internal: return "internal";
    }
    return "?";
}

/// Adds the hash to the campaign's set; false when it was there already.
bool remember(Shared& s, std::uint64_t hash, FindingKind kind)
{
    const std::size_t n = std::min(s.distinct_count.load(), Shared::max_distinct);
    for (std::size_t i = 0; i < n; ++i)
        if (s.distinct_hash[i] == hash) return false;
    if (n < Shared::max_distinct) {
        s.distinct_hash[n] = hash;
        s.distinct_kind[n] = kind;
        s.distinct_count = n + 1;
    }
    return true;
}

/// Counts, saves, and for a signature new to this campaign prints the finding.
void record(const Target& target, Shared& s, const Finding& finding, const std::string& input,
            const InputContext& context, const std::string& origin, const FindingStore& store)
{
    ++s.failing[static_cast<std::size_t>(finding.kind)];
    const auto saved = store.save(target, finding, input, context, origin);
    if (!remember(s, finding_hash(target, finding), finding.kind)) return;
    fmt::print("fuzz: {}: {}: {}\n      input: {} ({})\n", target.name, finding_kind_name(finding.kind),
               finding.signature, saved.string(), origin);
    if (finding.kind != FindingKind::exception && finding.kind != FindingKind::rule) {
        // The first lines of the report; the whole of it is in the .txt beside the input.
        std::size_t end = 0;
        for (int line = 0; line < 30 && end != std::string::npos; ++line) end = finding.report.find('\n', end + 1);
        fmt::print("{}\n", finding.report.substr(0, end));
    }
    std::fflush(stdout);
}

std::string origin_text(const Target& target, std::span<const Seed> seeds, std::uint64_t index,
                        std::uint64_t seed_index, const CampaignOptions& o)
{
    if (index < seeds.size()) return fmt::format("corpus file {}/{}", target.name, seeds[index].name);
    return fmt::format("mutation {} of {}/{}, --seed {}", index - seeds.size(), target.name, seeds[seed_index].name,
                       o.seed);
}

/// The worker: runs inputs from shared.next_input on until the budget is spent.
[[noreturn]] void work(const Target& target, std::span<const Seed> seeds, const CampaignOptions& o, Shared& s,
                       std::size_t capacity, int log_fd)
{
    dup2(log_fd, STDERR_FILENO);
    worker_state = &s;
    prepare_process(o.memory_limit_mib);
    const Mutator mutator(seeds, target.dictionary(), o.max_len);
    const FindingStore store(o.findings);
    InputContext context{"", o.scratch};
    for (;;) {
        const std::uint64_t index = s.next_input;
        const bool replay = index < seeds.size();
        if (!replay) {
            if (s.mutation_deadline_ns == 0)
                s.mutation_deadline_ns = now_ns() + static_cast<std::int64_t>(o.seconds * 1e9);
            if (now_ns() >= s.mutation_deadline_ns || (o.runs && index - seeds.size() >= *o.runs)) break;
        }
        s.next_input = index + 1;
        std::size_t seed_index = index;
        std::string input;
        if (replay) {
            input = seeds[index].text;
        } else {
            Random random(input_seed(o.seed, target.name, index - seeds.size()));
            input = mutator.mutate(random, seed_index);
        }
        context.seed_name = seeds[seed_index].name;
        s.current_input = index;
        s.current_seed = seed_index;
        s.input_size = std::min(input.size(), capacity);
        std::memcpy(s.input(), input.data(), s.input_size);
        s.log_offset = lseek(STDERR_FILENO, 0, SEEK_END);
        s.started_ns = now_ns();
        const Outcome outcome = run_input(target, input, context);
        s.started_ns = 0;
        ++(replay ? s.replayed : s.mutated);
        if (outcome.finding)
            record(target, s, *outcome.finding, input, context, origin_text(target, seeds, index, seed_index, o),
                   store);
        else
            ++(outcome.reception.accepted ? s.accepted : s.refused);
    }
    s.finished = true;
    std::fflush(stdout);
    std::exit(0); // not _exit: LeakSanitizer checks at exit
}

/// Why the supervisor stopped a worker, if it did.
enum class Watchdog { none, hang, memory };

struct Ending {
    int status = 0;
    Watchdog reason = Watchdog::none;
};

std::size_t resident_mib(pid_t pid)
{
    std::ifstream statm(fmt::format("/proc/{}/statm", pid));
    std::size_t size = 0, resident = 0;
    statm >> size >> resident;
    return resident * static_cast<std::size_t>(sysconf(_SC_PAGESIZE)) >> 20;
}

std::int64_t file_size(int fd)
{
    struct stat st {};
    return fstat(fd, &st) == 0 ? st.st_size : 0;
}

/// Waits for the worker to end, stopping it when one input runs past the time limit or the worker
/// grows past the memory limit. A sanitizer's report may take longer than the limit to symbolize:
/// while the worker's stderr grows, it is given 30 s more.
Ending watch(pid_t pid, Shared& s, const CampaignOptions& o, int log_fd)
{
    const auto timeout_ns = static_cast<std::int64_t>(o.timeout_s * 1e9);
    constexpr std::int64_t report_grace_ns = 30'000'000'000, kill_grace_ns = 10'000'000'000;
    Watchdog reason = Watchdog::none;
    std::int64_t kill_at = 0, next_memory_check = 0;
    for (;;) {
        int status = 0;
        if (waitpid(pid, &status, WNOHANG) == pid) return {status, reason};
        const std::int64_t now = now_ns();
        if (reason == Watchdog::none) {
            const std::int64_t started = s.started_ns;
            if (started != 0 && now - started > timeout_ns) {
                const bool reporting = file_size(log_fd) > s.log_offset;
                if (!reporting || now - started > timeout_ns + report_grace_ns) reason = Watchdog::hang;
            }
            if (now >= next_memory_check) {
                next_memory_check = now + 20'000'000;
                if (resident_mib(pid) > o.memory_limit_mib) reason = Watchdog::memory;
            }
            if (reason != Watchdog::none) {
                kill(pid, SIGUSR1);
                kill_at = now + kill_grace_ns;
            }
        } else if (kill_at != 0 && now >= kill_at) {
            kill(pid, SIGKILL);
            kill_at = 0;
        }
        usleep(2000);
    }
}

std::string read_log(int fd, std::int64_t from)
{
    constexpr std::int64_t most = 256 * 1024;
    const std::int64_t size = file_size(fd);
    std::string text(static_cast<std::size_t>(std::clamp<std::int64_t>(size - from, 0, most)), '\0');
    const auto got = pread(fd, text.data(), text.size(), from);
    text.resize(got > 0 ? static_cast<std::size_t>(got) : 0);
    return text;
}

/// What a worker's death says about the input it was running.
Finding death_finding(const Ending& ending, const Shared& s, const std::string& log, const CampaignOptions& o)
{
    const std::string frame = source_frame(log);
    const std::string at = frame.empty() ? "" : " at " + frame;
    const std::string report = log.empty() ? "(nothing on stderr)" : log;
    switch (ending.reason) {
    case Watchdog::hang: return {FindingKind::hang, fmt::format("ran longer than {} s{}", o.timeout_s, at), report};
    case Watchdog::memory:
        return {FindingKind::memory, fmt::format("grew past {} MiB{}", o.memory_limit_mib, at), report};
    case Watchdog::none: break;
    }
    // UndefinedBehaviorSanitizer ends the process without the death callback, with "runtime error:".
    if (s.sanitizer_reported || log.find("Sanitizer") != std::string::npos ||
        log.find("runtime error: ") != std::string::npos)
        return {FindingKind::sanitizer, log_signature(log), report};
    if (WIFSIGNALED(ending.status)) {
        const char* name = sigabbrev_np(WTERMSIG(ending.status));
        return {FindingKind::crash, fmt::format("signal SIG{}{}", name ? name : "?", at), report};
    }
    return {FindingKind::crash, fmt::format("the process exited with status {}{}", WEXITSTATUS(ending.status), at),
            report};
}

void install_handlers()
{
    std::signal(SIGUSR1, on_watchdog);
#ifdef __SANITIZE_ADDRESS__
    __sanitizer_set_death_callback([] {
        if (worker_state) worker_state->sanitizer_reported = true;
    });
#else
    // On an alternate stack, so that a stack overflow can still be reported.
    static std::vector<char> alternate(1 << 16);
    stack_t stack{};
    stack.ss_sp = alternate.data();
    stack.ss_size = alternate.size();
    sigaltstack(&stack, nullptr);
    void* warm_up[1];
    backtrace(warm_up, 1); // loads the unwinder now, not inside a handler
    struct sigaction action {};
    action.sa_handler = on_fatal_signal;
    action.sa_flags = SA_ONSTACK;
    for (int signal : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) sigaction(signal, &action, nullptr);
#endif
}

} // namespace

void prepare_process([[maybe_unused]] std::size_t limit_mib)
{
    install_handlers();
#ifndef __SANITIZE_ADDRESS__
    std::ifstream statm("/proc/self/statm");
    std::size_t pages = 0;
    if (!(statm >> pages)) return;
    const rlim_t bytes = pages * static_cast<rlim_t>(sysconf(_SC_PAGESIZE)) + (rlim_t{limit_mib} << 20);
    rlimit limit{};
    getrlimit(RLIMIT_AS, &limit);
    limit.rlim_cur = std::min(bytes, limit.rlim_max);
    setrlimit(RLIMIT_AS, &limit);
#endif
}

Outcome run_input(const Target& target, const std::string& input, const InputContext& context)
{
    try {
        return {target.run(input, context), std::nullopt};
    } catch (const RuleBroken& e) {
        return {{}, Finding{FindingKind::rule, e.rule(), e.what()}};
    } catch (const Error& e) {
        return {{},
                Finding{FindingKind::exception,
                        fmt::format("{} ({}): {}", exception_type_name(), error_kind_name(e.kind()),
                                    message_signature(e.what())),
                        fmt::format("{} ({}): {}", exception_type_name(), error_kind_name(e.kind()), e.what())}};
    } catch (const std::exception& e) {
        return {{},
                Finding{FindingKind::exception, exception_type_name() + ": " + message_signature(e.what()),
                        exception_type_name() + ": " + e.what()}};
    } catch (...) {
        return {{}, Finding{FindingKind::exception, exception_type_name(), exception_type_name()}};
    }
}

CampaignTotals run_campaign(const Target& target, std::span<const Seed> seeds, const CampaignOptions& o)
{
    std::size_t capacity = o.max_len;
    for (const auto& seed : seeds) capacity = std::max(capacity, seed.text.size());
    SharedMapping mapping(capacity);
    Shared& s = mapping.state();
    const auto log_path = o.scratch / fmt::format("{}.stderr", target.name);
    const int log_fd = open(log_path.c_str(), O_CREAT | O_TRUNC | O_RDWR | O_APPEND, 0644);
    if (log_fd < 0) throw Error(ErrorKind::environment, "harness_fuzz: cannot create " + log_path.string());
    const FindingStore store(o.findings);
    const std::int64_t start = now_ns();

    for (int deaths = 0;; ++deaths) {
        std::fflush(stdout);
        std::fflush(stderr);
        const pid_t pid = fork();
        if (pid < 0) throw Error(ErrorKind::environment, "harness_fuzz: fork failed");
        if (pid == 0) work(target, seeds, o, s, capacity, log_fd);
        const Ending ending = watch(pid, s, o, log_fd);
        if (WIFEXITED(ending.status) && WEXITSTATUS(ending.status) == 0 && s.finished) break;

        // The worker died. Attribute it to the input it was running (none when it died at exit,
        // e.g. of a leak report), and go on with the next input in a new worker.
        const bool running = s.started_ns != 0;
        const std::uint64_t index = s.current_input;
        const std::string input(s.input(), running ? s.input_size.load() : 0);
        const std::string origin = running ? origin_text(target, seeds, index, s.current_seed, o)
                                           : "no single input: reported when the worker exited";
        const InputContext context{seeds.empty() ? "" : seeds[s.current_seed].name, o.scratch};
        record(target, s, death_finding(ending, s, read_log(log_fd, s.log_offset), o), input, context, origin, store);
        if (running) ++(index < seeds.size() ? s.replayed : s.mutated);
        s.started_ns = 0;
        s.sanitizer_reported = false;
        s.log_offset = file_size(log_fd);
        if (s.finished || !running) break;
        if (deaths == 10000) {
            fmt::print(stderr, "harness_fuzz: {}: the worker died 10000 times; stopping this target\n", target.name);
            break;
        }
    }
    close(log_fd);

    CampaignTotals t;
    t.replayed = s.replayed;
    t.mutated = s.mutated;
    t.refused = s.refused;
    t.accepted = s.accepted;
    for (std::size_t k = 0; k < finding_kind_count; ++k) t.failing[k] = s.failing[k];
    for (std::size_t i = 0; i < std::min(s.distinct_count.load(), Shared::max_distinct); ++i)
        ++t.distinct[static_cast<std::size_t>(s.distinct_kind[i])];
    t.seconds = static_cast<double>(now_ns() - start) / 1e9;
    return t;
}

} // namespace harness::fuzz
