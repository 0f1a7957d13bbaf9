// The `harness` command line tool.

#include "harness/cli/commands.hxx"

#include <csignal>

int main(int argc, char** argv)
{
    // Under a file-size limit (ulimit -f, a quota, a CI sandbox) a write past it would kill the
    // process by SIGXFSZ, leaving a temporary file and no message. Ignored, the write fails with
    // EFBIG instead, and the writer says which file and exits 3 (environment), removing its
    // temporary file.
    std::signal(SIGXFSZ, SIG_IGN);
    return harness::cli::run_tool({argv + 1, argv + argc});
}
