#pragma once
// The error of a kernel that does not compile, or that the checks before compiling refuse.

#include "harness/core/error.hxx"

#include <string>

namespace harness::compile {

/// A kernel that does not compile; what() holds the source, options and NVRTC's log.
class CompileError : public Error {
public:
    CompileError(const std::string& message, std::string log)
        : Error(ErrorKind::bad_input, message), log_(std::move(log))
    {
    }
    const std::string& log() const { return log_; }

private:
    std::string log_;
};

} // namespace harness::compile
