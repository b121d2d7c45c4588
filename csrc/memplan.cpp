#include "memplan.hpp"

#include <algorithm>
#include <iterator>
#include <numeric>
#include <string>

#include "checked_array.hpp"

namespace rlx {

using i64 = std::int64_t;

namespace {

// Tensors in execution order: by step, then by index (results of one op keep their order).
std::vector<i64> step_order(const TensorGraph& g) {
    std::vector<i64> order(g.step.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](i64 a, i64 b) { return g.step[a] < g.step[b]; });
    return order;
}

struct Intervals {
    std::vector<i64> id, size, birth, death;
};

// The buffers placement sees: all but those embedded in another buffer.
Intervals placed_buffers(const TensorPlan& p) {
    Intervals out;
    for (std::size_t b = 0; b < p.buf_size.size(); ++b) {
        if (p.buf_parent[b] >= 0) continue;
        out.id.push_back(static_cast<i64>(b));
        out.size.push_back(p.buf_size[b]);
        out.birth.push_back(p.buf_birth[b]);
        out.death.push_back(p.buf_death[b]);
    }
    return out;
}

// Live bytes per step under closed-interval range updates, with the peak over all steps
// (a segment tree whose nodes hold their subtree's max plus the adds covering the node).
class LiveProfile {
  public:
    explicit LiveProfile(i64 steps)
        : n_(std::max<i64>(steps, 1)), max_(4 * n_, 0), pending_(4 * n_, 0) {}
    void add(i64 lo, i64 hi, i64 bytes) {
        if (lo <= hi) add(1, 0, n_ - 1, lo, hi, bytes);
    }
    i64 peak() const { return max_[1]; }

