#pragma once
// Errors that cross stage boundaries. Each carries enough context to act on without a debugger.

#include <stdexcept>
#include <string>

namespace harness {

/// What went wrong, in the terms of the documented exit codes.
enum class ErrorKind {
    bad_input,   ///< the suite, a baseline or the command line is wrong (exit 2)
    environment, ///< no GPU, no driver, no counter permission (exit 3)
    internal,    ///< a bug or an unexpected failure of a library
};

/// An error with a kind; the message already names the file / line / call it concerns.
class Error : public std::runtime_error {
public:
    /// Control characters in `message` (a NUL or ESC read from a file) are kept visible, escaped
    /// (core/text.hxx), so that printing what() shows the whole message as it is.
    Error(ErrorKind kind, const std::string& message);
    ErrorKind kind() const { return kind_; }

private:
    ErrorKind kind_;
};

/// Bad input located in a file: "file:line:column: field: message".
class InputError : public Error {
public:
    InputError(const std::string& file, int line, int column, const std::string& field, const std::string& message);
};

} // namespace harness
