// Arena placement engine. See placement.hpp for the contract.
//
// Every strategy is "an order + a fit rule": buffers are placed one at a time, each
// at an offset chosen among the gaps left by the already placed buffers whose live
// intervals intersect its own. The cost of one placement is therefore the cost of
// finding those time-conflicting blocks. A flat list of placed blocks (RLX's and
// TFLite's approach) makes that O(n) per placement and O(n^2) overall; here a
// segment tree over (compressed) time answers it in O(log T + k), k being the
// number of buffers whose intervals intersect (placed before it or not: the index is
// built once per search and filtered by position), small for DNN-shaped lifetimes.
#include "placement.hpp"

#include <algorithm>
#include <numeric>
#include <string>
#include <utility>

#include "checked_array.hpp"

namespace rlx {

namespace {

using i32 = std::int32_t;
using i64 = std::int64_t;
using u64 = std::uint64_t;

i64 align_up(i64 x, i64 a) { return (x + a - 1) & ~(a - 1); }

enum class Fit { kFirst, kBest };

// The input with time compressed to ranks: closed intervals intersect exactly when
// their ranked versions do, and ranks keep the index structures O(n) in size even
// when births and deaths are large or sparse numbers.
struct Problem {
    std::vector<i64> size;
    std::vector<i64> birth, death;  // raw times, for orders that use durations
    std::vector<i32> lo, hi;        // ranks of birth and death
    i32 num_ranks = 0;
    i64 max_align = 1;         // the plan's alignment: no buffer's is larger
    std::vector<i64> align;    // per buffer: slot_alignment(size, max_align)
    std::vector<i32> nonzero;  // buffers that take space, in index order
};

Problem make_problem(const std::vector<i64>& sizes, const std::vector<i64>& births,
                     const std::vector<i64>& deaths, i64 align) {
    Problem p;
    p.size = sizes;
    p.birth = births;
    p.death = deaths;
    p.max_align = align;
    p.align.reserve(sizes.size());
    for (const i64 size : sizes) p.align.push_back(slot_alignment(size, align));
    const auto n = static_cast<i32>(sizes.size());
    std::vector<i64> times;
    times.reserve(2 * sizes.size());
    for (i32 i = 0; i < n; ++i) {
        if (sizes[static_cast<std::size_t>(i)] > 0) {
            p.nonzero.push_back(i);
            times.push_back(births[static_cast<std::size_t>(i)]);
            times.push_back(deaths[static_cast<std::size_t>(i)]);
        }
    }
    std::sort(times.begin(), times.end());
    times.erase(std::unique(times.begin(), times.end()), times.end());
    p.num_ranks = static_cast<i32>(times.size());
    p.lo.assign(sizes.size(), 0);
    p.hi.assign(sizes.size(), 0);
    auto rank = [&times](i64 t) {
        return static_cast<i32>(std::lower_bound(times.begin(), times.end(), t) - times.begin());
    };
    for (const i32 i : p.nonzero) {
        const auto u = static_cast<std::size_t>(i);
        p.lo[u] = rank(births[u]);
        p.hi[u] = rank(deaths[u]);
    }
    return p;
}

i64 peak_live(const Problem& p, const std::vector<i32>& ids) {
    std::vector<i64> delta(static_cast<std::size_t>(p.num_ranks) + 1, 0);
    for (const i32 i : ids) {
        const auto u = static_cast<std::size_t>(i);
        delta[static_cast<std::size_t>(p.lo[u])] += p.size[u];
        delta[static_cast<std::size_t>(p.hi[u]) + 1] -= p.size[u];
    }
    i64 live = 0;
    i64 peak = 0;
    for (const i64 d : delta) {
        live += d;
        peak = std::max(peak, live);
    }
    return peak;
}

// Calls f(node) for the canonical nodes of buffer i's interval in a segment tree over
// the ranks with `leaves` leaves (node 1 the root, leaf t at leaves + t): O(log T)
// nodes, exactly one of them on the path from any rank of the interval to the root.
template <typename F>
void for_each_node(const Problem& p, i32 i, std::size_t leaves, F&& f) {
    const auto u = static_cast<std::size_t>(i);
    std::size_t l = static_cast<std::size_t>(p.lo[u]) + leaves;
    std::size_t r = static_cast<std::size_t>(p.hi[u]) + leaves + 1;
    for (; l < r; l >>= 1, r >>= 1) {
        if (l & 1) f(l++);
        if (r & 1) f(--r);
    }
}

std::size_t tree_leaves(const Problem& p) {
    std::size_t leaves = 1;
    while (leaves < static_cast<std::size_t>(p.num_ranks)) leaves <<= 1;
    return leaves;
}

// Buffers grouped by birth rank, in flat arrays: those born at ranks lo..hi are one slice.
class ByBirth {
public:
    ByBirth(const Problem& p, const std::vector<i32>& ids)
        : start_(static_cast<std::size_t>(std::max<i32>(p.num_ranks, 1)) + 1, 0),
          items_(ids.size()) {
        for (const i32 i : ids) {
            ++start_[static_cast<std::size_t>(p.lo[static_cast<std::size_t>(i)]) + 1];
        }
        std::partial_sum(start_.begin(), start_.end(), start_.begin());
        std::vector<i32> fill(start_.begin(), start_.end() - 1);
        for (const i32 i : ids) {
            const auto b = static_cast<std::size_t>(p.lo[static_cast<std::size_t>(i)]);
            items_[static_cast<std::size_t>(fill[b]++)] = i;
        }
    }