  private:
    void add(std::size_t node, i64 l, i64 r, i64 lo, i64 hi, i64 bytes) {
        if (hi < l || r < lo) return;
        if (lo <= l && r <= hi) {
            max_[node] += bytes;
            pending_[node] += bytes;
            return;
        }
        const i64 mid = l + (r - l) / 2;
        add(2 * node, l, mid, lo, hi, bytes);
        add(2 * node + 1, mid + 1, r, lo, hi, bytes);
        max_[node] = std::max(max_[2 * node], max_[2 * node + 1]) + pending_[node];
    }
    i64 n_;
    std::vector<i64> max_;
    std::vector<i64> pending_;
};

// One concat operand whose buffer may move inside the concat's buffer.
struct EmbedCandidate {
    i64 into;    // the concat's buffer
    i64 buffer;  // the operand's buffer (an in-place chain ending in the operand)
    i64 offset;  // the operand's byte offset inside the concat's result
    i64 step;    // the concat's step, where the operand's buffer dies
};

// The operands of tensor t (just given its buffer) that t's producer copies verbatim into
// its bytes (embed_into[d] == t) and that can safely be produced there: d is a compute
// tensor (not a view, not a graph output or pinned) whose storage dies at t, read by t
// once and directly. Earlier readers do not matter: until t, d's bytes are d's alone, and
// t rewrites them with themselves. (So a DenseNet concat, read by the next layer and then
// by the next concat, becomes a prefix of that concat.)
void embed_candidates(const TensorGraph& g, const PlanOptions& opt, i64 t,
                      const std::vector<i64>& death, const TensorPlan& p,
                      const std::vector<char>& has_leaf, std::vector<EmbedCandidate>* out) {
    const i64 into = p.buffer[t];
    if (into < 0 || p.buf_size[into] != g.size[t]) return;
    const i64 first = g.dep_offsets[t], last = g.dep_offsets[t + 1];
    for (i64 i = first; i < last; ++i) {
        const i64 d = g.deps[i];
        if (g.embed_into[d] != t || g.view_parent[d] >= 0 || g.kind[d] != kCompute) continue;
        if (death[d] != g.step[t]) continue;
        const auto same_root = [&](i64 dep) { return p.root[dep] == d; };
        if (std::count_if(g.deps.begin() + first, g.deps.begin() + last, same_root) != 1) {
            continue;
        }
        // Slots keep their alignment: d's must divide t's and d's offset inside t.
        const i64 align = slot_alignment(g.size[d], opt.alignment);
        if (g.embed_offset[d] % align != 0) continue;
        if (slot_alignment(g.size[t], opt.alignment) % align != 0) continue;
        const i64 b = p.buffer[d];
        if (b < 0 || b == into || has_leaf[b]) continue;
        if (p.buf_size[b] != g.size[d] || p.buf_death[b] != g.step[t]) continue;
        out->push_back({into, b, g.embed_offset[d], g.step[t]});
    }
}

// Embedding moves the concat's buffer's birth back to the earliest embedded operand's:
// it saves the operands' bytes where they meet the concat, but holds the concat's whole
// buffer meanwhile. Per concat, in execution order (an inner concat before the one
// embedding it), embed the k latest-born candidates for the k that gives the lowest
// peak, then the most embedded; k = 0 keeps the plan, so the peak never rises.
void choose_embeddings(const std::vector<EmbedCandidate>& cands, TensorPlan* p, i64 num_steps) {
    if (cands.empty()) return;
    LiveProfile live(num_steps + 1);
    for (std::size_t b = 0; b < p->buf_size.size(); ++b) {
        live.add(p->buf_birth[b], p->buf_death[b], p->buf_size[b]);
    }
    std::size_t begin = 0;
    while (begin < cands.size()) {
        std::size_t end = begin;
        while (end < cands.size() && cands[end].into == cands[begin].into &&
               cands[end].step == cands[begin].step) {
            ++end;
        }
        std::vector<EmbedCandidate> group(cands.begin() + static_cast<std::ptrdiff_t>(begin),
                                          cands.begin() + static_cast<std::ptrdiff_t>(end));
        std::stable_sort(group.begin(), group.end(),
                         [&](const EmbedCandidate& a, const EmbedCandidate& b) {
                             return p->buf_birth[a.buffer] > p->buf_birth[b.buffer];
                         });
        const i64 into = group.front().into;
        const i64 size = p->buf_size[into];
        const i64 birth0 = p->buf_birth[into];
        // Try k = 1, 2, ... on the profile, then undo back to the best k.
        std::size_t best_k = 0;
        i64 best_peak = live.peak();
        i64 birth = birth0;
        std::vector<i64> births{birth0};
        for (std::size_t k = 0; k < group.size(); ++k) {
            const i64 b = group[k].buffer;
            live.add(p->buf_birth[b], p->buf_death[b], -p->buf_size[b]);
            const i64 earlier = std::min(birth, p->buf_birth[b]);
            live.add(earlier, birth - 1, size);
            birth = earlier;
            births.push_back(birth);
            if (live.peak() <= best_peak) {
                best_peak = live.peak();
                best_k = k + 1;
            }
        }
        for (std::size_t k = group.size(); k > best_k; --k) {
            const i64 b = group[k - 1].buffer;
            live.add(births[k], births[k - 1] - 1, -size);
            live.add(p->buf_birth[b], p->buf_death[b], p->buf_size[b]);
        }
        for (std::size_t k = 0; k < best_k; ++k) {
            const i64 b = group[k].buffer;
            p->buf_parent[b] = into;
            p->buf_parent_offset[b] = group[k].offset;
            p->embedded.push_back(b);
        }
        p->buf_birth[into] = births[best_k];
        begin = end;
    }
}

}  // namespace

