// Shard cost search (see shard.hpp) and its binding, rlx_compile._core.shard_search.
#include "shard.hpp"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "checked_array.hpp"

namespace rlx {

namespace {

using i64 = std::int64_t;
using std::size_t;

// The rankable workers of one configuration, fastest first; equal rates keep index
// order so that the C++ search and the Python twin break ties the same way.
std::vector<i64> ranked_workers(const ShardConfigs& c, size_t cfg) {
    const i64 lo = c.worker_offsets[cfg];
    const i64 hi = c.worker_offsets[cfg + 1];
    std::vector<i64> out;
    for (i64 w = lo; w < hi; ++w) {
        if (c.worker_rankable[static_cast<size_t>(w)] != 0) out.push_back(w - lo);
    }
    std::stable_sort(out.begin(), out.end(), [&](i64 a, i64 b) {
        return c.worker_rates[static_cast<size_t>(lo + a)] >
               c.worker_rates[static_cast<size_t>(lo + b)];
    });
    return out;
}

}  // namespace

ShardDecisions shard_search(const ShardOptions& o, const ShardConfigs& c) {
    const size_t n_ops = o.op_offsets.size() - 1;
    const size_t n_cfg = c.worker_offsets.size() - 1;
    const size_t n_opts = o.piece_offsets.size() - 1;
    ShardDecisions d;
    for (size_t i = 0; i < n_opts; ++i) {
        d.max_pieces = std::max(d.max_pieces, o.piece_offsets[i + 1] - o.piece_offsets[i]);
    }
    const size_t n_out = n_ops * n_cfg;
    const size_t width = static_cast<size_t>(d.max_pieces);
    const double nan = std::numeric_limits<double>::quiet_NaN();
    d.best.assign(n_out, -1);
    d.assign.assign(n_out * width, -1);
    d.compute.assign(n_out, 0.0);
    d.transfer.assign(n_out, 0.0);
    d.total.assign(n_out, nan);
    d.local.assign(n_out, nan);

    std::vector<i64> order;  // piece indices of one option, largest first
    for (size_t cfg = 0; cfg < n_cfg; ++cfg) {
        const std::vector<i64> ranked = ranked_workers(c, cfg);
        const i64 w_lo = c.worker_offsets[cfg];
        for (size_t op = 0; op < n_ops; ++op) {
            const size_t k = op * n_cfg + cfg;
            const i64 first = o.op_offsets[op];
            const i64 last = o.op_offsets[op + 1];
            if (first == last) continue;  // nothing to cut: no local time either
            i64 total_elems = 0;
            for (i64 p = o.piece_offsets[static_cast<size_t>(first)];
                 p < o.piece_offsets[static_cast<size_t>(first) + 1]; ++p) {
                total_elems += o.piece_elems[static_cast<size_t>(p)];
            }
            const double cost = o.op_cost[op];
            const double local = static_cast<double>(total_elems) * cost / c.local_rate[cfg];
            d.local[k] = local;
            d.total[k] = local;
            for (i64 opt = first; opt < last; ++opt) {
                const size_t oi = static_cast<size_t>(opt);
                const i64 p_lo = o.piece_offsets[oi];
                const i64 n = o.piece_offsets[oi + 1] - p_lo;
                if (n > static_cast<i64>(ranked.size())) continue;  // one piece per worker
                order.resize(static_cast<size_t>(n));
                std::iota(order.begin(), order.end(), i64{0});
                std::stable_sort(order.begin(), order.end(), [&](i64 a, i64 b) {
                    return o.piece_elems[static_cast<size_t>(p_lo + a)] >
                           o.piece_elems[static_cast<size_t>(p_lo + b)];
                });
                double compute = 0.0;
                for (i64 r = 0; r < n; ++r) {
                    const i64 w = ranked[static_cast<size_t>(r)];
                    const i64 elems =
                        o.piece_elems[static_cast<size_t>(p_lo + order[static_cast<size_t>(r)])];
                    const double t = static_cast<double>(elems) * cost /
                                     c.worker_rates[static_cast<size_t>(w_lo + w)];
                    if (t > compute) compute = t;
                }
                i64 bytes = o.sliced_bytes[oi] + o.out_bytes[oi];
                if (c.resident[cfg] == 0) bytes += o.shared_bytes[oi] * n;
                const double transfer =
                    static_cast<double>(bytes) / c.bandwidth[cfg] + c.latency[cfg];
                const double total = compute + transfer;
                if (total < d.total[k]) {
                    d.best[k] = opt;
                    d.compute[k] = compute;
                    d.transfer[k] = transfer;
                    d.total[k] = total;
                    for (i64 r = 0; r < n; ++r) {
                        d.assign[k * width + static_cast<size_t>(order[static_cast<size_t>(r)])] =
                            ranked[static_cast<size_t>(r)];
                    }
                    for (size_t p = static_cast<size_t>(n); p < width; ++p) {
                        d.assign[k * width + p] = -1;
                    }
                }
            }
        }
    }
    return d;
}

namespace {

namespace py = pybind11;

using F64Array = py::array_t<double, py::array::c_style | py::array::forcecast>;

std::vector<double> to_double_vector(const F64Array& a, const char* name) {
    if (a.ndim() != 1) {
        throw py::value_error(std::string(name) + " must be a 1-D array, got rank " +
                              std::to_string(a.ndim()));
    }
    auto view = a.unchecked<1>();
    std::vector<double> out(static_cast<size_t>(view.shape(0)));
    for (py::ssize_t i = 0; i < view.shape(0); ++i) out[static_cast<size_t>(i)] = view(i);
    return out;
}

py::array_t<double> to_double_array(const std::vector<double>& v) {
    py::array_t<double> out(static_cast<py::ssize_t>(v.size()));
    auto m = out.mutable_unchecked<1>();
    for (size_t i = 0; i < v.size(); ++i) m(static_cast<py::ssize_t>(i)) = v[i];
    return out;
}

std::string at(const char* name, size_t i) { return std::string(name) + "[" + std::to_string(i) + "]"; }

// Offsets must start at 0, never decrease and end at the length of what they index.
void check_offsets(const std::vector<i64>& off, size_t end, const char* name, const char* of) {
    if (off.empty()) throw py::value_error(std::string(name) + " must not be empty");
    if (off.front() != 0) throw py::value_error(at(name, 0) + " must be 0");
    for (size_t i = 1; i < off.size(); ++i) {
        if (off[i] < off[i - 1]) {
            throw py::value_error(at(name, i) + " = " + std::to_string(off[i]) +
                                  " is below " + at(name, i - 1));
        }
    }
    if (off.back() != static_cast<i64>(end)) {
        throw py::value_error(std::string(name) + " must end at len(" + of + ") = " +
                              std::to_string(end) + ", got " + std::to_string(off.back()));
    }
}

// Byte and element counts stay below 2^52, so the byte sum the search forms (three
// terms, one times a piece count of at most 2^10) cannot overflow int64; its conversion
// to double rounds to nearest exactly as Python's float(int) does in the twin.
constexpr i64 kCountLimit = i64{1} << 52;
constexpr i64 kPieceLimit = 1024;

void check_counts(const std::vector<i64>& v, i64 min, const char* name) {
    for (size_t i = 0; i < v.size(); ++i) {
        if (v[i] < min || v[i] >= kCountLimit) {
            throw py::value_error(at(name, i) + " = " + std::to_string(v[i]) + " is outside [" +
                                  std::to_string(min) + ", 2^52)");
        }
    }
}

void check_positive(const std::vector<double>& v, const char* name, bool allow_inf) {
    for (size_t i = 0; i < v.size(); ++i) {
        const bool ok = v[i] > 0.0 && (allow_inf || std::isfinite(v[i]));
        if (!ok) throw py::value_error(at(name, i) + " = " + std::to_string(v[i]) + " must be > 0");
    }
}

ShardOptions read_options(const IntArg& op_offsets, const IntArg& piece_offsets,
                          const IntArg& piece_elems, const IntArg& sliced_bytes,
                          const IntArg& shared_bytes, const IntArg& out_bytes,
                          const F64Array& op_cost) {
    ShardOptions o;
    o.op_offsets = to_vector(op_offsets, "op_offsets");
    o.piece_offsets = to_vector(piece_offsets, "piece_offsets");
    o.piece_elems = to_vector(piece_elems, "piece_elems");
    o.sliced_bytes = to_vector(sliced_bytes, "sliced_bytes");
    o.shared_bytes = to_vector(shared_bytes, "shared_bytes");
    o.out_bytes = to_vector(out_bytes, "out_bytes");
    o.op_cost = to_double_vector(op_cost, "op_cost");
    const size_t n_opts = o.sliced_bytes.size();
    require_length(o.shared_bytes, n_opts, "shared_bytes", "len(sliced_bytes)");
    require_length(o.out_bytes, n_opts, "out_bytes", "len(sliced_bytes)");
    require_length(o.piece_offsets, n_opts + 1, "piece_offsets", "len(sliced_bytes) + 1");
    check_offsets(o.op_offsets, n_opts, "op_offsets", "sliced_bytes");
    require_length(o.op_cost, o.op_offsets.size() - 1, "op_cost", "len(op_offsets) - 1");
    check_positive(o.op_cost, "op_cost", /*allow_inf=*/false);
    check_offsets(o.piece_offsets, o.piece_elems.size(), "piece_offsets", "piece_elems");
    check_counts(o.piece_elems, 1, "piece_elems");
    check_counts(o.sliced_bytes, 0, "sliced_bytes");
    check_counts(o.shared_bytes, 0, "shared_bytes");
    check_counts(o.out_bytes, 0, "out_bytes");
    for (size_t i = 0; i < n_opts; ++i) {
        const i64 n = o.piece_offsets[i + 1] - o.piece_offsets[i];
        if (n < 2 || n > kPieceLimit) {
            throw py::value_error("option " + std::to_string(i) + " has " + std::to_string(n) +
                                  " pieces, expected 2.." + std::to_string(kPieceLimit));
        }
    }
    // Options of one op must cover the same output, and the total must stay countable.
    for (size_t op = 0; op + 1 < o.op_offsets.size(); ++op) {
        i64 want = -1;
        for (i64 opt = o.op_offsets[op]; opt < o.op_offsets[op + 1]; ++opt) {
            i64 sum = 0;
            for (i64 p = o.piece_offsets[static_cast<size_t>(opt)];
                 p < o.piece_offsets[static_cast<size_t>(opt) + 1]; ++p) {
                sum += o.piece_elems[static_cast<size_t>(p)];
                if (sum >= kCountLimit) {
                    throw py::value_error("option " + std::to_string(opt) +
                                          " has 2^52 output elements or more");
                }
            }
            if (want >= 0 && sum != want) {
                throw py::value_error("option " + std::to_string(opt) + " covers " +
                                      std::to_string(sum) + " output elements, op " +
                                      std::to_string(op) + "'s first option " +
                                      std::to_string(want));
            }
            want = sum;
        }
    }
    return o;
}

ShardConfigs read_configs(const IntArg& worker_offsets, const F64Array& worker_rates,
                          const IntArg& worker_rankable, const F64Array& bandwidth,
                          const F64Array& latency, const IntArg& resident,
                          const F64Array& local_rate) {
    ShardConfigs c;
    c.worker_offsets = to_vector(worker_offsets, "worker_offsets");
    c.worker_rates = to_double_vector(worker_rates, "worker_rates");
    c.worker_rankable = to_vector(worker_rankable, "worker_rankable");
    c.bandwidth = to_double_vector(bandwidth, "bandwidth");
    c.latency = to_double_vector(latency, "latency");
    c.resident = to_vector(resident, "resident");
    c.local_rate = to_double_vector(local_rate, "local_rate");
    const size_t n_cfg = c.bandwidth.size();
    require_length(c.latency, n_cfg, "latency", "len(bandwidth)");
    require_length(c.resident, n_cfg, "resident", "len(bandwidth)");
    require_length(c.local_rate, n_cfg, "local_rate", "len(bandwidth)");
    require_length(c.worker_offsets, n_cfg + 1, "worker_offsets", "len(bandwidth) + 1");
    check_offsets(c.worker_offsets, c.worker_rates.size(), "worker_offsets", "worker_rates");
    require_length(c.worker_rankable, c.worker_rates.size(), "worker_rankable",
                   "len(worker_rates)");
    for (size_t w = 0; w < c.worker_rates.size(); ++w) {
        // An excluded worker's rate is never read; a ranked one must be a real speed.
        if (c.worker_rankable[w] != 0 &&
            !(c.worker_rates[w] > 0.0 && std::isfinite(c.worker_rates[w]))) {
            throw py::value_error(at("worker_rates", w) + " = " +
                                  std::to_string(c.worker_rates[w]) +
                                  " must be finite and > 0 for a rankable worker");
        }
    }
    check_positive(c.bandwidth, "bandwidth", /*allow_inf=*/true);
    check_positive(c.local_rate, "local_rate", /*allow_inf=*/false);
    for (size_t i = 0; i < n_cfg; ++i) {
        if (!(c.latency[i] >= 0.0 && std::isfinite(c.latency[i]))) {
            throw py::value_error(at("latency", i) + " = " + std::to_string(c.latency[i]) +
                                  " must be finite and >= 0");
        }
    }
    return c;
}

py::tuple py_shard_search(const IntArg& op_offsets, const IntArg& piece_offsets,
                          const IntArg& piece_elems, const IntArg& sliced_bytes,
                          const IntArg& shared_bytes, const IntArg& out_bytes,
                          const F64Array& op_cost,
                          const IntArg& worker_offsets, const F64Array& worker_rates,
                          const IntArg& worker_rankable, const F64Array& bandwidth,
                          const F64Array& latency, const IntArg& resident,
                          const F64Array& local_rate) {
    const ShardOptions o = read_options(op_offsets, piece_offsets, piece_elems, sliced_bytes,
                                        shared_bytes, out_bytes, op_cost);
    const ShardConfigs c = read_configs(worker_offsets, worker_rates, worker_rankable,
                                        bandwidth, latency, resident, local_rate);
    ShardDecisions d;
    {
        py::gil_scoped_release release;
        d = shard_search(o, c);
    }
    return py::make_tuple(d.max_pieces, to_array(d.best), to_array(d.assign),
                          to_double_array(d.compute), to_double_array(d.transfer),
                          to_double_array(d.total), to_double_array(d.local));
}

}  // namespace

void register_shard(py::module_& m) {
    m.def("shard_search", &py_shard_search, py::arg("op_offsets"), py::arg("piece_offsets"),
          py::arg("piece_elems"), py::arg("sliced_bytes"), py::arg("shared_bytes"),
          py::arg("out_bytes"), py::arg("op_cost"), py::arg("worker_offsets"), py::arg("worker_rates"),
          py::arg("worker_rankable"), py::arg("bandwidth"), py::arg("latency"),
          py::arg("resident"), py::arg("local_rate"),
          "Best cut and worker assignment per (op, configuration): (max_pieces, best, "
          "assign, compute, transfer, total, local), op-major.");
    m.attr("SHARD_MAX_PIECES") = kPieceLimit;
}

}  // namespace rlx
