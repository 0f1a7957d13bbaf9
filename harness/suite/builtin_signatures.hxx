#pragma once
// What a suite may call as a built-in variant (`builtin: <name>`): the library routines' names and
// argument lists. run/builtins.hxx implements each one.

#include "harness/suite/element_type.hxx"

#include <cstddef>
#include <span>
#include <string>

namespace harness::suite {

/// A library routine callable as a variant, with `args:` in the order given here.
struct BuiltinSignature {
    const char* name;
    const char* signature; ///< the argument list, for messages
    const char* description;
    std::size_t buffer_args; ///< how many leading arguments are buffers
    std::size_t scalar_args; ///< how many scalars follow
    ElementType buffer_type; ///< the element type every buffer argument must have
};

/// All built-ins.
std::span<const BuiltinSignature> builtin_signatures();

/// The built-in called `name`, or nullptr.
const BuiltinSignature* find_builtin_signature(const std::string& name);

} // namespace harness::suite