TensorPlan form_buffers(const TensorGraph& g, const PlanOptions& opt) {
    const std::size_t n = g.step.size();
    TensorPlan p;
    p.root.assign(n, -1);
    p.root_offset.assign(n, 0);
    p.buffer.assign(n, -1);
    p.offset.assign(n, -1);
    const std::vector<i64> order = step_order(g);

    // Storage roots: a view's bytes belong to its parent's root.
    for (i64 t : order) {
        const i64 parent = g.view_parent[t];
        if (parent < 0) {
            p.root[t] = t;
        } else {
            p.root[t] = p.root[parent];
            p.root_offset[t] = p.root_offset[parent] + g.view_offset[t];
        }
    }

    // Closed live intervals of the roots: written at the producer's step, live until the
    // last step reading the root or any view of it.
    std::vector<i64> birth(g.step), death(g.step);
    for (std::size_t t = 0; t < n; ++t) {
        for (i64 i = g.dep_offsets[t]; i < g.dep_offsets[t + 1]; ++i) {
            const i64 r = p.root[g.deps[i]];
            death[r] = std::max(death[r], g.step[t]);
        }
    }
    std::vector<char> pinned(n, 0);
    for (std::size_t t = 0; t < n; ++t) {
        if (g.is_output[t] != 0) pinned[p.root[t]] = 1;
        if (g.kind[t] != kCompute && p.root[t] == static_cast<i64>(t)) {
            birth[t] = 0;  // leaves are loaded before the first step
            const bool whole = g.kind[t] == kInput ? opt.inputs_live_whole : opt.leaves_live_whole;
            if (whole) pinned[t] = 1;
        }
    }
    if (opt.pin_output_ancestors) {
        std::vector<char> seen(n, 0);
        std::vector<i64> stack;
        for (std::size_t t = 0; t < n; ++t) {
            if (g.is_output[t] != 0) stack.push_back(static_cast<i64>(t));
        }
        while (!stack.empty()) {
            const i64 t = stack.back();
            stack.pop_back();
            if (seen[t]) continue;
            seen[t] = 1;
            pinned[p.root[t]] = 1;
            for (i64 i = g.dep_offsets[t]; i < g.dep_offsets[t + 1]; ++i) stack.push_back(g.deps[i]);
        }
    }
    for (std::size_t t = 0; t < n; ++t) {
        if (pinned[t]) death[t] = g.num_steps;
    }

    // Buffers, formed in execution order. An in-place candidate takes the buffer of an
    // operand whose storage dies at this very step, when sizes match exactly and the
    // operand is a compute tensor read from its start.
    std::vector<i64> claimed_at;  // per buffer: the step whose op last claimed it in place
    std::vector<char> has_leaf;   // per buffer: a leaf lives in it (loaded before step 0)
    std::vector<EmbedCandidate> cands;
    for (i64 t : order) {
        if (g.view_parent[t] >= 0 || g.alloc[t] == 0) continue;
        const bool leaf = g.kind[t] != kCompute;
        if (g.size[t] == 0 && !leaf) continue;
        bool merged = false;
        if (opt.inplace && g.inplace_ok[t] != 0 && !leaf) {
            for (i64 i = g.dep_offsets[t]; i < g.dep_offsets[t + 1] && !merged; ++i) {
                const i64 d = g.deps[i];
                const i64 r = p.root[d];
                const i64 b = p.buffer[r];
                // An input loaded afresh every run may be overwritten once it is dead.
                const bool writable = g.kind[r] == kCompute ||
                                      (g.kind[r] == kInput && !opt.inputs_live_whole);
                if (b < 0 || !writable || p.root_offset[d] != 0) continue;
                if (g.size[d] != g.size[t] || p.buf_size[b] != g.size[t]) continue;
                if (p.buf_death[b] != g.step[t] || claimed_at[b] == g.step[t]) continue;
                p.buffer[t] = b;
                p.buf_death[b] = death[t];
                claimed_at[b] = g.step[t];
                ++p.inplace_count;
                merged = true;
            }
        }
        if (!merged) {
            p.buffer[t] = static_cast<i64>(p.buf_size.size());
            p.buf_size.push_back(g.size[t]);
            p.buf_birth.push_back(birth[t]);
            p.buf_death.push_back(death[t]);
            p.buf_parent.push_back(-1);
            p.buf_parent_offset.push_back(0);
            claimed_at.push_back(-1);
            has_leaf.push_back(leaf ? 1 : 0);
        }
        if (opt.concat_inplace) embed_candidates(g, opt, t, death, p, has_leaf, &cands);
    }
    for (std::size_t t = 0; t < n; ++t) p.buffer[t] = p.buffer[p.root[t]];
    // Buffers are final now (in-place claims only extend a buffer at its death step).
    choose_embeddings(cands, &p, g.num_steps);
    const Intervals top = placed_buffers(p);
    p.peak = peak_live_bytes(top.size, top.birth, top.death);
    return p;
}

