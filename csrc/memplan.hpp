// Tensor-level memory planning on a scheduled graph given as flat arrays: views that
// alias their parent, in-place reuse of dying inputs, concat operands produced inside the
// concat's buffer, output-ancestor pinning, then arena placement of the resulting buffers;
// and memory-aware scheduling.
#pragma once

#include <cstdint>
#include <vector>

#include "placement.hpp"

namespace rlx {

enum TensorKind : std::int64_t { kCompute = 0, kInput = 1, kParam = 2, kConstant = 3 };

// One entry per tensor (op result), indexed in schedule order of their producers.
struct TensorGraph {
    std::vector<std::int64_t> step;         // schedule step of the producing op
    std::vector<std::int64_t> size;         // slot bytes (width policy applied)
    std::vector<std::int64_t> kind;         // TensorKind
    std::vector<std::int64_t> alloc;        // nonzero: gets arena storage (or aliases one)
    std::vector<std::int64_t> view_parent;  // tensor it aliases, or -1
    std::vector<std::int64_t> view_offset;  // byte offset inside the parent
    std::vector<std::int64_t> dep_offsets;  // CSR: operands of the producing op
    std::vector<std::int64_t> deps;
    std::vector<std::int64_t> is_output;
    std::vector<std::int64_t> inplace_ok;   // producer may overwrite a dying same-size operand
    // The tensor whose producer copies tensor t verbatim to byte embed_offset[t] of its
    // result (t is an operand of a contiguous concat), or -1. A candidate only:
    // form_buffers decides whether t is produced there.
    std::vector<std::int64_t> embed_into;
    std::vector<std::int64_t> embed_offset;
    std::int64_t num_steps = 0;
};

struct PlanOptions {
    bool leaves_live_whole = true;      // params/constants span [0, num_steps]
    bool inputs_live_whole = true;      // inputs too; else they die after their last read
    bool pin_output_ancestors = false;  // everything an output depends on lives to the end
    bool inplace = true;
    bool concat_inplace = true;  // produce embed_into candidates inside their concat's buffer
    std::int64_t alignment = 64;
    Strategy strategy = Strategy::kBest;
    std::int64_t budget = kDefaultBudget;
};

struct TensorPlan {
    std::vector<std::int64_t> root;         // storage root (itself unless a view)
    std::vector<std::int64_t> root_offset;  // cumulative byte offset inside the root
    std::vector<std::int64_t> buffer;       // buffer id of the root, -1 when unallocated
    std::vector<std::int64_t> offset;       // arena offset of the tensor, -1 when none
    std::vector<std::int64_t> buf_size, buf_birth, buf_death, buf_offset;
    // A buffer embedded in another (a concat operand's, in the concat's) sits at
    // buf_parent_offset inside buf_parent and is not placed itself; -1 for the buffers
    // placement sees. `embedded` lists the embedded buffers in the order they were embedded.
    std::vector<std::int64_t> buf_parent, buf_parent_offset, embedded;
    std::int64_t arena_size = 0;
    std::int64_t peak = 0;           // lower bound: peak live bytes of the buffers
    std::int64_t inplace_count = 0;  // tensors that took a dying operand's buffer
};

// Liveness, aliasing and buffer formation without placement (buf_offset left empty).
TensorPlan form_buffers(const TensorGraph& g, const PlanOptions& opt);

// form_buffers + arena placement; with concat_inplace, the plan without embedding when
// that one places into a smaller arena.
TensorPlan plan_tensors(const TensorGraph& g, const PlanOptions& opt);

// Memory-aware scheduling. `op_of[t]` is the op producing tensor t; ops are numbered in
// source order. Leaf ops stay first, in source order. Candidate orders (source order, a
// depth-first order finishing one branch before the next, the same visiting the most
// memory-hungry operand first, and a greedy list schedule) are evaluated with
// form_buffers' peak; the lowest wins, source order on ties.
// The candidate orders by name, in the order of ScheduleResult::candidate_peaks.
inline constexpr const char* kScheduleCandidates[] = {"source", "depth-first",
                                                      "depth-first-heavy", "greedy"};

struct ScheduleResult {
    std::vector<std::int64_t> order;  // op indices in execution order
    std::int64_t source_peak = 0;
    std::int64_t best_peak = 0;
    std::vector<std::int64_t> candidate_peaks;  // one per kScheduleCandidates (greedy: small graphs)
    int winner = 0;                             // index into kScheduleCandidates
};

ScheduleResult schedule_memory(const TensorGraph& g, const std::vector<std::int64_t>& op_of,
                               std::int64_t num_ops, const PlanOptions& opt);

}  // namespace rlx
