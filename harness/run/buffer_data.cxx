#include "harness/run/buffer_data.hxx"

#include <cmath>
#include <cstring>
#include <fmt/format.h>

namespace harness::run {

namespace {

// splitmix64: a well-mixed 64-bit value from (seed, index), cheap and identical everywhere.
std::uint64_t mix(std::uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

double value_at(const suite::BufferSpec& spec, std::uint64_t index)
{
    switch (spec.init) {
    case suite::InitKind::zeros: return 0.0;
    case suite::InitKind::ones: return 1.0;
    case suite::InitKind::sequence: return static_cast<double>(index);
    case suite::InitKind::uniform: {
        const double unit = static_cast<double>(mix(spec.seed * 0x100000001b3ull ^ mix(index)) >> 11) * 0x1.0p-53;
        const double v = spec.min + unit * (spec.max - spec.min);
        // Integer buffers draw integers in [min, max].
        return suite::is_floating(spec.type) ? v : std::floor(spec.min + unit * (spec.max - spec.min + 1.0));
    }
    }
    return 0.0;
}

template <typename T>
void fill(Bytes& bytes, const suite::BufferSpec& spec, std::size_t count, const suite::Bindings& params)
{
    bytes.resize(count * sizeof(T));
    T* out = reinterpret_cast<T*>(bytes.data());
    suite::Bindings with_i = params;
    for (std::size_t i = 0; i < count; ++i) {
        std::uint64_t index = i;
        if (spec.index) {
            with_i["i"] = static_cast<std::int64_t>(i);
            index = static_cast<std::uint64_t>(spec.index->evaluate(with_i));
        }
        out[i] = static_cast<T>(value_at(spec, index));
    }
}

template <typename T> Comparison compare_typed(const Bytes& actual, const Bytes& expected, const suite::Tolerance& tol)
{
    Comparison c;
    const std::size_t n = std::min(actual.size(), expected.size()) / sizeof(T);
    for (std::size_t i = 0; i < n; ++i) {
        T a, e;
        std::memcpy(&a, actual.data() + i * sizeof(T), sizeof(T));
        std::memcpy(&e, expected.data() + i * sizeof(T), sizeof(T));
        const double ad = static_cast<double>(a);
        const double ed = static_cast<double>(e);
        bool match;
        if (std::isnan(ed) || std::isnan(ad)) {
            match = std::isnan(ed) && std::isnan(ad);
        } else {
            const double err = std::fabs(ad - ed);
            const double rel = ed != 0.0 ? err / std::fabs(ed) : (err == 0.0 ? 0.0 : INFINITY);
            c.max_abs_error = std::max(c.max_abs_error, err);
            if (std::isfinite(rel)) c.max_rel_error = std::max(c.max_rel_error, rel);
            match = err <= tol.abs + tol.rel * std::fabs(ed);
        }
        if (!match) {
            if (c.ok) c.first_mismatch = i, c.actual_at_first = ad, c.expected_at_first = ed;
            c.ok = false;
            ++c.mismatches;
        }
    }
    return c;
}

} // namespace

Bytes initial_contents(const suite::BufferSpec& spec, std::size_t count, const suite::Bindings& params)
{
    Bytes bytes;
    switch (spec.type) {
    case suite::ElementType::f32: fill<float>(bytes, spec, count, params); break;
    case suite::ElementType::f64: fill<double>(bytes, spec, count, params); break;
    case suite::ElementType::i32: fill<std::int32_t>(bytes, spec, count, params); break;
    case suite::ElementType::u32: fill<std::uint32_t>(bytes, spec, count, params); break;
    case suite::ElementType::i64: fill<std::int64_t>(bytes, spec, count, params); break;
    case suite::ElementType::u64: fill<std::uint64_t>(bytes, spec, count, params); break;
    }
    return bytes;
}

Comparison compare_buffers(suite::ElementType type, const Bytes& actual, const Bytes& expected,
                           const suite::Tolerance& tolerance)
{
    Comparison c;
    switch (type) {
    case suite::ElementType::f32: c = compare_typed<float>(actual, expected, tolerance); break;
    case suite::ElementType::f64: c = compare_typed<double>(actual, expected, tolerance); break;
    case suite::ElementType::i32: c = compare_typed<std::int32_t>(actual, expected, tolerance); break;
    case suite::ElementType::u32: c = compare_typed<std::uint32_t>(actual, expected, tolerance); break;
    case suite::ElementType::i64: c = compare_typed<std::int64_t>(actual, expected, tolerance); break;
    case suite::ElementType::u64: c = compare_typed<std::uint64_t>(actual, expected, tolerance); break;
    }
    if (actual.size() != expected.size()) {
        c.ok = false;
        c.first_mismatch = std::min(actual.size(), expected.size()) / suite::element_size(type);
    }
    return c;
}

std::string describe_mismatch(const std::string& buffer, const Comparison& c, std::size_t count)
{
    return fmt::format("{}: {} of {} elements differ from the reference; first at index {} ({:.9g} vs {:.9g}); "
                       "max abs error {:.3g}, max rel error {:.3g}",
                       buffer, c.mismatches, count, c.first_mismatch, c.actual_at_first, c.expected_at_first,
                       c.max_abs_error, c.max_rel_error);
}

} // namespace harness::run
