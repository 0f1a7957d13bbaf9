#pragma once
// Host-side contents of buffers: deterministic initial values and comparison with the reference.

#include "harness/suite/suite.hxx"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace harness::run {

/// Raw bytes of a buffer on the host.
using Bytes = std::vector<std::byte>;

/// The range a `uniform` buffer's values are drawn in at one case's point.
struct ValueBounds {
    double min = 0.0;
    double max = 1.0;
};

/// `spec`'s min and max at the point `params`: each its number, or its expression's value there.
/// Throws suite::ExpressionError where an expression cannot be evaluated (the loader checked every
/// point of the suite already).
ValueBounds value_bounds(const suite::BufferSpec& spec, const suite::Bindings& params);

/// The initial contents of `spec` with `count` elements; values depend only on the spec and the
/// index, so every variant and every run sees the same data. Values are drawn in double for the
/// buffer's type (or its `round_to` type), then stored with suite::to_bits.
/// Large buffers are drawn on `threads` threads (0: one per core); the contents never depend on it.
Bytes initial_contents(const suite::BufferSpec& spec, std::size_t count, const suite::Bindings& params,
                       unsigned threads = 0);
/// The same contents written to `out`, which holds count * element_size(spec.type) bytes: a caller
/// that keeps one host buffer for every case touches its pages once.
void draw_contents(const suite::BufferSpec& spec, std::size_t count, const suite::Bindings& params, std::byte* out,
                   unsigned threads = 0);

/// Host memory that buffers' initial contents are drawn into, kept and reused by every case of a
/// worker. It grows as needed and is never zeroed: drawing writes every byte, and its threads fault
/// the pages in (huge pages where the kernel allows) instead of one thread zeroing them first.
/// Zeroing a fresh gigabyte took most of a second of each worker's first large case on an H100 host.
/// With pinning, the part written is page-locked, so that uploads from it skip the driver's
/// staging copy through its own page-locked memory.
class StagingBuffer {
public:
    /// Page-locks a written range of the buffer so that uploads from it go at full speed
    /// (false: it cannot, and is not asked again); `unpin` undoes it before the memory goes.
    struct Pinning {
        std::function<bool(std::byte*, std::size_t)> pin;
        std::function<void(std::byte*)> unpin;
    };

    StagingBuffer() = default;
    explicit StagingBuffer(Pinning pinning) : pinning_(std::move(pinning)) {}
    ~StagingBuffer();
    StagingBuffer(const StagingBuffer&) = delete;
    StagingBuffer& operator=(const StagingBuffer&) = delete;

    /// `bytes` of memory, valid until the next call; its previous contents are unspecified.
    std::span<std::byte> get(std::size_t bytes);
    /// The first `bytes` have been written (their pages are in): with pinning, they are page-locked
    /// unless they already are. Pages are locked after they are written, not before, so that the
    /// drawing threads fault them in rather than the locking call.
    void written(std::size_t bytes);
    std::size_t capacity() const { return size_; }
    std::size_t pinned() const { return pinned_; }

private:
    void unpin();
    struct Free {
        void operator()(std::byte* p) const noexcept;
    };
    std::unique_ptr<std::byte[], Free> data_;
    std::size_t size_ = 0;
    Pinning pinning_;
    std::size_t pinned_ = 0;
    bool pinning_failed_ = false;
};

/// The outcome of comparing one buffer with the reference.
struct Comparison {
    bool ok = true;
    std::size_t mismatches = 0;
    std::size_t first_mismatch = 0; ///< element index, valid when !ok
    double actual_at_first = 0.0;
    double expected_at_first = 0.0;
    double max_abs_error = 0.0;
    double max_rel_error = 0.0;
    std::size_t actual_count = 0; ///< elements of each side; they differ only for mismatched buffers
    std::size_t expected_count = 0;
};

/// Compares element-wise in double, each side read as its own type: |actual - expected| <= abs +
/// rel * |expected|; equal values match (infinities too), an infinity matches only itself, NaN only NaN.
Comparison compare_buffers(suite::ElementType actual_type, const Bytes& actual, suite::ElementType expected_type,
                           const Bytes& expected, const suite::Tolerance& tolerance);
/// Same, for two buffers of one type.
Comparison compare_buffers(suite::ElementType type, const Bytes& actual, const Bytes& expected,
                           const suite::Tolerance& tolerance);

/// One line for a failed comparison: buffer, first index, values, count, largest errors.
std::string describe_mismatch(const std::string& buffer, const Comparison& c, std::size_t count);

/// The bytes of a scalar kernel argument of `type` (element_size(type) of them, as the kernel's
/// parameter holds them): `integer` for an integer type, `value` rounded to nearest even for a
/// floating one.
Bytes scalar_bytes(suite::ElementType type, std::int64_t integer, double value);

} // namespace harness::run
