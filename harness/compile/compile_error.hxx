#pragma once
// The error of a kernel that does not compile, or that the checks before compiling refuse.

#include "harness/core/error.hxx"

#include <string>

namespace harness::compile {

/// A kernel that does not compile; what() holds the source, options and NVRTC's log.
class CompileError : public Error {
public:
    CompileError(const std::string& message, std::string log, int nvrtc_status = 0,
                 ErrorKind kind = ErrorKind::bad_input)
        : Error(kind, message), log_(std::move(log)), nvrtc_status_(nvrtc_status)
    {
    }
    const std::string& log() const { return log_; }
    /// The nvrtcResult of the NVRTC call that failed (NVRTC_ERROR_OUT_OF_MEMORY, ...); 0
    /// (NVRTC_SUCCESS) where no NVRTC call failed (the include scan refused the kernel).
    int nvrtc_status() const { return nvrtc_status_; }

private:
    std::string log_;
    int nvrtc_status_ = 0;
};

} // namespace harness::compile
