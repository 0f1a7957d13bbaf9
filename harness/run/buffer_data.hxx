#pragma once
// Host-side contents of buffers: deterministic initial values and comparison with the reference.

#include "harness/suite/suite.hxx"

#include <cstddef>
#include <string>
#include <vector>

namespace harness::run {

/// Raw bytes of a buffer on the host.
using Bytes = std::vector<std::byte>;

/// The initial contents of `spec` with `count` elements; values depend only on the spec and the
/// index, so every variant and every run sees the same data.
Bytes initial_contents(const suite::BufferSpec& spec, std::size_t count, const suite::Bindings& params);

/// The outcome of comparing one buffer with the reference.
struct Comparison {
    bool ok = true;
    std::size_t mismatches = 0;
    std::size_t first_mismatch = 0; ///< element index, valid when !ok
    double actual_at_first = 0.0;
    double expected_at_first = 0.0;
    double max_abs_error = 0.0;
    double max_rel_error = 0.0;
};

/// Compares element-wise: |actual - expected| <= abs + rel * |expected|; NaN only matches NaN.
Comparison compare_buffers(suite::ElementType type, const Bytes& actual, const Bytes& expected,
                           const suite::Tolerance& tolerance);

/// One line for a failed comparison: buffer, first index, values, count, largest errors.
std::string describe_mismatch(const std::string& buffer, const Comparison& c, std::size_t count);

} // namespace harness::run
