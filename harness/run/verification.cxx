#include "harness/run/verification.hxx"

#include "harness/core/metrics.hxx"
#include "harness/core/stopwatch.hxx"

#include <algorithm>

namespace harness::run {

double ensure_reference(const suite::Suite& suite, const suite::Case& c, ReferenceOutputs& reference,
                        const std::function<std::map<std::string, Bytes>()>& compute)
{
    if (reference.holds(suite, c.point)) return 0.0;
    const auto started = std::chrono::steady_clock::now();
    // Forgotten first: a compute that throws leaves no other point's outputs posing as this one's.
    reference = ReferenceOutputs{};
    reference.buffers = compute();
    reference.suite = &suite;
    reference.point = c.point;
    return seconds_since(started);
}

void verify_outputs(const suite::Suite& suite, const std::vector<CaseOutput>& outputs,
                    const ReferenceOutputs& reference, CaseResult& r)
{
    const auto reference_specs = suite.buffers_of(*suite.find_variant(suite.reference));
    double max_abs = 0, max_rel = 0;
    for (const auto& out : outputs) {
        const auto ref = reference.buffers.find(out.spec->name);
        if (ref == reference.buffers.end()) continue;
        const auto ref_spec = std::find_if(reference_specs.begin(), reference_specs.end(),
                                           [&](const suite::BufferSpec& x) { return x.name == out.spec->name; });
        const suite::ElementType ref_type = ref_spec != reference_specs.end() ? ref_spec->type : out.spec->type;
        const auto cmp = compare_buffers(out.spec->type, *out.data, ref_type, ref->second,
                                         suite::verification_tolerance(*out.spec, ref_type, suite.tolerance));
        max_abs = std::max(max_abs, cmp.max_abs_error);
        max_rel = std::max(max_rel, cmp.max_rel_error);
        if (!cmp.ok) {
            r.status = CaseStatus::failed_verification;
            if (!r.message.empty()) r.message += "; ";
            r.message += describe_mismatch(out.spec->name, cmp, out.count);
        }
    }
    r.set_metric(metric::verify_max_abs_error, max_abs);
    r.set_metric(metric::verify_max_rel_error, max_rel);
}

} // namespace harness::run
