#pragma once
// Child processes: a function run in a forked child and what it returns, and a program run to
// completion with an argument vector (no shell) and what it printed.
//
// The runner forks worker processes that initialise CUDA. Neither NVRTC nor the driver may have
// run in the parent before such a fork (measured: after nvrtcCompileProgram in the parent, cuInit
// in a forked child fails with CUDA_ERROR_NOT_INITIALIZED), so the parent does both in children.

#include <filesystem>
#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <sys/types.h>
#include <utility>
#include <vector>

namespace harness {

/// What a program run to completion printed, and how it ended.
struct ProgramOutput {
    int exit_code = -1; ///< the exit status; -1 when a signal ended it
    std::string out;    ///< its standard output
    std::string err;    ///< its standard error
};

/// Runs `argv` (argv[0] looked up in PATH, never a shell) in `cwd` (empty: this process's folder),
/// standard input from /dev/null, and collects its output. With `capture` false the child writes to
/// this process's stdout and stderr instead. The child's environment is this process's without the
/// variables that would point git at another repository, index or work tree than the one named
/// (GIT_DIR, GIT_WORK_TREE, ...). Throws Error(environment) when the program cannot be started
/// (not installed).
ProgramOutput run_program(const std::vector<std::string>& argv, const std::filesystem::path& cwd = {},
                          bool capture = true);

/// Forks a child that runs `body` with a pipe's write end and exits with `body`'s value (`thrown`
/// when it throws); returns the child's pid and the pipe's read end, which the caller closes and
/// whose child it reaps. The building block of the rules below, for a caller that follows several
/// children at once.
std::pair<pid_t, int> fork_with_pipe(const std::string& what, const std::function<int(int fd)>& body, int thrown);

/// Forks, runs `body` in the child, and returns the bytes it returned. Throws Error when the child
/// dies before answering (the message names `what` and the signal or exit status).
std::string run_in_child(const std::string& what, const std::function<std::string()>& body);

/// Runs `body` in a forked child and returns what it returned, as run_in_child does; where `body`
/// sets `stay`, the child then stays, idle and holding nothing the parent had open, until this
/// process ends or end_staying_child() is called. At most one child stays: a later one ends the
/// one before it. A child that started the CUDA driver and stays makes every later driver start on
/// the host cheaper (see probe_devices).
std::string run_in_staying_child(const std::string& what, const std::function<std::string(bool& stay)>& body);

/// The staying child's process id, or 0 when none stays.
int staying_child();

/// Ends the staying child, if any, and reaps it.
void end_staying_child();

/// Writes all of `bytes` to a child's or a parent's pipe; stops quietly where the reader is gone.
void write_all(int fd, const std::string& bytes);

/// How a child's wait status reads in a message: "killed by signal 11 (Segmentation fault)",
/// "exited with status 3".
std::string describe_exit(int status);

/// Sends one message, a line of JSON, over a worker's event pipe. A parent that is gone is not an
/// error: the worker has no one left to tell.
void write_event(int fd, const nlohmann::json& message);

/// How a followed child ended.
struct ChildEnd {
    bool timed_out = false; ///< it missed a deadline and was killed
    int status = 0;         ///< its wait status
};

/// A worker child followed by its events: forks, runs `body` in the child with the write end of
/// the event pipe (it sends with write_event; the child exits with what `body` returns, 1 when it
/// throws), and passes each message to `on_message` in the parent. The child must send its first
/// message within `first_deadline_s`; `on_message` returns how long the child may take until its
/// next one, or nullopt to keep the deadline as it was. A child that misses its deadline is killed.
/// Returns once the child has ended and been reaped.
ChildEnd follow_child(const std::function<int(int fd)>& body, double first_deadline_s,
                      const std::function<std::optional<double>(const nlohmann::json&)>& on_message);

} // namespace harness