namespace {

void place(const TensorGraph& g, const PlanOptions& opt, TensorPlan* p) {
    const Intervals top = placed_buffers(*p);
    Placement placed =
        place_intervals(top.size, top.birth, top.death, opt.alignment, opt.strategy, opt.budget);
    p->buf_offset.assign(p->buf_size.size(), -1);
    for (std::size_t k = 0; k < top.id.size(); ++k) p->buf_offset[top.id[k]] = placed.offsets[k];
    // A buffer is embedded while its parent is still unembedded, so in reverse embedding
    // order every parent's offset is known before its children's.
    for (auto it = p->embedded.rbegin(); it != p->embedded.rend(); ++it) {
        p->buf_offset[*it] = p->buf_offset[p->buf_parent[*it]] + p->buf_parent_offset[*it];
    }
    p->arena_size = placed.arena_size;
    for (std::size_t t = 0; t < g.step.size(); ++t) {
        const i64 b = p->buffer[t];
        if (b >= 0) p->offset[t] = p->buf_offset[b] + p->root_offset[t];
    }
}

}  // namespace

TensorPlan plan_tensors(const TensorGraph& g, const PlanOptions& opt) {
    TensorPlan p = form_buffers(g, opt);
    place(g, opt, &p);
    // Embedding never raises the peak, but the placement heuristics can still land a few
    // bytes higher on the changed intervals: keep the plan without it when that is smaller.
    // No plan is below its own peak, so that plan is only searched when its peak leaves
    // room under this one's arena (a search that cannot win would spend its whole budget
    // looking for a bound it cannot reach).
    if (!p.embedded.empty()) {
        PlanOptions plain = opt;
        plain.concat_inplace = false;
        TensorPlan q = form_buffers(g, plain);
        if (q.peak >= p.arena_size) return p;
        place(g, plain, &q);
        if (q.arena_size < p.arena_size) return q;
    }
    return p;
}

// ---------------------------------------------------------------------------------
// Memory-aware scheduling
// ---------------------------------------------------------------------------------

