// Shard cost search: for each op (a list of ways to cut it) and each worker
// configuration (worker rates, one link, residency, the local rate), pick the cut and
// the worker for every piece that minimises the predicted time, or none when running
// the op whole locally is at least as fast.
#pragma once

#include <cstdint>
#include <vector>

namespace rlx {

// Ops and their options, flattened. Op j owns options [op_offsets[j], op_offsets[j+1]);
// option i owns pieces [piece_offsets[i], piece_offsets[i+1]) of piece_elems.
// Every option of one op covers the same output, so local time uses the first option's
// total. The binding layer checks lengths, monotone offsets and value ranges.
struct ShardOptions {
    std::vector<std::int64_t> op_offsets;
    std::vector<std::int64_t> piece_offsets;
    std::vector<std::int64_t> piece_elems;
    std::vector<std::int64_t> sliced_bytes;
    std::vector<std::int64_t> shared_bytes;
    std::vector<std::int64_t> out_bytes;
    std::vector<double> op_cost;  // per op: work units per output element (1 = elements)
};

// Worker configurations, flattened: configuration c owns workers
// [worker_offsets[c], worker_offsets[c+1]) of worker_rates / worker_rankable.
struct ShardConfigs {
    std::vector<std::int64_t> worker_offsets;
    std::vector<double> worker_rates;  // work units (output elements when cost 1) per second
    std::vector<std::int64_t> worker_rankable;  // 0 = excluded from the search
    std::vector<double> bandwidth;     // bytes per second of the one link
    std::vector<double> latency;       // seconds, charged once per sharded run
    std::vector<std::int64_t> resident;  // shared operands already on every worker
    std::vector<double> local_rate;    // work units per second, whole op locally
};

// One result per (op, configuration), op-major. best = option index (global), or -1
// when the op stays whole; assign[k * max_pieces + p] = the worker (index within its
// configuration) that runs piece p, -1 past the option's piece count or when best < 0.
struct ShardDecisions {
    std::int64_t max_pieces = 0;
    std::vector<std::int64_t> best;
    std::vector<std::int64_t> assign;
    std::vector<double> compute;   // slowest piece, seconds (0 when best < 0)
    std::vector<double> transfer;  // bytes moved / bandwidth + latency (0 when best < 0)
    std::vector<double> total;     // compute + transfer, or local when best < 0
    std::vector<double> local;     // the whole op on the local device
};

// The search. Per option: pieces largest-first onto the rankable workers fastest-first
// (ties: lower index first), which minimises the slowest piece's time among all
// assignments of pieces to distinct workers. Bytes = sliced + out + shared * n unless
// resident. An option wins only with total strictly below local time and strictly
// below every earlier option, so ties keep the earlier (exact) cut.
ShardDecisions shard_search(const ShardOptions& options, const ShardConfigs& configs);

}  // namespace rlx
