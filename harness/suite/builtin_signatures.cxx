#include "harness/suite/builtin_signatures.hxx"

namespace harness::suite {

namespace {

const BuiltinSignature signatures[] = {
    {"cublas_sgemm", "[A, B, C, {i32: M}, {i32: N}, {i32: K}]",
     "cuBLAS SGEMM, row-major C[M x N] = A[M x K] * B[K x N] (fp32, no tensor cores)", 3, 3, ElementType::f32},
};

} // namespace

std::span<const BuiltinSignature> builtin_signatures()
{
    return signatures;
}

const BuiltinSignature* find_builtin_signature(const std::string& name)
{
    for (const auto& b : signatures)
        if (name == b.name) return &b;
    return nullptr;
}

} // namespace harness::suite