namespace {

struct OpGraph {
    std::vector<std::vector<i64>> deps;   // producer ops read by each op, deduplicated
    std::vector<std::vector<i64>> users;  // ops reading each op
    std::vector<char> leaf;
    std::vector<i64> bytes;  // bytes of the op's own (non-view) results
};

OpGraph build_op_graph(const TensorGraph& g, const std::vector<i64>& op_of, i64 num_ops) {
    OpGraph o;
    o.deps.resize(num_ops);
    o.users.resize(num_ops);
    o.leaf.assign(num_ops, 1);
    o.bytes.assign(num_ops, 0);
    for (std::size_t t = 0; t < g.step.size(); ++t) {
        const i64 op = op_of[t];
        if (g.kind[t] == kCompute) o.leaf[op] = 0;
        if (g.view_parent[t] < 0 && g.alloc[t] != 0) o.bytes[op] += g.size[t];
        for (i64 i = g.dep_offsets[t]; i < g.dep_offsets[t + 1]; ++i) {
            const i64 src = op_of[g.deps[i]];
            if (src != op) o.deps[op].push_back(src);
        }
    }
    for (i64 op = 0; op < num_ops; ++op) {
        auto& d = o.deps[op];
        std::sort(d.begin(), d.end());
        d.erase(std::unique(d.begin(), d.end()), d.end());
        for (i64 src : d) o.users[src].push_back(op);
    }
    return o;
}

// Depth-first post-order from the output ops: each op right after its operands, one
// branch finished before the next. `heavy_first` visits the operand whose subgraph holds
// the most bytes first (Sethi-Ullman's rule for registers, applied to tensors).
std::vector<i64> dfs_order(const OpGraph& o, const std::vector<i64>& roots, bool heavy_first) {
    const i64 n = static_cast<i64>(o.deps.size());
    std::vector<i64> weight(n, 0);
    if (heavy_first) {
        for (i64 op = 0; op < n; ++op) {
            i64 w = o.bytes[op];
            for (i64 d : o.deps[op]) w = std::max(w, weight[d] + o.bytes[op]);
            weight[op] = w;
        }
    }
    std::vector<i64> order;
    order.reserve(n);
    std::vector<char> state(n, 0);  // 0 new, 1 on stack, 2 emitted
    for (i64 op = 0; op < n; ++op) {
        if (o.leaf[op]) {
            order.push_back(op);
            state[op] = 2;
        }
    }
    std::vector<std::pair<i64, std::size_t>> stack;
    auto visit = [&](i64 start) {
        if (state[start] != 0) return;
        stack.emplace_back(start, 0);
        state[start] = 1;
        while (!stack.empty()) {
            auto& [op, next] = stack.back();
            std::vector<i64> deps = o.deps[op];
            if (heavy_first) {
                std::stable_sort(deps.begin(), deps.end(),
                                 [&](i64 a, i64 b) { return weight[a] > weight[b]; });
            }
            if (next < deps.size()) {
                const i64 d = deps[next++];
                if (state[d] == 0) {
                    state[d] = 1;
                    stack.emplace_back(d, 0);
                }
                continue;
            }
            order.push_back(op);
            state[op] = 2;
            stack.pop_back();
        }
    };
    for (i64 r : roots) visit(r);
    for (i64 op = 0; op < n; ++op) visit(op);  // dead ops, in source order
    return order;
}

// Greedy list schedule: among ready ops, run the one that allocates the least net memory
// (its bytes minus the bytes of operands it reads last); ties to the lowest index.
std::vector<i64> greedy_order(const OpGraph& o) {
    const i64 n = static_cast<i64>(o.deps.size());
    std::vector<i64> pending(n, 0), remaining_users(n, 0), order;
    order.reserve(n);
    std::vector<i64> ready;
    for (i64 op = 0; op < n; ++op) {
        pending[op] = static_cast<i64>(o.deps[op].size());
        remaining_users[op] = static_cast<i64>(o.users[op].size());
    }
    for (i64 op = 0; op < n; ++op) {
        if (o.leaf[op]) {
            order.push_back(op);
            for (i64 u : o.users[op]) --pending[u];
        }
    }
    for (i64 op = 0; op < n; ++op) {
        if (!o.leaf[op] && pending[op] == 0) ready.push_back(op);
    }
    while (!ready.empty()) {
        std::size_t best = 0;
        i64 best_net = 0;
        for (std::size_t k = 0; k < ready.size(); ++k) {
            const i64 op = ready[k];
            i64 net = o.bytes[op];
            for (i64 d : o.deps[op]) {
                if (!o.leaf[d] && remaining_users[d] == 1) net -= o.bytes[d];
            }
            if (k == 0 || net < best_net || (net == best_net && op < ready[best])) {
                best = k;
                best_net = net;
            }
        }
        const i64 op = ready[best];
        ready.erase(ready.begin() + static_cast<std::ptrdiff_t>(best));
        order.push_back(op);
        for (i64 d : o.deps[op]) --remaining_users[d];
        for (i64 u : o.users[op]) {
            if (--pending[u] == 0) ready.push_back(u);
        }
    }
    return order;
}

i64 peak_of(const TensorGraph& g, const std::vector<i64>& op_of, const std::vector<i64>& order,
            const PlanOptions& opt) {
    TensorGraph h = g;
    std::vector<i64> pos(order.size());
    for (std::size_t k = 0; k < order.size(); ++k) pos[order[k]] = static_cast<i64>(k);
    for (std::size_t t = 0; t < g.step.size(); ++t) h.step[t] = pos[op_of[t]];
    h.num_steps = static_cast<i64>(order.size());
    return form_buffers(h, opt).peak;
}

}  // namespace

