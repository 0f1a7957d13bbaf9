// The PTX target: parse_ptx over a module's text, then every kernel's accesses predicted at a small
// launch within a small budget. PTX from a module is untrusted: it must be refused as bad input or
// give figures that keep the model's own rules.

#include "harness/analysis/access_model.hxx"
#include "harness/core/error.hxx"
#include "rules.hxx"
#include "targets.hxx"

#include <cmath>
#include <fmt/format.h>

namespace harness::fuzz {

namespace {

/// A launch that fits any kernel: a buffer for every 64-bit parameter, 7 for every other one.
analysis::LaunchShape launch_for(const analysis::PtxKernel& kernel)
{
    analysis::LaunchShape launch;
    launch.grid = {3, 1, 1};
    launch.block = {64, 1, 1};
    std::size_t buffers = 0;
    for (const auto& p : kernel.params) {
        analysis::KernelArgument a;
        a.name = p.name;
        if (p.type == "u64" || p.type == "b64" || p.type == "s64") {
            a.kind = analysis::KernelArgument::Kind::buffer;
            a.value = analysis::model_buffer_address(buffers++);
        } else {
            a.value = 7;
        }
        launch.args.push_back(a);
    }
    return launch;
}

void check_prediction(const analysis::KernelPrediction& p)
{
    const auto finite = [](double v) { return std::isfinite(v) && v >= 0; };
    for (const auto& a : p.accesses) {
        if (!a.predicted) {
            if (a.reason.empty())
                throw RuleBroken("reason-for-unpredicted", "an access is not predicted, saying nothing");
            continue;
        }
        for (double v : {a.requests, a.sectors, a.ideal_sectors, a.wavefronts, a.ideal_wavefronts})
            if (!finite(v)) throw RuleBroken("figures-finite", fmt::format("{} at PTX line {}", a.opcode, a.ptx_line));
        if (a.ideal_sectors > a.sectors || a.ideal_wavefronts > a.wavefronts)
            throw RuleBroken("ideal-at-most-actual", fmt::format("{} at PTX line {}", a.opcode, a.ptx_line));
    }
    if (!p.complete && p.reasons.empty())
        throw RuleBroken("reason-for-unpredicted", "an incomplete prediction says nothing");
}

} // namespace

Reception run_ptx(const std::string& input, const InputContext&)
{
    analysis::PtxModule module;
    try {
        module = analysis::parse_ptx(input, "fuzz.ptx");
    } catch (const Error& e) {
        if (e.kind() != ErrorKind::bad_input) throw;
        return {false, e.what()};
    }
    analysis::EvaluationBudget budget;
    budget.instructions_per_warp = 1u << 14;
    budget.instructions_per_kernel = 1u << 17;
    for (const auto& kernel : module.kernels) {
        try {
            check_prediction(analysis::predict_accesses(module, kernel, launch_for(kernel), budget));
        } catch (const Error& e) {
            if (e.kind() != ErrorKind::bad_input) throw;
        }
    }
    return {true, ""};
}

std::span<const std::string_view> ptx_tokens()
{
    using namespace std::string_view_literals;
    // clang-format off
    static constexpr std::string_view tokens[] = {
        ".visible .entry "sv, ".param .u64 "sv, ".reg .b32 %r<9>;"sv, ".reg .pred %p<3>;"sv,
        ".shared .align 4 .b8 "sv, ".extern .shared "sv, ".loc 1 "sv, ".file 1 \"k.cu\""sv,
        "mov.u32 %r1, %tid.x;"sv, "mov.u32 %r2, %ctaid.x;"sv, "mad.lo.s32 %r3, %r2, %r1, %r1;"sv,
        "ld.param.u64 %rd1, [p0];"sv, "cvta.to.global.u64 %rd2, %rd1;"sv, "mul.wide.s32 %rd3, %r3, 4;"sv,
        "add.s64 %rd4, %rd2, %rd3;"sv, "ld.global.nc.v4.f32 {%f1, %f2, %f3, %f4}, [%rd4];"sv,
        "st.global.f32 [%rd4+4], %f1;"sv, "st.shared.u32 [%r1], %r2;"sv, "atom.global.add.u32 %r4, [%rd4], 1;"sv,
        "setp.ge.s32 %p1, %r3, %r2;"sv, "@%p1 bra $L__BB0_2;"sv, "$L__BB0_2:"sv, "bra.uni $L__BB0_1;"sv,
        "bar.sync 0;"sv, "ret;"sv, "}"sv, "{"sv, "[%rd4+-2147483648]"sv, "4294967295"sv,
    };
    // clang-format on
    return tokens;
}

} // namespace harness::fuzz