    // Calls f(j) for every buffer j born at a rank in [lo, hi] (none when lo > hi).
    template <typename F>
    void for_each(i32 lo, i32 hi, F&& f) const {
        const i32 last = start_[static_cast<std::size_t>(hi) + 1];
        for (i32 k = start_[static_cast<std::size_t>(lo)]; k < last; ++k) {
            f(items_[static_cast<std::size_t>(k)]);
        }
    }

private:
    std::vector<i32> start_, items_;
};

// The buffers of one search indexed by time, answering "which of them intersect
// [lo, hi]". A buffer X intersects the query [b, d] iff X contains b, or X starts in
// (b, d]; the two sets are disjoint. The first is a stabbing query on a segment tree
// whose nodes list the buffers covering them (each buffer sits in O(log T) canonical
// nodes, and exactly one of them is on the root-to-leaf path of b); the second is one
// slice of the buffers by birth. The lists are built once, in flat arrays, and never
// change: a placement filters them by position in the order being placed instead, so
// no run or undo has to update them.
class TimeIndex {
public:
    TimeIndex(const Problem& p, const std::vector<i32>& ids)
        : leaves_(tree_leaves(p)), node_start_(2 * leaves_ + 1, 0), births_(p, ids) {
        for (const i32 i : ids) {
            for_each_node(p, i, leaves_, [this](std::size_t node) { ++node_start_[node + 1]; });
        }
        std::partial_sum(node_start_.begin(), node_start_.end(), node_start_.begin());
        node_items_.resize(static_cast<std::size_t>(node_start_.back()));
        std::vector<i32> fill(node_start_.begin(), node_start_.end() - 1);
        for (const i32 i : ids) {
            for_each_node(p, i, leaves_, [&](std::size_t node) {
                node_items_[static_cast<std::size_t>(fill[node]++)] = i;
            });
        }
    }

    // Calls f(j) for every indexed buffer j whose interval intersects [lo, hi].
    template <typename F>
    void for_each_intersecting(i32 lo, i32 hi, F&& f) const {
        for (std::size_t node = static_cast<std::size_t>(lo) + leaves_; node >= 1; node >>= 1) {
            for (i32 k = node_start_[node]; k < node_start_[node + 1]; ++k) {
                f(node_items_[static_cast<std::size_t>(k)]);
            }
        }
        births_.for_each(lo + 1, hi, f);
    }

private:
    std::size_t leaves_;
    std::vector<i32> node_start_, node_items_;  // per tree node, CSR
    ByBirth births_;
};

// Placement of buffers in an order: each buffer goes where `fit` puts it among the
// buffers before it in the order (a lower position) that intersect it in time. Runs
// place a whole order; the hill climb changes positions and offsets in place and
// searches single buffers again.
class Packer {
public:
    Packer(const Problem& p, const std::vector<i32>& ids, i64 base)
        : p_(p),
          index_(p, ids),
          base_(base),
          offset_(p.size.size(), 0),
          position_(p.size.size(), 0),
          conflicts_(p.size.size(), 0) {}

    i64 steps() const { return steps_; }
    void add_steps(i64 steps) { steps_ += steps; }
    i64 arena() const { return arena_; }
    i64 offset(i32 i) const { return offset_[static_cast<std::size_t>(i)]; }
    void set_offset(i32 i, i64 off) { offset_[static_cast<std::size_t>(i)] = off; }
    std::size_t position(i32 i) const {
        return static_cast<std::size_t>(position_[static_cast<std::size_t>(i)]);
    }
    void set_position(i32 i, std::size_t k) {
        position_[static_cast<std::size_t>(i)] = static_cast<i32>(k);
    }
    // How many buffers before i in the last run intersect it in time.
    i64 conflicts(i32 i) const { return conflicts_[static_cast<std::size_t>(i)]; }

    // Places `order` (a permutation of the indexed buffers) from scratch. Stops early
    // (returning false) once the arena reaches `stop_at`, because the caller only
    // wants strictly smaller plans.
    bool run(const std::vector<i32>& order, Fit fit, i64 stop_at) {
        for (std::size_t k = 0; k < order.size(); ++k) set_position(order[k], k);
        arena_ = 0;
        for (const i32 i : order) {
            const auto u = static_cast<std::size_t>(i);
            offset_[u] = search(i, fit, &conflicts_[u]);
            // A step per conflicting buffer examined, one per search, one per placement.
            steps_ += conflicts_[u] + 2;
            arena_ = std::max(arena_, offset_[u] + p_.size[u]);
            if (arena_ >= stop_at) return false;
        }
        return true;
    }

    // The offset `fit` chooses for buffer i among the buffers positioned before it,
    // and (in *conflicts) how many of those intersect i in time.
    i64 search(i32 i, Fit fit, i64* conflicts) {
        const auto u = static_cast<std::size_t>(i);
        const i32 k = position_[u];
        occ_.clear();
        index_.for_each_intersecting(p_.lo[u], p_.hi[u], [&](i32 j) {
            const auto v = static_cast<std::size_t>(j);
            if (position_[v] < k) occ_.emplace_back(offset_[v], offset_[v] + p_.size[v]);
        });
        *conflicts = static_cast<i64>(occ_.size());
        std::sort(occ_.begin(), occ_.end());
        return fit == Fit::kFirst ? first_fit(p_.size[u], p_.align[u])
                                  : best_fit(p_.size[u], p_.align[u]);
    }

private:
    // RLX's scan: walk the conflicting blocks by offset with a cursor at the highest
    // end seen so far; the first aligned cursor position that fits wins.
    i64 first_fit(i64 size, i64 align) const {
        i64 cursor = base_;
        for (const auto& [start, end] : occ_) {
            const i64 a = align_up(cursor, align);
            if (a + size <= start) return a;
            cursor = std::max(cursor, end);
        }
        return align_up(cursor, align);
    }

    // The smallest bounded gap that fits (the gap below the first block included, the
    // case XNNPACK's planner missed), ties to the lowest offset; the open space above
    // the highest conflicting block only when no gap fits.
    i64 best_fit(i64 size, i64 align) const {
        i64 cursor = base_;
        i64 best = -1;
        i64 best_room = 0;
        for (const auto& [start, end] : occ_) {
            const i64 a = align_up(cursor, align);
            if (a + size <= start && (best < 0 || start - a < best_room)) {
                best = a;
                best_room = start - a;
                if (best_room == size) return best;  // no gap can be tighter
            }
            cursor = std::max(cursor, end);
        }
        return best >= 0 ? best : align_up(cursor, align);
    }

