// A parameter point whose cases run on several GPUs: the GPU that did not run the point's
// reference case computes the reference's outputs itself and checks its cases against them, as
// strictly as one GPU running the whole point would. The GPUs here are a fake device layer: each
// "kernel" is a host function writing the output buffer, the schedule and the checks are the run's.

#include "harness/core/metrics.hxx"
#include "harness/run/device_schedule.hxx"
#include "harness/run/verification.hxx"
#include "harness/suite/suite.hxx"
#include "test_paths.hxx"

#include <cstring>
#include <functional>
#include <gtest/gtest.h>

namespace split_verification_test {

using namespace harness;

namespace {

const char* suite_text = R"(suite: split
params:
  N: [1024, 4096]
reference: exact
tolerance: {rel: 1.0e-5, abs: 1.0e-6}
buffers:
  y: {type: f32, count: N, role: out}
variants:
  exact:
    source: ../kernels/memory/vector_add.cu
    entry: vector_add
    block: [256]
    grid: [ceil_div(N, 256)]
    args: [y, y, y, {i32: N}]
  close:
    source: ../kernels/memory/vector_add.cu
    entry: vector_add
    block: [256]
    grid: [ceil_div(N, 256)]
    args: [y, y, y, {i32: N}]
  off_by_one:
    source: ../kernels/memory/vector_add.cu
    entry: vector_add
    block: [256]
    grid: [ceil_div(N, 256)]
    args: [y, y, y, {i32: N}]
)";

/// What each variant writes into y[i] at a point of N elements; "off_by_one" is wrong only in
/// its last element.
float value_of(const std::string& variant, std::size_t i, std::size_t n)
{
    const float exact = static_cast<float>(i % 97) * 0.25f + 1.0f;
    if (variant == "close") return exact * (1.0f + 1e-7f);
    if (variant == "off_by_one" && i == n - 1) return exact + 1.0f;
    return exact;
}

run::Bytes outputs_of(const std::string& variant, std::size_t n)
{
    run::Bytes bytes(n * sizeof(float));
    for (std::size_t i = 0; i < n; ++i) {
        const float v = value_of(variant, i, n);
        std::memcpy(bytes.data() + i * sizeof v, &v, sizeof v);
    }
    return bytes;
}

/// One fake GPU: runs its cases in order as a worker does, keeping the reference's outputs of the
/// point at hand and computing them afresh where the reference case ran elsewhere.
struct FakeGpu {
    const suite::Suite& suite;
    run::ReferenceOutputs reference;
    std::size_t reference_runs = 0; ///< the reference computed here for another variant's case

    CaseResult run(const suite::Case& c)
    {
        const auto& variant = suite.variants[c.variant];
        const auto n = static_cast<std::size_t>(c.params.at("N"));
        CaseResult r;
        r.variant = variant.name;
        r.params_text = c.params_text;
        r.status = CaseStatus::passed;
        const run::Bytes out = outputs_of(variant.name, n);
        if (variant.name == suite.reference) {
            reference.suite = &suite;
            reference.point = c.point;
            reference.buffers = {{"y", out}};
            return r;
        }
        run::ensure_reference(suite, c, reference, [&] {
            ++reference_runs;
            return std::map<std::string, run::Bytes>{{"y", outputs_of(suite.reference, n)}};
        });
        run::verify_outputs(suite, {{&suite.buffers.front(), n, &out}}, reference, r);
        return r;
    }
};

} // namespace

TEST(SplitVerification, TheGpuWithoutThePointsReferenceCatchesAWrongOutput)
{
    const auto s = suite::parse_suite(suite_text, repo_root() / "suites" / "split.yaml");
    const auto cases = suite::expand_cases(s);
    ASSERT_EQ(cases.size(), 6u);
    // The reference costs most: on two GPUs, scheduled as a run schedules them (a GPU charged for
    // a point it must compute the reference of), each point's reference goes to one GPU and some
    // of its other cases to the other.
    std::vector<double> costs;
    std::vector<run::CasePoint> points;
    for (const auto& c : cases) {
        const bool reference = s.variants[c.variant].name == s.reference;
        costs.push_back(reference ? 10.0 : 4.0);
        points.push_back({c.point, reference, 0.05});
    }
    const auto schedule = run::schedule_on_devices(costs, 2, points);

    std::vector<CaseResult> results(cases.size());
    std::vector<std::size_t> gpu_of(cases.size());
    std::vector<FakeGpu> gpus{{s, {}, 0}, {s, {}, 0}};
    for (std::size_t g = 0; g < 2; ++g)
        for (const auto i : schedule.items[g]) {
            results[i] = gpus[g].run(cases[i]);
            gpu_of[i] = g;
        }

    std::size_t split_checks = 0;
    for (std::size_t i = 0; i < cases.size(); ++i) {
        const std::string& variant = s.variants[cases[i].variant].name;
        if (variant == s.reference) continue;
        const auto reference_case =
            std::find_if(cases.begin(), cases.end(),
                         [&](const suite::Case& c) {
                             return c.point == cases[i].point && s.variants[c.variant].name == s.reference;
                         }) -
            cases.begin();
        if (gpu_of[i] != gpu_of[reference_case]) ++split_checks;
        if (variant == "off_by_one") {
            EXPECT_EQ(results[i].status, CaseStatus::failed_verification) << cases[i].params_text;
            EXPECT_NE(results[i].message.find("y"), std::string::npos) << results[i].message;
            EXPECT_GT(results[i].metric(metric::verify_max_abs_error).value_or(0), 0.9);
        } else {
            EXPECT_EQ(results[i].status, CaseStatus::passed) << variant << " " << cases[i].params_text;
        }
    }
    EXPECT_GE(split_checks, 2u) << "some cases ran on the GPU that did not run their point's reference";
    EXPECT_GE(gpus[0].reference_runs + gpus[1].reference_runs, 1u);
}

TEST(SplitVerification, TheReferenceIsComputedOncePerPointAndNeverTakenFromAnotherPoint)
{
    const auto s = suite::parse_suite(suite_text, repo_root() / "suites" / "split.yaml");
    const auto cases = suite::expand_cases(s);
    run::ReferenceOutputs reference;
    int computed = 0;
    const auto compute = [&](std::size_t n) {
        ++computed;
        return std::map<std::string, run::Bytes>{{"y", outputs_of("exact", n)}};
    };
    for (const auto& c : cases)
        if (s.variants[c.variant].name != s.reference)
            run::ensure_reference(s, c, reference, [&] { return compute(static_cast<std::size_t>(c.params.at("N"))); });
    EXPECT_EQ(computed, 2) << "one computation per point";
    EXPECT_EQ(reference.buffers.at("y").size(), 4096 * sizeof(float)) << "the last point's outputs";

    // A computation that fails leaves nothing that could pass for the point's outputs.
    EXPECT_THROW(
        run::ensure_reference(s, cases.front(), reference,
                              []() -> std::map<std::string, run::Bytes> { throw std::runtime_error("fault"); }),
        std::runtime_error);
    EXPECT_TRUE(reference.buffers.empty());
    EXPECT_FALSE(reference.holds(s, cases.back().point));
}

} // namespace split_verification_test
