#include "harness/run/buffer_data.hxx"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fmt/format.h>
#include <new>
#include <optional>
#include <sys/mman.h>
#include <thread>
#include <vector>

namespace harness::run {

// Buffers and scalars are written as the host holds integers; the GPU reads them the same way.
static_assert(std::endian::native == std::endian::little, "device data is little-endian");

namespace {

// splitmix64: a well-mixed 64-bit value from (seed, index), cheap and identical everywhere.
std::uint64_t mix(std::uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/// `index` wrapped into an integer type of fewer than 64 bits, as a C cast would wrap it.
double wrapped(suite::ElementType type, std::uint64_t index)
{
    const auto& info = suite::element_type_info(type);
    const unsigned width = 8 * static_cast<unsigned>(info.bytes);
    if (width == 64) return static_cast<double>(index);
    const std::uint64_t low = index & ((std::uint64_t{1} << width) - 1);
    if (info.kind == suite::ElementKind::signed_integer && low >> (width - 1))
        return static_cast<double>(static_cast<std::int64_t>(low) - (std::int64_t{1} << width));
    return static_cast<double>(low);
}

/// The value element `index` gets when drawn for a type (`floating` or not); to_bits then rounds
/// (and, for integers, clamps) it into the type.
double value_at(const suite::BufferSpec& spec, const ValueBounds& bounds, suite::ElementType type, bool floating,
                std::uint64_t index)
{
    switch (spec.init) {
    case suite::InitKind::zeros: return 0.0;
    case suite::InitKind::ones: return 1.0;
    case suite::InitKind::sequence: return floating ? static_cast<double>(index) : wrapped(type, index);
    case suite::InitKind::uniform: {
        const double unit = static_cast<double>(mix(spec.seed * 0x100000001b3ull ^ mix(index)) >> 11) * 0x1.0p-53;
        const double v = bounds.min + unit * (bounds.max - bounds.min);
        // Integer buffers draw integers in [min, max].
        return floating ? v : std::floor(bounds.min + unit * (bounds.max - bounds.min + 1.0));
    }
    }
    return 0.0;
}

// Buffers are converted a block at a time, with the type decided once per block: the common
// f32 and f64 buffers then cost a cast per element, as they did before other types.
constexpr std::size_t block_elements = 4096;
constexpr std::size_t parallel_elements = 1 << 20; ///< elements per thread worth starting one for
constexpr std::size_t max_fill_threads = 16;

} // namespace

ValueBounds value_bounds(const suite::BufferSpec& spec, const suite::Bindings& params)
{
    ValueBounds bounds{spec.min, spec.max};
    if (spec.min_expression) bounds.min = static_cast<double>(spec.min_expression->evaluate(params));
    if (spec.max_expression) bounds.max = static_cast<double>(spec.max_expression->evaluate(params));
    return bounds;
}

Bytes initial_contents(const suite::BufferSpec& spec, std::size_t count, const suite::Bindings& params,
                       unsigned threads)
{
    Bytes bytes(count * suite::element_size(spec.type));
    draw_contents(spec, count, params, bytes.data(), threads);
    return bytes;
}

void draw_contents(const suite::BufferSpec& spec, std::size_t count, const suite::Bindings& params, std::byte* out,
                   unsigned threads)
{
    const std::size_t size = suite::element_size(spec.type);
    // With round_to, the values are those a buffer of that type holds, kept exactly in this one.
    const suite::ElementType drawn_as = spec.round_to.value_or(spec.type);
    const bool floating = suite::is_floating(drawn_as);
    const ValueBounds bounds = value_bounds(spec, params);
    // The index expression with its parameters fixed once: only `i` changes from element to element.
    std::optional<suite::BoundExpression> index_of;
    if (spec.index) index_of = spec.index->bind(params, "i");
    // Elements [begin, end) in blocks; every element depends on its index alone, so the buffer is
    // the same however it is split.
    const auto fill = [&](std::size_t begin, std::size_t end) {
        double block[block_elements];
        for (std::size_t first = begin; first < end; first += block_elements) {
            const std::size_t n = std::min(block_elements, end - first);
            for (std::size_t k = 0; k < n; ++k) {
                std::uint64_t index = first + k;
                if (index_of) index = static_cast<std::uint64_t>(index_of->evaluate(static_cast<std::int64_t>(index)));
                block[k] = value_at(spec, bounds, drawn_as, floating, index);
            }
            if (spec.round_to)
                for (std::size_t k = 0; k < n; ++k) block[k] = suite::round_to_type(*spec.round_to, block[k]);
            suite::encode_elements(spec.type, block, n, out + first * size);
        }
    };
    // Large buffers are drawn on every core: a 64 M-element buffer takes seconds on one.
    if (threads == 0) threads = std::thread::hardware_concurrency();
    const std::size_t chunks =
        std::clamp<std::size_t>(std::min<std::size_t>(threads, count / parallel_elements), 1, max_fill_threads);
    if (chunks == 1) {
        fill(0, count);
        return;
    }
    // Whole blocks per piece, enough pieces to reach the last element.
    const std::size_t blocks = (count + block_elements - 1) / block_elements;
    const std::size_t per_chunk = (blocks + chunks - 1) / chunks * block_elements;
    std::vector<std::exception_ptr> errors(chunks);
    {
        std::vector<std::jthread> threads;
        for (std::size_t c = 0; c < chunks; ++c)
            threads.emplace_back([&, c] {
                try {
                    fill(std::min(count, c * per_chunk), std::min(count, (c + 1) * per_chunk));
                } catch (...) {
                    errors[c] = std::current_exception();
                }
            });
    }
    for (const auto& e : errors)
        if (e) std::rethrow_exception(e);
}

void StagingBuffer::Free::operator()(std::byte* p) const noexcept
{
    std::free(p);
}

StagingBuffer::~StagingBuffer()
{
    unpin();
}

void StagingBuffer::unpin()
{
    if (pinned_ && pinning_.unpin) pinning_.unpin(data_.get());
    pinned_ = 0;
}

std::span<std::byte> StagingBuffer::get(std::size_t bytes)
{
    if (bytes > size_) {
        constexpr std::size_t huge_page = std::size_t{2} << 20;
        // At least double, so that a sweep of growing sizes faults its pages in a few times, not
        // once per size.
        const std::size_t wanted = std::max(bytes, 2 * size_);
        const std::size_t size = (wanted + huge_page - 1) / huge_page * huge_page;
        unpin();
        data_.reset();
        size_ = 0;
        auto* memory = static_cast<std::byte*>(std::aligned_alloc(huge_page, size));
        if (!memory) throw std::bad_alloc();
        ::madvise(memory, size, MADV_HUGEPAGE); // advice only: without huge pages, small ones
        data_.reset(memory);
        size_ = size;
    }
    return {data_.get(), bytes};
}

void StagingBuffer::written(std::size_t bytes)
{
    if (!pinning_.pin || pinning_failed_ || bytes <= pinned_ || bytes > size_) return;
    // Whole pages, within the allocation (a multiple of 2 MiB).
    constexpr std::size_t page = 4096;
    const std::size_t range = std::min(size_, (bytes + page - 1) / page * page);
    unpin();
    if (pinning_.pin(data_.get(), range))
        pinned_ = range;
    else
        pinning_failed_ = true;
}

Comparison compare_buffers(suite::ElementType actual_type, const Bytes& actual, suite::ElementType expected_type,
                           const Bytes& expected, const suite::Tolerance& tol)
{
    Comparison c;
    const std::size_t actual_size = suite::element_size(actual_type);
    const std::size_t expected_size = suite::element_size(expected_type);
    c.actual_count = actual.size() / actual_size;
    c.expected_count = expected.size() / expected_size;
    const std::size_t n = std::min(c.actual_count, c.expected_count);
    double actual_block[block_elements], expected_block[block_elements];
    for (std::size_t first = 0; first < n; first += block_elements) {
        const std::size_t m = std::min(block_elements, n - first);
        suite::decode_elements(actual_type, actual.data() + first * actual_size, m, actual_block);
        suite::decode_elements(expected_type, expected.data() + first * expected_size, m, expected_block);
        for (std::size_t k = 0; k < m; ++k) {
            const double ad = actual_block[k], ed = expected_block[k];
            bool match;
            if (std::isnan(ed) || std::isnan(ad)) {
                match = std::isnan(ed) && std::isnan(ad);
            } else if (ad == ed) {
                match = true; // also an infinity the reference has too
            } else if (std::isinf(ad) || std::isinf(ed)) {
                match = false; // rel * |inf| would otherwise accept any value
            } else {
                const double err = std::fabs(ad - ed);
                const double rel = ed != 0.0 ? err / std::fabs(ed) : INFINITY;
                c.max_abs_error = std::max(c.max_abs_error, err);
                if (std::isfinite(rel)) c.max_rel_error = std::max(c.max_rel_error, rel);
                match = err <= tol.abs + tol.rel * std::fabs(ed);
            }
            if (!match) {
                if (c.ok) c.first_mismatch = first + k, c.actual_at_first = ad, c.expected_at_first = ed;
                c.ok = false;
                ++c.mismatches;
            }
        }
    }
    if (c.actual_count != c.expected_count) {
        if (c.ok) c.first_mismatch = n;
        c.ok = false;
    }
    return c;
}

Comparison compare_buffers(suite::ElementType type, const Bytes& actual, const Bytes& expected,
                           const suite::Tolerance& tolerance)
{
    return compare_buffers(type, actual, type, expected, tolerance);
}

std::string describe_mismatch(const std::string& buffer, const Comparison& c, std::size_t count)
{
    if (c.actual_count != c.expected_count)
        return fmt::format("{}: {} elements, the reference's has {}{}", buffer, c.actual_count, c.expected_count,
                           c.mismatches ? fmt::format("; {} of the first {} differ, first at index {} ({:.9g} vs "
                                                      "{:.9g})",
                                                      c.mismatches, std::min(c.actual_count, c.expected_count),
                                                      c.first_mismatch, c.actual_at_first, c.expected_at_first)
                                        : "");
    return fmt::format("{}: {} of {} elements differ from the reference; first at index {} ({:.9g} vs {:.9g}); "
                       "max abs error {:.3g}, max rel error {:.3g}",
                       buffer, c.mismatches, count, c.first_mismatch, c.actual_at_first, c.expected_at_first,
                       c.max_abs_error, c.max_rel_error);
}

Bytes scalar_bytes(suite::ElementType type, std::int64_t integer, double value)
{
    // Integers keep all 64 bits (a double would round i64 and u64 beyond 2^53): two's complement,
    // truncated to the type's width; the loader checked the range.
    const std::uint64_t bits =
        suite::is_integer(type) ? static_cast<std::uint64_t>(integer) : suite::to_bits(type, value);
    Bytes out(suite::element_size(type));
    std::memcpy(out.data(), &bits, out.size());
    return out;
}

} // namespace harness::run