    const Problem& p_;
    TimeIndex index_;
    i64 base_;
    std::vector<i64> offset_;
    std::vector<i32> position_;
    std::vector<i64> conflicts_;
    std::vector<std::pair<i64, i64>> occ_;
    i64 arena_ = 0;
    i64 steps_ = 0;
};

// ---- Orders. Every comparator ends with the buffer index, so sorting is total and
// the result never depends on the sort algorithm's handling of ties.

std::vector<i32> order_by_size(const Problem& p, std::vector<i32> ids) {
    // RLX: a stable sort of node order by size; ids arrive in index order.
    std::stable_sort(ids.begin(), ids.end(), [&p](i32 a, i32 b) {
        return p.size[static_cast<std::size_t>(a)] > p.size[static_cast<std::size_t>(b)];
    });
    return ids;
}

template <typename Key>
std::vector<i32> order_by_key(const Problem& p, std::vector<i32> ids, const Key& key) {
    // Key: larger first, then larger size, then lower index.
    std::sort(ids.begin(), ids.end(), [&](i32 a, i32 b) {
        const auto ka = key(a);
        const auto kb = key(b);
        if (ka != kb) return ka > kb;
        const i64 sa = p.size[static_cast<std::size_t>(a)];
        const i64 sb = p.size[static_cast<std::size_t>(b)];
        if (sa != sb) return sa > sb;
        return a < b;
    });
    return ids;
}

std::vector<i32> order_by_lifetime(const Problem& p, std::vector<i32> ids) {
    return order_by_key(p, std::move(ids), [&p](i32 i) {
        const auto u = static_cast<std::size_t>(i);
        return p.death[u] - p.birth[u];
    });
}

std::vector<i32> order_by_area(const Problem& p, std::vector<i32> ids) {
    // Bytes x duration, in long double: the product of two int64 may not fit.
    return order_by_key(p, std::move(ids), [&p](i32 i) {
        const auto u = static_cast<std::size_t>(i);
        return static_cast<long double>(p.size[u]) *
               (static_cast<long double>(p.death[u] - p.birth[u]) + 1.0L);
    });
}

std::vector<i32> order_by_conflicts(const Problem& p, std::vector<i32> ids) {
    // TVM USMP greedy_by_conflicts: most conflicting buffers first. The number of
    // intervals intersecting [lo, hi] is all minus those ending before lo minus those
    // starting after hi, counted by binary search in sorted endpoint lists.
    std::vector<i32> los, his;
    los.reserve(ids.size());
    his.reserve(ids.size());
    for (const i32 i : ids) {
        los.push_back(p.lo[static_cast<std::size_t>(i)]);
        his.push_back(p.hi[static_cast<std::size_t>(i)]);
    }
    std::sort(los.begin(), los.end());
    std::sort(his.begin(), his.end());
    std::vector<i64> conflicts(p.size.size(), 0);
    const auto m = static_cast<i64>(ids.size());
    for (const i32 i : ids) {
        const auto u = static_cast<std::size_t>(i);
        const i64 ends_before = std::lower_bound(his.begin(), his.end(), p.lo[u]) - his.begin();
        const i64 starts_after = los.end() - std::upper_bound(los.begin(), los.end(), p.hi[u]);
        conflicts[u] = m - ends_before - starts_after - 1;
    }
    return order_by_key(p, std::move(ids),
                        [&conflicts](i32 i) { return conflicts[static_cast<std::size_t>(i)]; });
}

std::vector<i32> order_by_breadth(const Problem& p, std::vector<i32> ids) {
    // TFLite greedy-by-breadth: visit time steps by decreasing breadth (bytes live at
    // the step) and assign each step's still-unassigned buffers by decreasing size. A
    // buffer is thus assigned at the first visited step inside its interval, i.e. the
    // minimum visit position over [lo, hi], found with a range-minimum segment tree.
    const auto ranks = static_cast<std::size_t>(p.num_ranks);
    std::vector<i64> breadth(ranks + 1, 0);
    for (const i32 i : ids) {
        const auto u = static_cast<std::size_t>(i);
        breadth[static_cast<std::size_t>(p.lo[u])] += p.size[u];
        breadth[static_cast<std::size_t>(p.hi[u]) + 1] -= p.size[u];
    }
    for (std::size_t t = 1; t <= ranks; ++t) breadth[t] += breadth[t - 1];
    std::vector<i32> steps(ranks);
    std::iota(steps.begin(), steps.end(), 0);
    std::sort(steps.begin(), steps.end(), [&breadth](i32 a, i32 b) {
        const i64 ba = breadth[static_cast<std::size_t>(a)];
        const i64 bb = breadth[static_cast<std::size_t>(b)];
        return ba != bb ? ba > bb : a < b;
    });
    std::size_t leaves = 1;
    while (leaves < ranks) leaves <<= 1;
    std::vector<i32> tree(2 * leaves, static_cast<i32>(ranks));
    for (std::size_t k = 0; k < ranks; ++k) {
        tree[leaves + static_cast<std::size_t>(steps[k])] = static_cast<i32>(k);
    }
    for (std::size_t k = leaves - 1; k >= 1; --k) tree[k] = std::min(tree[2 * k], tree[2 * k + 1]);
    std::vector<i64> visit(p.size.size(), 0);
    for (const i32 i : ids) {
        const auto u = static_cast<std::size_t>(i);
        i32 best = static_cast<i32>(ranks);
        std::size_t l = static_cast<std::size_t>(p.lo[u]) + leaves;
        std::size_t r = static_cast<std::size_t>(p.hi[u]) + leaves + 1;
        for (; l < r; l >>= 1, r >>= 1) {
            if (l & 1) best = std::min(best, tree[l++]);
            if (r & 1) best = std::min(best, tree[--r]);
        }
        visit[u] = -static_cast<i64>(best);  // negated: order_by_key puts larger first
    }
    return order_by_key(p, std::move(ids),
                        [&visit](i32 i) { return visit[static_cast<std::size_t>(i)]; });
}

std::vector<i32> order_by_birth(const Problem& p, std::vector<i32> ids) {
    // Execution order, like an online allocator (ONNX Runtime's pattern planner).
    return order_by_key(p, std::move(ids),
                        [&p](i32 i) { return -p.birth[static_cast<std::size_t>(i)]; });
}

// ---- Deterministic pseudo-random numbers for the hill climb (splitmix64).
class Rng {
public:
    explicit Rng(u64 seed) : state_(seed) {}
    u64 next() {
        u64 z = (state_ += 0x9E3779B97F4A7C15ULL);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        return z ^ (z >> 31);
    }
    std::size_t below(std::size_t n) { return static_cast<std::size_t>(next() % n); }

private:
    u64 state_;
};

// The lowest rank of a skyline among the ranks where unplaced buffers live, the first
// on ties: a min segment tree over the ranks whose leaves are the heights (ranks
// without demand are never lowest), re-read on the ranges a skyline step changes.
class LowestRank {
public:
    LowestRank(const std::vector<i64>& height, const std::vector<i64>& demand)
        : height_(height), demand_(demand) {
        while (leaves_ < height.size()) leaves_ <<= 1;
        min_.assign(2 * leaves_, INT64_MAX);
        arg_.assign(2 * leaves_, 0);
        for (std::size_t t = 0; t < leaves_; ++t) arg_[leaves_ + t] = static_cast<i32>(t);
        for (std::size_t t = 0; t < height.size(); ++t) min_[leaves_ + t] = key(t);
        for (std::size_t k = leaves_ - 1; k >= 1; --k) pull(k);
    }

