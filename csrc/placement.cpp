// Arena placement engine. See placement.hpp for the contract.
//
// Every strategy is "an order + a fit rule": buffers are placed one at a time, each
// at an offset chosen among the gaps left by the already placed buffers whose live
// intervals intersect its own. The cost of one placement is therefore the cost of
// finding those time-conflicting blocks. A flat list of placed blocks (RLX's and
// TFLite's approach) makes that O(n) per placement and O(n^2) overall; here a
// segment tree over (compressed) time answers it in O(log T + k), k being the
// number of conflicting placed blocks, which is small for DNN-shaped lifetimes.
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
    i64 align = 1;
    std::vector<i32> nonzero;  // buffers that take space, in index order
};

Problem make_problem(const std::vector<i64>& sizes, const std::vector<i64>& births,
                     const std::vector<i64>& deaths, i64 align) {
    Problem p;
    p.size = sizes;
    p.birth = births;
    p.death = deaths;
    p.align = align;
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

// Placed blocks indexed by time, supporting "which placed blocks intersect [lo, hi]"
// and LIFO undo (the hill climb re-places suffixes of an order).
//
// A placed block X intersects the query [b, d] iff X contains b, or X starts in
// (b, d]; the two sets are disjoint. The first is a stabbing query on a segment
// tree whose nodes list the blocks covering them (each block sits in O(log T)
// canonical nodes, and exactly one of them is on the root-to-leaf path of b). The
// second walks per-rank lists of blocks by birth, skipping empty ranks with a
// two-level bitset. Lists are singly linked through flat vectors and pushed at the
// head, so undoing the most recent placement is popping heads.
class Packer {
public:
    Packer(const Problem& p, i64 base) : p_(p), base_(base) {
        const auto n = p.size.size();
        const auto ranks = static_cast<std::size_t>(std::max<i32>(p.num_ranks, 1));
        while (leaves_ < ranks) leaves_ <<= 1;
        node_head_.assign(2 * leaves_, -1);
        birth_head_.assign(ranks, -1);
        birth_next_.assign(n, -1);
        words_.assign((ranks + 63) / 64, 0);
        summary_.assign((words_.size() + 63) / 64, 0);
        offset_.assign(n, 0);
        arena_.push_back(0);
    }

    i64 steps() const { return steps_; }
    i64 arena() const { return arena_.back(); }
    std::size_t depth() const { return placed_.size(); }
    i64 offset(i32 i) const { return offset_[static_cast<std::size_t>(i)]; }

    // Chooses an offset for buffer i under `fit` and places it there.
    i64 place(i32 i, Fit fit) {
        const auto u = static_cast<std::size_t>(i);
        collect_conflicts(p_.lo[u], p_.hi[u]);
        std::sort(occ_.begin(), occ_.end());
        steps_ += static_cast<i64>(occ_.size()) + 1;
        const i64 off = fit == Fit::kFirst ? first_fit(p_.size[u]) : best_fit(p_.size[u]);
        activate(i, off);
        return off;
    }

    // Places buffer i at a known offset (restoring a previous plan) without a search.
    void activate(i32 i, i64 off) {
        const auto u = static_cast<std::size_t>(i);
        offset_[u] = off;
        entry_mark_.push_back(entries_.size());
        std::size_t l = static_cast<std::size_t>(p_.lo[u]) + leaves_;
        std::size_t r = static_cast<std::size_t>(p_.hi[u]) + leaves_ + 1;
        for (; l < r; l >>= 1, r >>= 1) {
            if (l & 1) push_entry(l++, i);
            if (r & 1) push_entry(--r, i);
        }
        const auto b = static_cast<std::size_t>(p_.lo[u]);
        birth_next_[u] = birth_head_[b];
        if (birth_head_[b] < 0) set_bit(b);
        birth_head_[b] = i;
        placed_.push_back(i);
        arena_.push_back(std::max(arena_.back(), off + p_.size[u]));
        steps_ += 1;
    }

    // Removes placements until only the first `depth` remain.
    void undo_to(std::size_t depth) {
        while (placed_.size() > depth) {
            const i32 i = placed_.back();
            const auto u = static_cast<std::size_t>(i);
            placed_.pop_back();
            arena_.pop_back();
            const std::size_t mark = entry_mark_.back();
            entry_mark_.pop_back();
            while (entries_.size() > mark) {
                node_head_[entries_.back().node] = entries_.back().next;
                entries_.pop_back();
            }
            const auto b = static_cast<std::size_t>(p_.lo[u]);
            birth_head_[b] = birth_next_[u];
            if (birth_head_[b] < 0) clear_bit(b);
        }
    }

private:
    struct Entry {
        std::size_t node;
        i32 buffer;
        i32 next;
    };

    void push_entry(std::size_t node, i32 buffer) {
        entries_.push_back({node, buffer, node_head_[node]});
        node_head_[node] = static_cast<i32>(entries_.size() - 1);
    }

    void set_bit(std::size_t t) {
        words_[t >> 6] |= u64{1} << (t & 63);
        summary_[t >> 12] |= u64{1} << ((t >> 6) & 63);
    }

    void clear_bit(std::size_t t) {
        words_[t >> 6] &= ~(u64{1} << (t & 63));
        if (words_[t >> 6] == 0) summary_[t >> 12] &= ~(u64{1} << ((t >> 6) & 63));
    }

    // Smallest rank in [from, to] whose birth list is non-empty, or -1.
    i64 next_nonempty(std::size_t from, std::size_t to) const {
        if (from > to) return -1;
        std::size_t w = from >> 6;
        u64 bits = words_[w] & (~u64{0} << (from & 63));
        if (bits == 0) {
            const std::size_t last_word = to >> 6;
            ++w;
            for (;;) {
                if (w > last_word) return -1;
                const u64 s = summary_[w >> 6] & (~u64{0} << (w & 63));
                if (s != 0) {
                    w = ((w >> 6) << 6) + static_cast<std::size_t>(__builtin_ctzll(s));
                    break;
                }
                w = ((w >> 6) + 1) << 6;
            }
            if (w > last_word) return -1;
            bits = words_[w];
        }
        const std::size_t t = (w << 6) + static_cast<std::size_t>(__builtin_ctzll(bits));
        return t <= to ? static_cast<i64>(t) : -1;
    }

    void collect_conflicts(i32 lo, i32 hi) {
        occ_.clear();
        for (std::size_t node = static_cast<std::size_t>(lo) + leaves_; node >= 1; node >>= 1) {
            for (i32 e = node_head_[node]; e >= 0; e = entries_[static_cast<std::size_t>(e)].next) {
                add_occupied(entries_[static_cast<std::size_t>(e)].buffer);
            }
        }
        const auto to = static_cast<std::size_t>(hi);
        for (i64 t = next_nonempty(static_cast<std::size_t>(lo) + 1, to); t >= 0;
             t = next_nonempty(static_cast<std::size_t>(t) + 1, to)) {
            for (i32 j = birth_head_[static_cast<std::size_t>(t)]; j >= 0;
                 j = birth_next_[static_cast<std::size_t>(j)]) {
                add_occupied(j);
            }
        }
    }

    void add_occupied(i32 j) {
        const auto u = static_cast<std::size_t>(j);
        occ_.emplace_back(offset_[u], offset_[u] + p_.size[u]);
    }

    // RLX's scan: walk the conflicting blocks by offset with a cursor at the highest
    // end seen so far; the first aligned cursor position that fits wins.
    i64 first_fit(i64 size) const {
        i64 cursor = base_;
        for (const auto& [start, end] : occ_) {
            const i64 a = align_up(cursor, p_.align);
            if (a + size <= start) return a;
            cursor = std::max(cursor, end);
        }
        return align_up(cursor, p_.align);
    }

    // The smallest bounded gap that fits (the gap below the first block included, the
    // case XNNPACK's planner missed), ties to the lowest offset; the open space above
    // the highest conflicting block only when no gap fits.
    i64 best_fit(i64 size) const {
        i64 cursor = base_;
        i64 best = -1;
        i64 best_room = 0;
        for (const auto& [start, end] : occ_) {
            const i64 a = align_up(cursor, p_.align);
            if (a + size <= start && (best < 0 || start - a < best_room)) {
                best = a;
                best_room = start - a;
                if (best_room == size) return best;  // no gap can be tighter
            }
            cursor = std::max(cursor, end);
        }
        return best >= 0 ? best : align_up(cursor, p_.align);
    }

    const Problem& p_;
    i64 base_;
    std::size_t leaves_ = 1;
    std::vector<i32> node_head_;
    std::vector<Entry> entries_;
    std::vector<std::size_t> entry_mark_;
    std::vector<i32> birth_head_, birth_next_;
    std::vector<u64> words_, summary_;
    std::vector<i64> offset_;
    std::vector<i32> placed_;
    std::vector<i64> arena_;
    std::vector<std::pair<i64, i64>> occ_;
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
// With `rng`, each choice is randomised among near-best buffers (restarts).
// Cost is O(n * (T + n)), counted in `steps`; callers gate it by the budget.
std::vector<i32> skyline_order(const Problem& p, const std::vector<i32>& ids, Rng* rng,
                               i64* steps) {
    const auto ranks = static_cast<std::size_t>(p.num_ranks);
    std::vector<i64> height(ranks, 0);
    std::vector<i64> demand(ranks + 1, 0);
    for (const i32 i : ids) {
        demand[static_cast<std::size_t>(p.lo[static_cast<std::size_t>(i)])] += 1;
        demand[static_cast<std::size_t>(p.hi[static_cast<std::size_t>(i)]) + 1] -= 1;
    }
    for (std::size_t t = 1; t <= ranks; ++t) demand[t] += demand[t - 1];
    std::vector<i32> todo = ids;
    std::vector<i32> order;
    order.reserve(ids.size());
    while (!todo.empty()) {
        std::size_t low = ranks;
        for (std::size_t t = 0; t < ranks; ++t) {
            if (demand[t] > 0 && (low == ranks || height[t] < height[low])) low = t;
        }
        const i64 floor = height[low];
        std::size_t l = low, r = low;
        while (l > 0 && demand[l - 1] > 0 && height[l - 1] == floor) --l;
        while (r + 1 < ranks && demand[r + 1] > 0 && height[r + 1] == floor) ++r;
        *steps += static_cast<i64>(ranks + todo.size());
        std::size_t pick = todo.size();
        long double pick_key = -1.0L;
        for (std::size_t k = 0; k < todo.size(); ++k) {
            const auto u = static_cast<std::size_t>(todo[k]);
            const auto lo = static_cast<std::size_t>(p.lo[u]);
            const auto hi = static_cast<std::size_t>(p.hi[u]);
            if (lo < l || hi > r) continue;
            // Covering the whole stretch leaves no sliver; then wider, then taller.
            long double key = static_cast<long double>(hi - lo + 1) * 4.0L;
            if (lo == l && hi == r) key += static_cast<long double>(ranks) * 8.0L;
            key += static_cast<long double>(p.size[u]) / static_cast<long double>(INT64_MAX);
            if (rng != nullptr) {
                key *= 1.0L + 0.5L * static_cast<long double>(rng->next() >> 11) / 9007199254740992.0L;
            }
            if (key > pick_key) {
                pick_key = key;
                pick = k;
            }
        }
        if (pick == todo.size()) {
            i64 raise = INT64_MAX;
            if (l > 0 && demand[l - 1] > 0) raise = std::min(raise, height[l - 1]);
            if (r + 1 < ranks && demand[r + 1] > 0) raise = std::min(raise, height[r + 1]);
            for (std::size_t t = l; t <= r; ++t) height[t] = raise;
            continue;
        }
        const i32 i = todo[pick];
        todo[pick] = todo.back();
        todo.pop_back();
        const auto u = static_cast<std::size_t>(i);
        const i64 top = align_up(floor, p.align) + p.size[u];
        for (auto t = static_cast<std::size_t>(p.lo[u]); t <= static_cast<std::size_t>(p.hi[u]);
             ++t) {
            height[t] = top;
            demand[t] -= 1;
        }
        order.push_back(i);
    }
    return order;
}

// Places `order` from scratch. Stops early (returning false) once the arena reaches
// `stop_at`, because the caller only wants strictly smaller plans.
bool run_order(Packer& pk, const std::vector<i32>& order, Fit fit, i64 stop_at) {
    pk.undo_to(0);
    for (const i32 i : order) {
        pk.place(i, fit);
        if (pk.arena() >= stop_at) return false;
    }
    return true;
}

// Local improvement of a complete placement held by `pk` (made from `order`): move a
// buffer that touches the arena's top to a random earlier position in the order,
// re-place the changed suffix, and keep the move if the arena does not grow. Equal
// arenas are accepted so the search can walk across plateaus, which are the common
// case. This is TVM's hill_climb idea with two changes: the perturbation targets the
// buffers that define the arena (moving any other buffer rarely helps), and only the
// suffix after the moved position is re-placed, undoing the rest from the packer's
// LIFO state. Everything is seeded, so the walk is reproducible.
i64 hill_climb(const Problem& p, Packer& pk, std::vector<i32>& order, Fit fit, i64 lower_bound,
               i64 step_limit) {
    const std::size_t n = order.size();
    i64 arena = pk.arena();
    if (n < 2) return arena;
    Rng rng(0x5EED0000ULL + n);
    std::vector<std::size_t> pos(p.size.size(), 0);
    for (std::size_t k = 0; k < n; ++k) pos[static_cast<std::size_t>(order[k])] = k;
    std::vector<i64> saved(n, 0);
    std::vector<i32> top;
    // Give up after this many moves without a strict improvement: on inputs already
    // at a local optimum the budget would otherwise be burnt on a flat landscape.
    const i64 patience = 1000 + 50 * static_cast<i64>(n);
    i64 since_improvement = 0;
    while (pk.steps() < step_limit && arena > lower_bound && since_improvement < patience) {
        ++since_improvement;
        top.clear();
        for (const i32 i : order) {
            if (pk.offset(i) + p.size[static_cast<std::size_t>(i)] == arena) top.push_back(i);
        }
        const i32 moved = top[rng.below(top.size())];
        const std::size_t from = pos[static_cast<std::size_t>(moved)];
        if (from == 0) continue;
        const std::size_t to = rng.below(from);
        for (std::size_t k = to; k < n; ++k) saved[k] = pk.offset(order[k]);
        pk.undo_to(to);
        std::rotate(order.begin() + static_cast<std::ptrdiff_t>(to),
                    order.begin() + static_cast<std::ptrdiff_t>(from),
                    order.begin() + static_cast<std::ptrdiff_t>(from) + 1);
        bool kept = true;
        for (std::size_t k = to; k < n; ++k) {
            pk.place(order[k], fit);
            if (pk.arena() > arena) {
                kept = false;
                break;
            }
        }
        if (kept) {
            if (pk.arena() < arena) since_improvement = 0;
            arena = pk.arena();
            for (std::size_t k = to; k <= from; ++k) pos[static_cast<std::size_t>(order[k])] = k;
            continue;
        }
        // Reject: restore the old order and re-activate its offsets without searching.
        pk.undo_to(to);
        std::rotate(order.begin() + static_cast<std::ptrdiff_t>(to),
                    order.begin() + static_cast<std::ptrdiff_t>(to) + 1,
                    order.begin() + static_cast<std::ptrdiff_t>(from) + 1);
        for (std::size_t k = to; k < n; ++k) pk.activate(order[k], saved[k]);
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
    Packer pk(p, 0);
    for (const i32 i : order) pk.place(i, fit);
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

Placement place_best(const Problem& p, i64 budget) {
    Placement out;
    out.offsets.assign(p.size.size(), 0);
    if (p.nonzero.empty()) {
        out.winner = "empty";
        return out;
    }
    const i64 lower_bound = peak_live(p, p.nonzero);
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

    std::vector<i64> base_offsets(p.size.size(), 0);
    i64 globals_top = 0;
    for (const i32 i : order_by_size(p, globals)) {
        const auto u = static_cast<std::size_t>(i);
        base_offsets[u] = align_up(globals_top, p.align);
        globals_top = base_offsets[u] + p.size[u];
    }
    const i64 base = rest.empty() ? 0 : align_up(globals_top, p.align);
    Packer pk(p, base);
    // The packer's offsets are absolute (its cursor starts at `base`).
    auto total = [&]() { return std::max(globals_top, pk.arena()); };
    auto used = [&]() { return other_steps + pk.steps(); };
    auto done = [&]() { return best_arena <= lower_bound; };

    // The best split candidate so far: the hill climb starts from it.
    std::vector<i32> climb_order;
    Fit climb_fit = Fit::kFirst;
    i64 climb_arena = INT64_MAX;
    auto consider = [&](const std::string& name, const std::vector<i32>& order, Fit fit) {
        // Only a plan better than the best split candidate matters, so a worse run
        // is cut short as soon as it reaches that arena.
        if (!run_order(pk, order, fit, climb_arena)) return;
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
    if (reduced || rest.empty()) {
        out.arena_size = best_arena;
        out.steps = used();
        return out;
    }

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
        for (i64 idle = 0; !done() && idle < patience && used() + skyline_cost <= restart_limit;
             ++idle) {
            const i64 before = climb_arena;
            consider("skyline-restart", skyline_order(p, rest, &rng, &other_steps), Fit::kFirst);
            if (climb_arena < before) idle = 0;
        }
    }

    if (!done() && used() < budget) {
        run_order(pk, climb_order, climb_fit, INT64_MAX);
        // Below max(LB, globals) the total cannot drop any further.
        hill_climb(p, pk, climb_order, climb_fit, std::max(lower_bound, globals_top),
                   budget - other_steps);
        if (total() < best_arena) {
            best_arena = total();
            out.offsets = base_offsets;
            for (const i32 i : climb_order) out.offsets[static_cast<std::size_t>(i)] = pk.offset(i);
            out.winner = "hill-climb";
        }
    }
    out.arena_size = best_arena;
    out.steps = used();
    return out;
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
    m.def("peak_live_bytes", &py_peak_live_bytes, py::arg("sizes"), py::arg("births"),
          py::arg("deaths"), "Peak over time of the summed sizes of live buffers.");
    py::list names;
    for (const auto& s : strategy_names()) names.append(s);
    m.attr("PLACEMENT_STRATEGIES") = py::tuple(names);
    m.attr("PLACEMENT_DEFAULT_BUDGET") = kDefaultBudget;
    m.attr("PLACEMENT_PORTFOLIO_LIMIT") = kPortfolioLimit;
}

}  // namespace rlx
