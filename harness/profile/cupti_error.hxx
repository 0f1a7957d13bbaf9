#pragma once
// Checked CUPTI calls: a failure throws with the call's text and CUPTI's own message.

#include "harness/core/error.hxx"

#include <cstddef>
#include <cupti_result.h>
#include <string>

namespace harness::profile {

/// A failed CUPTI call. `result` tells permission and multiple-subscriber problems apart.
class CuptiError : public Error {
public:
    CuptiError(CUptiResult result, const std::string& message);
    CUptiResult result() const { return result_; }

private:
    CUptiResult result_;
};

/// Throws CuptiError unless `result` is CUPTI_SUCCESS.
void check(CUptiResult result, const char* call);

/// A CUPTI parameter struct, zeroed, with its size set (CUPTI checks it to stay compatible).
template <class Params> Params cupti_params(std::size_t struct_size)
{
    Params p{};
    p.structSize = struct_size;
    return p;
}

/// What a user should do about a CUPTI failure that is not a bug (permissions, another profiler).
std::string cupti_advice(CUptiResult result);

} // namespace harness::profile

#define CUPTI_CHECK(call_expr) ::harness::profile::check(call_expr, #call_expr)
