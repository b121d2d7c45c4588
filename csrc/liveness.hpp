// Liveness intervals of tensors over a fixed schedule.
#pragma once

#include <cstdint>
#include <vector>

namespace rlx {

struct Intervals {
    std::vector<std::int64_t> birth;
    std::vector<std::int64_t> death;
};

// Closed live interval [birth, death] of every tensor.
//   producer_step[t]          step that writes tensor t (its birth)
//   consumer_offsets[t..t+1]  CSR slice of consumer_steps holding the steps reading t
//   is_output[t]              nonzero: t is a graph output and lives until num_steps
// A tensor nobody reads dies where it is born. Inputs are validated by the caller.
Intervals liveness_intervals(const std::vector<std::int64_t>& producer_step,
                             const std::vector<std::int64_t>& consumer_offsets,
                             const std::vector<std::int64_t>& consumer_steps,
                             const std::vector<std::int64_t>& is_output, std::int64_t num_steps);

}  // namespace rlx
