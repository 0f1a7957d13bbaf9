#pragma once
// Splitting work between workers by expected cost: shards of a suite between CI jobs, cases
// between GPUs. Knows nothing of what the items are.

#include <cstddef>
#include <vector>

namespace harness {

/// The bin (0 to bins - 1) of each item, balanced by cost with the longest-processing-time rule:
/// items by cost, largest first, each onto the bin with the least total so far. Ties go to the
/// lower item index, and to the bin with fewer items, then the lower bin (items of no cost are
/// dealt out in turn), so the same costs give the same bins on every machine.
/// No bin's total exceeds the average by more than the largest cost (nor 4/3 of the optimum).
/// Throws Error (internal) for zero bins or a cost that is negative or not finite.
std::vector<std::size_t> partition_by_cost(const std::vector<double>& costs, std::size_t bins);

} // namespace harness
