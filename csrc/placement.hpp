// Arena placement: give every buffer an offset in one arena so that buffers whose
// closed live intervals [birth, death] intersect never overlap in bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace rlx {

enum class Strategy {
    kRlx,              // RLX's rule: stable size-descending order, lowest aligned offset
    kBestFit,          // size-descending order, smallest fitting gap (leading gap included)
    kGreedyConflicts,  // TVM USMP greedy_by_conflicts order, lowest offset
    kGreedyBreadth,    // TFLite greedy-by-breadth order, lowest offset
    kGreedyLifetime,   // longest lifetime first, lowest offset
    kBest,             // portfolio + deterministic hill climb, smallest arena wins
};

// Names accepted by the Python API, in the order of the Strategy enum.
const std::vector<std::string>& strategy_names();

// Returns false when `name` is not one of strategy_names().
bool parse_strategy(const std::string& name, Strategy* out);

// Default work budget of the `best` strategy, in steps. A step is one placed block
// examined while searching for an offset (plus one per placement), so the same
// input always gets the same amount of search, whatever the machine's speed.
inline constexpr std::int64_t kDefaultBudget = 30'000'000;

// Above this many placeable buffers `best` runs a reduced portfolio (size-descending
// first-fit and best-fit only) and skips the hill climb, so that 1e6-buffer graphs
// plan in about a second; the budget still bounds the work below it.
inline constexpr std::size_t kPortfolioLimit = 100'000;

// The alignment of a buffer's offset: the largest power of two dividing its size (its
// natural alignment), at most `alignment` -- gcd(size, alignment), `alignment` for an
// empty buffer. Buffers pack as tightly as their sizes allow, as a count of raw bytes
// assumes, yet their elements stay aligned (a size is a multiple of its element size),
// and so does every vector access, up to `alignment` wide, whose width divides the size
// (a buffer whose size is a multiple of `alignment` is aligned to it). A power of two.
inline std::int64_t slot_alignment(std::int64_t size, std::int64_t alignment) {
    const std::int64_t natural = size & -size;
    return size == 0 || natural > alignment ? alignment : natural;
}

struct Placement {
    std::vector<std::int64_t> offsets;
    std::int64_t arena_size = 0;
    std::int64_t steps = 0;  // work spent, in the unit of the budget
    std::string winner;      // the candidate that produced the plan (`best` only)
};

// Places every buffer, buffer i at a multiple of slot_alignment(sizes[i], alignment).
// Preconditions (checked by the binding layer): equal lengths, sizes >= 0,
// deaths[i] >= births[i], alignment a power of two, budget >= 0, and the aligned sizes
// sum to well below 2^62. Zero-size buffers get offset 0 and take no space. The result
// depends only on the inputs (no clocks, no hashing).
Placement place_intervals(const std::vector<std::int64_t>& sizes,
                          const std::vector<std::int64_t>& births,
                          const std::vector<std::int64_t>& deaths, std::int64_t alignment,
                          Strategy strategy, std::int64_t budget);

// Lower bound on any arena: the peak over time of the summed sizes of live buffers.
std::int64_t peak_live_bytes(const std::vector<std::int64_t>& sizes,
                             const std::vector<std::int64_t>& births,
                             const std::vector<std::int64_t>& deaths);

}  // namespace rlx
