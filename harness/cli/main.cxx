// The `harness` command line tool.

#include "harness/cli/commands.hxx"
#include "harness/cli/exit_codes.hxx"
#include "harness/core/error.hxx"

#include <fmt/format.h>

int main(int argc, char** argv)
{
    try {
        return harness::cli::dispatch({argv + 1, argv + argc});
    } catch (const harness::Error& e) {
        fmt::print(stderr, "harness: {}\n", e.what());
        switch (e.kind()) {
        case harness::ErrorKind::bad_input: return harness::cli::exit_bad_input;
        case harness::ErrorKind::environment: return harness::cli::exit_environment;
        case harness::ErrorKind::internal: return harness::cli::exit_environment;
        }
    } catch (const std::exception& e) {
        fmt::print(stderr, "harness: internal error: {}\n", e.what());
    }
    return harness::cli::exit_environment;
}
