#pragma once
// Running a function in a forked child and collecting what it returns.
//
// The runner forks worker processes that initialise CUDA. Neither NVRTC nor the driver may have
// run in the parent before such a fork (measured: after nvrtcCompileProgram in the parent, cuInit
// in a forked child fails with CUDA_ERROR_NOT_INITIALIZED), so the parent does both in children.

#include <functional>
#include <string>

namespace harness {

/// Forks, runs `body` in the child, and returns the bytes it returned. Throws Error when the child
/// dies before answering (the message names `what` and the signal or exit status).
std::string run_in_child(const std::string& what, const std::function<std::string()>& body);

} // namespace harness
