#pragma once
// The exit codes of the harness: a documented contract with CI systems (README, `harness help`).

namespace harness::cli {

enum ExitCode : int {
    exit_pass = 0,        ///< every case passed, nothing regressed (waived and improved metrics pass)
    exit_failure = 1,     ///< a regression, a failed `expect:` rule, a failed verification, or a case that
                          ///< faulted / hung / did not compile
    exit_bad_input = 2,   ///< the suite, a baseline or waiver file, or the command line is wrong
    exit_environment = 3, ///< no GPU or driver, no counter permission, files that cannot be written
};

} // namespace harness::cli
