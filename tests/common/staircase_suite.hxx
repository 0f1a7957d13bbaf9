#pragma once
// A user's shallow staircase for the cliff-gate tests and benchmark: a row kernel scanned over its
// width W, rows padded to 32 floats, so that each row gains a 128-byte line every 32 floats.
// Parsed for the gate's carriers and points, never run.

#include <string>

namespace harness::test {

/// The staircase suite, named `suite`.
inline std::string staircase_suite_text(const std::string& suite)
{
    return "suite: " + suite + R"yaml(
archs: [sm_90]
params:
  W: {scan: [1024, 1279], pitch: "ceil_div(W, 32) * 128"}
reference: rows
buffers:
  x: {type: f32, count: 2048, init: uniform, seed: 1}
  y: {type: f32, count: 2048, role: out}
cliffs: {min_depth: 0.05}
variants:
  rows:
    source: ../kernels/memory/vector_add.cu
    entry: vector_add
    block: [256]
    grid: [8]
    args: [x, x, y, {i32: 2048}]
)yaml";
}

} // namespace harness::test