    std::size_t lowest() const { return static_cast<std::size_t>(arg_[1]); }

    // Ranks a..b changed height or demand.
    void update(std::size_t a, std::size_t b) {
        for (std::size_t t = a; t <= b; ++t) min_[leaves_ + t] = key(t);
        for (a = (a + leaves_) >> 1, b = (b + leaves_) >> 1; a >= 1; a >>= 1, b >>= 1) {
            for (std::size_t k = a; k <= b; ++k) pull(k);
        }
    }

private:
    i64 key(std::size_t t) const { return demand_[t] > 0 ? height_[t] : INT64_MAX; }

    void pull(std::size_t k) {
        const std::size_t c = min_[2 * k + 1] < min_[2 * k] ? 2 * k + 1 : 2 * k;
        min_[k] = min_[c];
        arg_[k] = arg_[c];
    }

    const std::vector<i64>& height_;
    const std::vector<i64>& demand_;
    std::size_t leaves_ = 1;
    std::vector<i64> min_;
    std::vector<i32> arg_;
};

// A skyline ("lowest segment first") construction, the strip-packing heuristic
// adapted to fixed time positions: repeatedly take the lowest stretch of the
// skyline (per-step height of the placed buffers) among steps where unplaced
// buffers still live, and put on it the unplaced buffer that lies inside that
// stretch and covers most of it (then the larger one); when none fits, raise the
// stretch to its lower neighbour, wasting that area. Greedy size orders leave holes
// that nothing fills on tight inputs; this builds bottom-up and so packs them much
// closer to the lower bound. It returns the buffers in placement order, which is
// by non-decreasing offset: first fit over that order places every buffer at or
// below its skyline offset, so the order is what the portfolio and hill climb use.
// With `rng`, each choice is randomised among near-best buffers (restarts), drawn
// in the order of the list of unplaced buffers (which a placement changes by moving
// its last entry into the placed one's slot).
// Cost is counted in `steps` as O(n * (T + n)), the cost of scanning every rank and
// every unplaced buffer per choice; callers gate it by the budget. The lowest rank
// comes from a segment tree, and the buffers inside the stretch from the list of
// buffers by birth rank, so a choice actually costs about the stretch's width.
std::vector<i32> skyline_order(const Problem& p, const std::vector<i32>& ids, Rng* rng,
                               i64* steps) {
    const auto ranks = static_cast<std::size_t>(p.num_ranks);
    std::vector<i64> height(ranks, 0);
    std::vector<i64> demand(ranks + 1, 0);
    for (const i32 i : ids) {
        const auto u = static_cast<std::size_t>(i);
        demand[static_cast<std::size_t>(p.lo[u])] += 1;
        demand[static_cast<std::size_t>(p.hi[u]) + 1] -= 1;
    }
    for (std::size_t t = 1; t <= ranks; ++t) demand[t] += demand[t - 1];
    const ByBirth born(p, ids);
    std::vector<i32> todo = ids;
    std::vector<i32> todo_pos(p.size.size(), -1);  // index in todo, -1 once placed
    for (std::size_t k = 0; k < ids.size(); ++k) {
        todo_pos[static_cast<std::size_t>(ids[k])] = static_cast<i32>(k);
    }
    LowestRank lowest(height, demand);
    std::vector<i32> inside;  // todo indices of the unplaced buffers inside the stretch
    std::vector<i32> order;
    order.reserve(ids.size());
    while (!todo.empty()) {
        const std::size_t low = lowest.lowest();
        const i64 floor = height[low];
        std::size_t l = low, r = low;
        while (l > 0 && demand[l - 1] > 0 && height[l - 1] == floor) --l;
        while (r + 1 < ranks && demand[r + 1] > 0 && height[r + 1] == floor) ++r;
        *steps += static_cast<i64>(ranks + todo.size());
        inside.clear();
        born.for_each(static_cast<i32>(l), static_cast<i32>(r), [&](i32 j) {
            const auto u = static_cast<std::size_t>(j);
            if (todo_pos[u] >= 0 && static_cast<std::size_t>(p.hi[u]) <= r) {
                inside.push_back(todo_pos[u]);
            }
        });
        std::sort(inside.begin(), inside.end());
        std::size_t pick = todo.size();
        long double pick_key = -1.0L;
        for (const i32 k : inside) {
            const auto u = static_cast<std::size_t>(todo[static_cast<std::size_t>(k)]);
            const auto lo = static_cast<std::size_t>(p.lo[u]);
            const auto hi = static_cast<std::size_t>(p.hi[u]);
            // Covering the whole stretch leaves no sliver; then wider, then taller.
            long double key = static_cast<long double>(hi - lo + 1) * 4.0L;
            if (lo == l && hi == r) key += static_cast<long double>(ranks) * 8.0L;
            key += static_cast<long double>(p.size[u]) / static_cast<long double>(INT64_MAX);
            if (rng != nullptr) {
                key *= 1.0L + 0.5L * static_cast<long double>(rng->next() >> 11) / 9007199254740992.0L;
            }
            if (key > pick_key) {
                pick_key = key;
                pick = static_cast<std::size_t>(k);
            }
        }
        if (pick == todo.size()) {
            i64 raise = INT64_MAX;
            if (l > 0 && demand[l - 1] > 0) raise = std::min(raise, height[l - 1]);
            if (r + 1 < ranks && demand[r + 1] > 0) raise = std::min(raise, height[r + 1]);
            for (std::size_t t = l; t <= r; ++t) height[t] = raise;
            lowest.update(l, r);
            continue;
        }
        const i32 i = todo[pick];
        todo[pick] = todo.back();
        todo_pos[static_cast<std::size_t>(todo.back())] = static_cast<i32>(pick);
        todo.pop_back();
        const auto u = static_cast<std::size_t>(i);
        todo_pos[u] = -1;
        const i64 top = align_up(floor, p.align[u]) + p.size[u];
        const auto lo = static_cast<std::size_t>(p.lo[u]);
        const auto hi = static_cast<std::size_t>(p.hi[u]);
        for (std::size_t t = lo; t <= hi; ++t) {
            height[t] = top;
            demand[t] -= 1;
        }
        lowest.update(lo, hi);
        order.push_back(i);
    }
    return order;
}

// A set of time ranks (a bitset), for "does [lo, hi] meet any rank in the set".
class RankSet {
public:
    explicit RankSet(i32 ranks) : words_((static_cast<std::size_t>(ranks) + 64) / 64, 0) {}