ScheduleResult schedule_memory(const TensorGraph& g, const std::vector<i64>& op_of,
                               i64 num_ops, const PlanOptions& opt) {
    const OpGraph o = build_op_graph(g, op_of, num_ops);
    std::vector<i64> roots;
    for (std::size_t t = 0; t < g.step.size(); ++t) {
        if (g.is_output[t] != 0) roots.push_back(op_of[t]);
    }
    std::vector<std::vector<i64>> candidates;
    std::vector<i64> source(num_ops);
    std::iota(source.begin(), source.end(), 0);
    // Source order with the leaves first (they are preloaded anyway).
    std::stable_partition(source.begin(), source.end(), [&](i64 op) { return o.leaf[op] != 0; });
    candidates.push_back(source);
    candidates.push_back(dfs_order(o, roots, false));
    candidates.push_back(dfs_order(o, roots, true));
    // The list scheduler scans the ready set per step; skip it on very large graphs.
    if (num_ops <= 50'000) candidates.push_back(greedy_order(o));
    ScheduleResult r;
    for (std::size_t c = 0; c < candidates.size(); ++c) {
        const i64 peak = peak_of(g, op_of, candidates[c], opt);
        r.candidate_peaks.push_back(peak);
        if (c == 0 || peak < r.best_peak) {
            r.best_peak = peak;
            r.winner = static_cast<int>(c);
        }
    }
    r.source_peak = r.candidate_peaks[0];
    r.order = candidates[r.winner];
    return r;
}

// ---------------------------------------------------------------------------------
// Bindings: the tensor graph and the planning options are Python classes
// (rlx_compile._core.TensorGraph / PlanOptions) validated once when built, so the
// functions take two objects instead of restating every array.
// ---------------------------------------------------------------------------------

namespace {

std::string at(const char* name, std::size_t i) {
    return std::string(name) + "[" + std::to_string(i) + "]";
}

// The arrays of a TensorGraph under the keywords Python passes them by: the one list the
// constructor, its length checks and the read-only properties share.
struct GraphArray {
    const char* name;
    std::vector<i64> TensorGraph::*field;
    bool per_tensor;  // one entry per tensor; else the CSR operand lists
};
constexpr GraphArray kGraphArrays[] = {
    {"step", &TensorGraph::step, true},
    {"size", &TensorGraph::size, true},
    {"kind", &TensorGraph::kind, true},
    {"alloc", &TensorGraph::alloc, true},
    {"view_parent", &TensorGraph::view_parent, true},
    {"view_offset", &TensorGraph::view_offset, true},
    {"is_output", &TensorGraph::is_output, true},
    {"inplace_ok", &TensorGraph::inplace_ok, true},
    {"embed_into", &TensorGraph::embed_into, true},
    {"embed_offset", &TensorGraph::embed_offset, true},
    {"dep_offsets", &TensorGraph::dep_offsets, false},
    {"deps", &TensorGraph::deps, false},
};

py::tuple array_names(bool per_tensor) {
    py::list names;
    for (const GraphArray& a : kGraphArrays) {
        if (a.per_tensor == per_tensor) names.append(a.name);
    }
    return py::tuple(names);
}

bool is_graph_array(const std::string& name) {
    return std::any_of(std::begin(kGraphArrays), std::end(kGraphArrays),
                       [&](const GraphArray& a) { return name == a.name; });
}

// Every index and offset is checked against the graph, in an order that lets each check
// rely on the previous ones (sizes are non-negative before any is subtracted).
void validate(const TensorGraph& g) {
    const std::size_t n = g.step.size();
    for (const GraphArray& a : kGraphArrays) {
        if (a.per_tensor) require_length(g.*a.field, n, a.name, "len(step)");
    }
    require_length(g.dep_offsets, n + 1, "dep_offsets", "len(step) + 1");
    if (g.num_steps < 0) throw py::value_error("num_steps must be >= 0");
    if (g.dep_offsets.front() != 0 ||
        g.dep_offsets.back() != static_cast<i64>(g.deps.size())) {
        throw py::value_error("dep_offsets must start at 0 and end at len(deps)");
    }
    for (std::size_t t = 0; t < n; ++t) {
        if (g.dep_offsets[t + 1] < g.dep_offsets[t]) {
            throw py::value_error(at("dep_offsets", t + 1) + " decreases");
        }
    }
    for (std::size_t t = 0; t < n; ++t) {
        if (g.size[t] < 0) throw py::value_error(at("size", t) + " is negative");
    }
    for (std::size_t t = 0; t < n; ++t) {
        if (g.step[t] < 0 || g.step[t] >= std::max<i64>(g.num_steps, 1)) {
            throw py::value_error(at("step", t) + " is outside [0, num_steps)");
        }
        if (g.kind[t] < kCompute || g.kind[t] > kConstant) {
            throw py::value_error(at("kind", t) + " is not 0..3");
        }
        const i64 vp = g.view_parent[t];
        if (vp < -1 || vp >= static_cast<i64>(n) || (vp >= 0 && g.step[vp] >= g.step[t])) {
            throw py::value_error(at("view_parent", t) + " is not an earlier tensor or -1");
        }
        // Compared as offset > parent - size: offset + size may overflow.
        if (vp >= 0 && (g.view_offset[t] < 0 || g.view_offset[t] > g.size[vp] - g.size[t])) {
            throw py::value_error(at("view_offset", t) + " puts the view outside its parent");
        }
        const i64 e = g.embed_into[t];
        if (e < -1 || e >= static_cast<i64>(n) || (e >= 0 && g.step[e] <= g.step[t])) {
            throw py::value_error(at("embed_into", t) + " is not a later tensor or -1");
        }
        if (e >= 0 && (g.embed_offset[t] < 0 || g.embed_offset[t] > g.size[e] - g.size[t])) {
            throw py::value_error(at("embed_offset", t) + " puts the tensor outside " +
                                  at("embed_into", t));
        }
        for (i64 i = g.dep_offsets[t]; i < g.dep_offsets[t + 1]; ++i) {
            const i64 d = g.deps[static_cast<std::size_t>(i)];
            if (d < 0 || d >= static_cast<i64>(n) || g.step[d] >= g.step[t]) {
                throw py::value_error(at("deps", static_cast<std::size_t>(i)) +
                                      " is not a tensor produced before tensor " +
                                      std::to_string(t));
            }
        }
    }
    require_total_fits(g.size, 1, "size");
}

// TensorGraph(num_steps=..., step=..., ...): every array of kGraphArrays by keyword, each
// a 1-D integer numpy array, and nothing else.
TensorGraph make_graph(i64 num_steps, const py::kwargs& arrays) {
    for (const auto& item : arrays) {
        const std::string key = py::str(item.first);
        if (!is_graph_array(key)) {
            throw py::type_error("TensorGraph() got an unexpected array '" + key + "'");
        }
    }
    TensorGraph g;
    g.num_steps = num_steps;
    for (const GraphArray& a : kGraphArrays) {
        if (!arrays.contains(a.name)) {
            throw py::type_error(std::string("TensorGraph() missing array '") + a.name + "'");
        }
        const py::object value = arrays[a.name];
        if (!py::isinstance<py::array>(value)) {
            throw py::type_error(std::string(a.name) + " must be a numpy array, got " +
                                 std::string(py::str(py::type::of(value))));
        }
        g.*a.field = to_vector(py::reinterpret_borrow<py::array>(value), a.name);
    }
    validate(g);
    return g;
}

PlanOptions make_options(bool leaves_live_whole, bool inputs_live_whole,
                         bool pin_output_ancestors, bool inplace, bool concat_inplace,
                         i64 alignment, const std::string& strategy, i64 budget) {
    PlanOptions opt;
    opt.leaves_live_whole = leaves_live_whole;
    opt.inputs_live_whole = inputs_live_whole;
    opt.pin_output_ancestors = pin_output_ancestors;
    opt.inplace = inplace;
    opt.concat_inplace = concat_inplace;
    if (alignment <= 0 || (alignment & (alignment - 1)) != 0) {
        throw py::value_error("alignment " + std::to_string(alignment) +
                              " is not a power of two");
    }
    opt.alignment = alignment;
    if (!parse_strategy(strategy, &opt.strategy)) {
        throw py::value_error("unknown strategy '" + strategy + "'");
    }
    if (budget < 0) throw py::value_error("budget must be >= 0");
    opt.budget = budget;
    return opt;
}

py::dict py_plan_tensors(const TensorGraph& g, const PlanOptions& opt) {
    TensorPlan p;
    {
        py::gil_scoped_release release;  // both objects are read-only from Python
        p = plan_tensors(g, opt);
    }
    py::dict out;
    out["root"] = to_array(p.root);
    out["root_offset"] = to_array(p.root_offset);
    out["buffer"] = to_array(p.buffer);
    out["offset"] = to_array(p.offset);
    out["buf_size"] = to_array(p.buf_size);
    out["buf_birth"] = to_array(p.buf_birth);
    out["buf_death"] = to_array(p.buf_death);
    out["buf_offset"] = to_array(p.buf_offset);
    out["arena_size"] = p.arena_size;
    out["peak"] = p.peak;
    out["inplace_count"] = p.inplace_count;
    out["embedded_count"] = static_cast<i64>(p.embedded.size());
    return out;
}

py::dict py_schedule_memory(const TensorGraph& g, const PlanOptions& opt) {
    if (g.num_steps < 1 && !g.step.empty()) {
        throw py::value_error("num_steps must be >= 1: tensors are produced by steps");
    }
    // One op per step: a tensor's producing op is its step in source order.
    const std::vector<i64> op_of = g.step;
    ScheduleResult r;
    {
        py::gil_scoped_release release;
        r = schedule_memory(g, op_of, g.num_steps, opt);
    }
    py::dict out;
    out["order"] = to_array(r.order);
    out["source_peak"] = r.source_peak;
    out["best_peak"] = r.best_peak;
    out["candidate_peaks"] = to_array(r.candidate_peaks);
    out["winner"] = r.winner;
    return out;
}

}  // namespace

void register_memplan(py::module_& m) {
    py::enum_<TensorKind>(m, "TensorKind", "The kind array's values.")
        .value("COMPUTE", kCompute)
        .value("INPUT", kInput)
        .value("PARAM", kParam)
        .value("CONSTANT", kConstant);

    py::class_<TensorGraph> graph(
        m, "TensorGraph",
        "A scheduled tensor graph, one entry per tensor (op result), as flat int64 arrays; "
        "checked when built. Keywords: num_steps and every name in PER_TENSOR and EDGES.");
    graph.def(py::init(&make_graph), py::arg("num_steps"))
        .def_readonly("num_steps", &TensorGraph::num_steps)
        .def("__len__", [](const TensorGraph& g) { return g.step.size(); });
    graph.attr("PER_TENSOR") = array_names(true);
    graph.attr("EDGES") = array_names(false);
    for (const GraphArray& a : kGraphArrays) {
        const auto field = a.field;
        graph.def_property_readonly(a.name,
                                    [field](const TensorGraph& g) { return to_array(g.*field); });
    }

    py::class_<PlanOptions>(m, "PlanOptions", "The options of plan_tensors and schedule_memory.")
        .def(py::init(&make_options), py::kw_only(), py::arg("leaves_live_whole") = true,
             py::arg("inputs_live_whole") = true, py::arg("pin_output_ancestors") = false,
             py::arg("inplace") = true, py::arg("concat_inplace") = true,
             py::arg("alignment") = 64, py::arg("strategy") = "best",
             py::arg("budget") = kDefaultBudget)
        .def_readonly("leaves_live_whole", &PlanOptions::leaves_live_whole)
        .def_readonly("inputs_live_whole", &PlanOptions::inputs_live_whole)
        .def_readonly("pin_output_ancestors", &PlanOptions::pin_output_ancestors)
        .def_readonly("inplace", &PlanOptions::inplace)
        .def_readonly("concat_inplace", &PlanOptions::concat_inplace)
        .def_readonly("alignment", &PlanOptions::alignment)
        .def_property_readonly("strategy",
                               [](const PlanOptions& o) {
                                   return strategy_names()[static_cast<std::size_t>(o.strategy)];
                               })
        .def_readonly("budget", &PlanOptions::budget);

    m.def("plan_tensors", &py_plan_tensors, py::arg("graph"), py::arg("options"),
          "Views, in-place reuse, concat operands in place, liveness and arena placement of a "
          "scheduled tensor graph.");
    m.def("schedule_memory", &py_schedule_memory, py::arg("graph"), py::arg("options"),
          "A topological order of the ops with a lower peak of live bytes (placement is not "
          "run: the options' strategy and budget are unused).");
    py::list candidates;
    for (const char* name : kScheduleCandidates) candidates.append(name);
    m.attr("SCHEDULE_CANDIDATES") = py::tuple(candidates);
}

}  // namespace rlx
