#pragma once
// Runs one case on the GPU: allocate and fill buffers, launch, verify against the reference,
// time, and read the kernel's resources. Used inside a worker process only.

#include "harness/compile/nvrtc_compiler.hxx"
#include "harness/core/case_result.hxx"
#include "harness/run/buffer_data.hxx"
#include "harness/run/gpu_session.hxx"
#include "harness/suite/sweep.hxx"

#include <map>
#include <memory>

namespace harness::run {

/// Options of a run that change how cases are measured.
struct RunOptions {
    bool hot_cache = false;  ///< skip the L2 flush between timed samples
    bool verify_only = false;  ///< no timing pass
};

/// Outputs of the reference variant at one parameter point, by buffer name.
struct ReferenceOutputs {
    std::size_t point = static_cast<std::size_t>(-1);
    std::map<std::string, Bytes> buffers;
};

/// Loads modules once per process and runs cases in the current context.
class CaseRunner {
public:
    CaseRunner(GpuSession& session, const suite::Suite& suite,
               const std::map<std::string, compile::CompiledModule>& modules, RunOptions options);
    ~CaseRunner();

    /// Runs `c`; the result records failures of the case itself. A CudaError that poisons the
    /// context propagates, since nothing more can run in this process.
    CaseResult run(const suite::Case& c, ReferenceOutputs& reference);

    /// Runs the reference variant at `c`'s point untimed and stores its outputs.
    void compute_reference(const suite::Case& c, ReferenceOutputs& reference);

private:
    struct Prepared;
    CUmodule module_for(const suite::VariantSpec& variant);
    std::unique_ptr<Prepared> prepare(const suite::VariantSpec& variant, const suite::Bindings& params);
    void launch_all(Prepared& p);
    std::map<std::string, Bytes> download_outputs(Prepared& p);
    void read_resources(const suite::VariantSpec& variant, Prepared& p, CaseResult& r);
    void time_case(const suite::VariantSpec& variant, const suite::Case& c, Prepared& p, CaseResult& r);

    GpuSession& session_;
    const suite::Suite& suite_;
    const std::map<std::string, compile::CompiledModule>& modules_;
    RunOptions options_;
    std::map<std::string, CUmodule> loaded_;
};

} // namespace harness::run