    void clear() { std::fill(words_.begin(), words_.end(), 0); }

    void add(i32 lo, i32 hi) {
        for (std::size_t w = word(lo); w <= word(hi); ++w) words_[w] |= mask(w, lo, hi);
    }

    bool meets(i32 lo, i32 hi) const {
        for (std::size_t w = word(lo); w <= word(hi); ++w) {
            if ((words_[w] & mask(w, lo, hi)) != 0) return true;
        }
        return false;
    }

private:
    static std::size_t word(i32 t) { return static_cast<std::size_t>(t) >> 6; }

    // The bits of word w that hold ranks lo..hi.
    static u64 mask(std::size_t w, i32 lo, i32 hi) {
        u64 m = ~u64{0};
        if (w == word(lo)) m &= ~u64{0} << (static_cast<unsigned>(lo) & 63);
        if (w == word(hi)) m &= ~u64{0} >> (63 - (static_cast<unsigned>(hi) & 63));
        return m;
    }

    std::vector<u64> words_;
};

bool intersect(const Problem& p, i32 a, i32 b) {
    const auto u = static_cast<std::size_t>(a);
    const auto v = static_cast<std::size_t>(b);
    return p.lo[u] <= p.hi[v] && p.lo[v] <= p.hi[u];
}

// Local improvement of a complete placement held by `pk` (its last run, of `order`):
// move a buffer that touches the arena's top to a random earlier position in the
// order, re-place the changed suffix, and keep the move if the arena does not grow.
// Equal arenas are accepted so the search can walk across plateaus, which are the
// common case. This is TVM's hill_climb idea with two changes: the perturbation
// targets the buffers that define the arena (moving any other buffer rarely helps),
// and only the suffix after the moved position is re-placed. Everything is seeded,
// so the walk is reproducible. Returns the arena of the plan `pk` holds at the end.
//
// Re-placing the suffix searches only the buffers whose search can give a new
// offset: the moved buffer, the buffers it now precedes that meet it in time, and
// those meeting a buffer that this move shifted. Every other buffer sees the same
// blocks before it as in the current plan, so it stays where it is; it is charged
// the steps its search would cost (its count of earlier conflicting buffers, kept
// per buffer). A rejected move is charged one step per suffix buffer, the cost of
// re-activating the suffix in a packer that undoes it.
i64 hill_climb(const Problem& p, Packer& pk, std::vector<i32>& order, Fit fit, i64 lower_bound,
               i64 step_limit, i64 patience) {
    const std::size_t n = order.size();
    i64 arena = pk.arena();
    if (n < 2) return arena;
    Rng rng(0x5EED0000ULL + n);
    std::vector<i64> conflicts(p.size.size(), 0);  // per buffer, in the current order
    for (const i32 i : order) conflicts[static_cast<std::size_t>(i)] = pk.conflicts(i);
    RankSet shifted_ranks(p.num_ranks);
    std::vector<std::pair<i32, i64>> shifted;  // buffers a move shifted, old offsets
    std::vector<std::pair<i32, i64>> searched;  // buffers a move searched, conflicts
    std::vector<i32> top;
    i64 since_improvement = 0;
    while (pk.steps() < step_limit && arena > lower_bound && since_improvement < patience) {
        ++since_improvement;
        top.clear();
        for (const i32 i : order) {
            if (pk.offset(i) + p.size[static_cast<std::size_t>(i)] == arena) top.push_back(i);
        }
        const i32 moved = top[rng.below(top.size())];
        const std::size_t from = pk.position(moved);
        if (from == 0) continue;
        const std::size_t to = rng.below(from);
        std::rotate(order.begin() + static_cast<std::ptrdiff_t>(to),
                    order.begin() + static_cast<std::ptrdiff_t>(from),
                    order.begin() + static_cast<std::ptrdiff_t>(from) + 1);
        for (std::size_t k = to; k <= from; ++k) pk.set_position(order[k], k);
        shifted_ranks.clear();
        shifted.clear();
        searched.clear();
        i64 steps = 0;
        bool kept = true;
        for (std::size_t k = to; k < n; ++k) {
            const i32 x = order[k];
            const auto u = static_cast<std::size_t>(x);
            const bool stale = x == moved || (k <= from && intersect(p, moved, x)) ||
                               shifted_ranks.meets(p.lo[u], p.hi[u]);
            if (!stale) {
                steps += conflicts[u] + 2;
                continue;
            }
            i64 count = 0;
            const i64 off = pk.search(x, fit, &count);
            steps += count + 2;
            searched.emplace_back(x, count);
            if (off != pk.offset(x)) {
                shifted.emplace_back(x, pk.offset(x));
                pk.set_offset(x, off);
                shifted_ranks.add(p.lo[u], p.hi[u]);
            }
            // Unsearched buffers keep their ends, all within the arena.
            if (off + p.size[u] > arena) {
                kept = false;
                break;
            }
        }
        if (kept) {
            pk.add_steps(steps);
            for (const auto& [x, count] : searched) conflicts[static_cast<std::size_t>(x)] = count;
            i64 now = 0;
            for (const i32 i : order) {
                now = std::max(now, pk.offset(i) + p.size[static_cast<std::size_t>(i)]);
            }
            if (now < arena) since_improvement = 0;
            arena = now;
            continue;
        }
        // Reject: restore the old order and offsets.
        pk.add_steps(steps + static_cast<i64>(n - to));
        for (const auto& [x, off] : shifted) pk.set_offset(x, off);
        std::rotate(order.begin() + static_cast<std::ptrdiff_t>(to),
                    order.begin() + static_cast<std::ptrdiff_t>(to) + 1,
                    order.begin() + static_cast<std::ptrdiff_t>(from) + 1);
        for (std::size_t k = to; k <= from; ++k) pk.set_position(order[k], k);
    }
    return arena;
}

Placement place_single(const Problem& p, Strategy strategy) {
    std::vector<i32> order;
    switch (strategy) {
        case Strategy::kRlx:
        case Strategy::kBestFit:
            order = order_by_size(p, p.nonzero);
            break;
        case Strategy::kGreedyConflicts:
            order = order_by_conflicts(p, p.nonzero);
            break;
        case Strategy::kGreedyBreadth:
            order = order_by_breadth(p, p.nonzero);
            break;
        case Strategy::kGreedyLifetime:
            order = order_by_lifetime(p, p.nonzero);
            break;
        case Strategy::kBest:
            break;  // not a single order; handled by place_best
    }
    const Fit fit = strategy == Strategy::kBestFit ? Fit::kBest : Fit::kFirst;
    Packer pk(p, order, 0);
    pk.run(order, fit, INT64_MAX);
    Placement out;
    out.offsets.assign(p.size.size(), 0);
    for (const i32 i : order) out.offsets[static_cast<std::size_t>(i)] = pk.offset(i);
    out.arena_size = pk.arena();
    out.steps = pk.steps();
    return out;
}

struct NamedOrder {
    const char* name;
    std::vector<i32> (*make)(const Problem&, std::vector<i32>);
};

// Idle skyline restarts allowed once the best plan is within 0.1% of the bound.
constexpr i64 kNearPatience = 16;

Placement place_best(const Problem& p, i64 budget) {
    Placement out;
    out.offsets.assign(p.size.size(), 0);
    if (p.nonzero.empty()) {
        out.winner = "empty";
        return out;
    }
    // The search ends once a plan is within min(alignment - 1, 0.1%) bytes of the lower
    // bound (peak_live counts alignment too: a buffer's size is a multiple of its
    // alignment): what is left is below one alignment unit, and no plan it finds is
    // more than 0.1% above the best one the rest of the budget could find (with
    // alignment 1, only a plan at the bound ends it).
    const i64 bound = peak_live(p, p.nonzero);
    const i64 good_enough = bound + std::min(p.max_align - 1, bound / 1000);
    // Within 0.1% of the bound the search only looks a little further (fewer idle
    // restarts, the climb's short walk): the rest of the budget can win at most that
    // 0.1%, and a 340-buffer graph 0.096% over its bound spent 60 ms, a third of its
    // compile, finding nothing.
    const i64 near_bound = bound + bound / 1000;
    i64 other_steps = 0;  // work done outside `pk` (RLX's own run, skyline builds)

    // Buffers live over the whole span (params, inputs, pinned outputs) conflict with
    // everything, so every arena holds them side by side. Stacking them at the bottom
    // loses nothing (with alignment 1: cut their byte strips out of any valid plan and
    // the rest stays valid), and it takes them out of every later conflict query,
    // where they would otherwise make each query O(#globals).
    std::vector<i32> globals, rest;
    for (const i32 i : p.nonzero) {
        const auto u = static_cast<std::size_t>(i);
        (p.lo[u] == 0 && p.hi[u] == p.num_ranks - 1 ? globals : rest).push_back(i);
    }

    // RLX's own plan comes first, so `best` is never worse than `rlx`. It is skipped
    // only when the globals would make it cost more than the whole budget. With no
    // globals, the first split candidate below (size order, first fit) is RLX itself.
    i64 best_arena = INT64_MAX;
    if (!globals.empty() &&
        static_cast<i64>(globals.size()) * static_cast<i64>(p.nonzero.size()) <= budget) {
        Placement r = place_single(p, Strategy::kRlx);
        other_steps += r.steps;
        best_arena = r.arena_size;
        out.offsets = std::move(r.offsets);
        out.winner = "rlx";
    }

    // Most aligned first (then larger first): every size is a multiple of its alignment,
    // so each offset is already aligned, and the globals take no padding at all.
    std::vector<i64> base_offsets(p.size.size(), 0);
    i64 globals_top = 0;
    const auto by_alignment = [&p](i32 i) { return p.align[static_cast<std::size_t>(i)]; };
    for (const i32 i : order_by_key(p, globals, by_alignment)) {
        const auto u = static_cast<std::size_t>(i);
        base_offsets[u] = align_up(globals_top, p.align[u]);
        globals_top = base_offsets[u] + p.size[u];
    }
    const i64 base = rest.empty() ? 0 : globals_top;  // each buffer aligns its own offset
    Packer pk(p, rest, base);
    // The packer's offsets are absolute (its cursor starts at `base`).
    auto total = [&]() { return std::max(globals_top, pk.arena()); };
    auto used = [&]() { return other_steps + pk.steps(); };
    auto done = [&]() { return best_arena <= good_enough; };
    // Globals stacked apart can leave alignment padding below the rest that a single
    // order over every buffer does not (buffers align to their own sizes' powers of
    // two; with alignment 1 there is none): those plans are kept where they are smaller,
    // so `best` ends no further above any single strategy than the search's own stop
    // allows (RLX's own plan came first). Their work counts as that run's does.
    auto finish = [&]() {
        const bool affordable =
            static_cast<i64>(globals.size()) * static_cast<i64>(p.nonzero.size()) <= budget;
        if (p.max_align > 1 && !globals.empty() && !done() && affordable) {
            static const Strategy kSingles[] = {Strategy::kBestFit, Strategy::kGreedyConflicts,
                                                Strategy::kGreedyBreadth,
                                                Strategy::kGreedyLifetime};
            for (const Strategy s : kSingles) {
                Placement r = place_single(p, s);
                other_steps += r.steps;
                if (r.arena_size < best_arena) {
                    best_arena = r.arena_size;
                    out.offsets = std::move(r.offsets);
                    out.winner = strategy_names()[static_cast<std::size_t>(s)];
                }
            }
        }
        out.arena_size = best_arena;
        out.steps = used();
        return out;
    };

    // The best split candidate so far: the hill climb starts from it.
    std::vector<i32> climb_order;
    Fit climb_fit = Fit::kFirst;
    i64 climb_arena = INT64_MAX;
    auto consider = [&](const std::string& name, const std::vector<i32>& order, Fit fit) {
        // Only a plan better than the best split candidate matters, so a worse run
        // is cut short as soon as it reaches that arena.
        if (!pk.run(order, fit, climb_arena)) return;
        climb_arena = total();
        climb_order = order;
        climb_fit = fit;
        if (climb_arena < best_arena) {
            best_arena = climb_arena;
            out.offsets = base_offsets;
            for (const i32 i : order) out.offsets[static_cast<std::size_t>(i)] = pk.offset(i);
            out.winner = name + (fit == Fit::kBest ? "+best-fit" : "");
        }
    };

    static const NamedOrder kOrders[] = {
        {"size", order_by_size},         {"conflicts", order_by_conflicts},
        {"lifetime", order_by_lifetime}, {"area", order_by_area},
        {"breadth", order_by_breadth},   {"birth", order_by_birth},
    };
    const bool reduced = rest.size() > kPortfolioLimit;
    const std::size_t num_orders = reduced ? 1 : sizeof(kOrders) / sizeof(kOrders[0]);
    for (std::size_t c = 0; c < num_orders && !done(); ++c) {
        const std::vector<i32> order = kOrders[c].make(p, rest);
        consider(kOrders[c].name, order, Fit::kFirst);
        if (!done()) consider(kOrders[c].name, order, Fit::kBest);
    }
    if (reduced) {
        out.arena_size = best_arena;
        out.steps = used();
        return out;
    }
    if (rest.empty()) return finish();

    // Skyline constructions: one deterministic, then randomised restarts for up to
    // half of what is left of the budget (the hill climb gets the other half).
    const i64 skyline_cost = static_cast<i64>(rest.size()) *
                             (static_cast<i64>(p.num_ranks) + static_cast<i64>(rest.size()));
    if (!done() && used() + skyline_cost <= budget) {
        consider("skyline", skyline_order(p, rest, nullptr, &other_steps), Fit::kFirst);
        Rng rng(0x5C71E000ULL + rest.size());
        const i64 restart_limit = used() + (budget - used()) / 2;
        // Small inputs would otherwise repeat near-identical restarts for the whole
        // half budget; stop after a run of restarts that improve nothing.
        const i64 patience = 64 + static_cast<i64>(rest.size());
        const auto idle_limit = [&]() {
            return best_arena <= near_bound ? kNearPatience : patience;
        };
        for (i64 idle = 0;
             !done() && idle < idle_limit() && used() + skyline_cost <= restart_limit; ++idle) {
            const i64 before = climb_arena;
            consider("skyline-restart", skyline_order(p, rest, &rng, &other_steps), Fit::kFirst);
            if (climb_arena < before) idle = 0;
        }
    }

    if (!done() && used() < budget) {
        // The climb gives up after this many moves without a strict improvement: on
        // inputs already at a local optimum the budget would otherwise be burnt on a flat
        // landscape. A plan ending in the alignment unit the bound ends in already takes
        // the room the bound would (a program's scratch starts at the next multiple of
        // the alignment), so from one the climb takes a short walk only: a small graph a
        // few bytes over an unreachable bound used to climb for a millisecond, a fifth of
        // a small scikit-learn model's compile. So does a plan within 0.1% of the bound.
        const auto n = static_cast<i64>(rest.size());
        const bool near =
            best_arena <= align_up(bound, p.max_align) || best_arena <= near_bound;
        const i64 patience = near ? 64 + 4 * n : 1000 + 50 * n;
        pk.run(climb_order, climb_fit, INT64_MAX);
        const i64 climbed =
            std::max(globals_top, hill_climb(p, pk, climb_order, climb_fit,
                                             std::max(good_enough, globals_top),
                                             budget - other_steps, patience));
        if (climbed < best_arena) {
            best_arena = climbed;
            out.offsets = base_offsets;
            for (const i32 i : climb_order) out.offsets[static_cast<std::size_t>(i)] = pk.offset(i);
            out.winner = "hill-climb";
        }
    }
    return finish();
}

}  // namespace

const std::vector<std::string>& strategy_names() {
    static const std::vector<std::string> names = {
        "rlx", "best-fit", "greedy-conflicts", "greedy-breadth", "greedy-lifetime", "best"};
    return names;
}

bool parse_strategy(const std::string& name, Strategy* out) {
    const auto& names = strategy_names();
    for (std::size_t k = 0; k < names.size(); ++k) {
        if (names[k] == name) {
            *out = static_cast<Strategy>(k);
            return true;
        }
    }
    return false;
}

Placement place_intervals(const std::vector<i64>& sizes, const std::vector<i64>& births,
                          const std::vector<i64>& deaths, i64 alignment, Strategy strategy,
                          i64 budget) {
    const Problem p = make_problem(sizes, births, deaths, alignment);
    if (strategy == Strategy::kBest) return place_best(p, budget);
    return place_single(p, strategy);
}

i64 peak_live_bytes(const std::vector<i64>& sizes, const std::vector<i64>& births,
                    const std::vector<i64>& deaths) {
    const Problem p = make_problem(sizes, births, deaths, 1);
    return peak_live(p, p.nonzero);
}

namespace {

// ---- Binding layer: every argument is validated here, with the offending index
// named, before the engine (which assumes valid input) sees it.

std::string at(const char* name, std::size_t i) {
    return std::string(name) + "[" + std::to_string(i) + "]";
}

void validate(const std::vector<i64>& sizes, const std::vector<i64>& births,
              const std::vector<i64>& deaths) {
    require_length(births, sizes.size(), "births", "len(sizes)");
    require_length(deaths, sizes.size(), "deaths", "len(sizes)");
    if (sizes.size() >= static_cast<std::size_t>(INT32_MAX)) {
        throw py::value_error("too many buffers: " + std::to_string(sizes.size()));
    }
    for (std::size_t i = 0; i < sizes.size(); ++i) {
        if (sizes[i] < 0) {
            throw py::value_error(at("sizes", i) + " = " + std::to_string(sizes[i]) +
                                  " is negative");
        }
        if (deaths[i] < births[i]) {
            throw py::value_error(at("deaths", i) + " = " + std::to_string(deaths[i]) +
                                  " is before " + at("births", i) + " = " +
                                  std::to_string(births[i]));
        }
    }
}

void validate_alignment(i64 alignment) {
    if (alignment <= 0 || (alignment & (alignment - 1)) != 0) {
        throw py::value_error("alignment = " + std::to_string(alignment) +
                              " is not a positive power of two");
    }
}

py::tuple py_place_intervals(const IntArg& sizes_a, const IntArg& births_a,
                             const IntArg& deaths_a, i64 alignment,
                             const std::string& strategy_name, i64 budget) {
    const auto sizes = to_vector(sizes_a, "sizes");
    const auto births = to_vector(births_a, "births");
    const auto deaths = to_vector(deaths_a, "deaths");
    validate(sizes, births, deaths);
    validate_alignment(alignment);
    require_total_fits(sizes, alignment, "sizes");
    Strategy strategy;
    if (!parse_strategy(strategy_name, &strategy)) {
        std::string known;
        for (const auto& s : strategy_names()) known += (known.empty() ? "" : ", ") + s;
        throw py::value_error("strategy = '" + strategy_name + "' is unknown; expected one of " +
                              known);
    }
    if (budget < 0) throw py::value_error("budget = " + std::to_string(budget) + " is negative");
    Placement plan;
    {
        py::gil_scoped_release release;
        plan = place_intervals(sizes, births, deaths, alignment, strategy, budget);
    }
    return py::make_tuple(to_array(plan.offsets), plan.arena_size, plan.steps, plan.winner);
}

i64 py_peak_live_bytes(const IntArg& sizes_a, const IntArg& births_a,
                       const IntArg& deaths_a) {
    const auto sizes = to_vector(sizes_a, "sizes");
    const auto births = to_vector(births_a, "births");
    const auto deaths = to_vector(deaths_a, "deaths");
    validate(sizes, births, deaths);
    require_total_fits(sizes, 1, "sizes");
    py::gil_scoped_release release;
    return peak_live_bytes(sizes, births, deaths);
}

}  // namespace

void register_placement(py::module_& m) {
    m.def("place_intervals", &py_place_intervals, py::arg("sizes"), py::arg("births"),
          py::arg("deaths"), py::arg("alignment"), py::arg("strategy"), py::arg("budget"),
          "Arena offsets for closed live intervals: (offsets, arena_size, steps, winner).");
    m.def(
        "slot_alignment",
        [](i64 size, i64 alignment) {
            validate_alignment(alignment);
            return slot_alignment(size, alignment);
        },
        py::arg("size"), py::arg("alignment"),
        "The alignment of a slot of `size` bytes under the plan's `alignment`.");
    m.def("peak_live_bytes", &py_peak_live_bytes, py::arg("sizes"), py::arg("births"),
          py::arg("deaths"), "Peak over time of the summed sizes of live buffers.");
    py::list names;
    for (const auto& s : strategy_names()) names.append(s);
    m.attr("PLACEMENT_STRATEGIES") = py::tuple(names);
    m.attr("PLACEMENT_DEFAULT_BUDGET") = kDefaultBudget;
    m.attr("PLACEMENT_PORTFOLIO_LIMIT") = kPortfolioLimit;
}

}  // namespace rlx
