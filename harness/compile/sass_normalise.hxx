#pragma once
// A kernel's SASS reduced to what its code does, so that two builds of the same kernel compare
// equal and a changed one shows only what changed (core/sass_code.hxx): registers renamed in order
// of first use, per kernel and per kind (r0 r1 ... for R, ur for UR, p for P, up for UP, b for B;
// RZ, URZ, PT, UPT kept); instruction addresses, encodings and NOPs left out; `.reuse` flags (the
// scheduler's operand cache) dropped; branch and call targets, labels included, written as one
// placeholder.

#include "harness/compile/sass_disassembly.hxx"
#include "harness/core/sass_code.hxx"

#include <string>
#include <string_view>

namespace harness::compile {

/// `function`'s normalised code: kernel named by its symbol and files as the line information names
/// them (the caller names them as reports do).
SassKernelCode normalise_sass(const SassFunction& function);

/// The text of one instruction with its registers renamed through `names` (kind letter and number
/// -> new name, filled in order of first use).
std::string normalise_instruction(const SassInstruction& instruction, std::map<std::string, std::string>& names);

} // namespace harness::compile
