#pragma once
// The exit codes of the harness: a documented contract with CI systems (README, `harness help`).

namespace harness::cli {

enum ExitCode : int {
    exit_pass = 0,         ///< every case passed
    exit_failure = 1,      ///< a regression, a failed verification, or a case that faulted / hung / did not compile
    exit_bad_input = 2,    ///< the suite file or the command line is wrong
    exit_environment = 3,  ///< no GPU or driver, no counter permission, files that cannot be written
};

} // namespace harness::cli
