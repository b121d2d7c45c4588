// Helpers shared by the binding layer: every array that crosses from Python is
// checked here (dtype, rank, length, value range) before C++ code indexes it.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <climits>
#include <string>
#include <vector>

namespace rlx {

namespace py = pybind11;

using I64Array = py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>;

// An integer array argument as Python passed it: to_vector checks its dtype before
// converting, so a float array is refused instead of truncated.
using IntArg = py::array;

// Copies a 1-D integer (or bool) array into a vector, failing with a ValueError that
// names the argument when the rank or dtype is wrong or a uint64 value does not fit.
inline std::vector<std::int64_t> to_vector(const IntArg& arg, const char* name) {
    const char kind = arg.dtype().kind();
    if (kind != 'i' && kind != 'u' && kind != 'b') {
        throw py::value_error(std::string(name) + " must be an integer array, got dtype " +
                              std::string(py::str(arg.dtype())));
    }
    if (arg.ndim() != 1) {
        throw py::value_error(std::string(name) + " must be a 1-D array, got rank " +
                              std::to_string(arg.ndim()));
    }
    if (kind == 'u' && arg.itemsize() == 8) {
        const auto wide = py::array_t<std::uint64_t, py::array::forcecast>::ensure(arg);
        auto u = wide.unchecked<1>();
        for (py::ssize_t i = 0; i < u.shape(0); ++i) {
            if (u(i) > static_cast<std::uint64_t>(INT64_MAX)) {
                throw py::value_error(std::string(name) + "[" + std::to_string(i) +
                                      "] does not fit in int64");
            }
        }
    }
    const auto a = I64Array::ensure(arg);  // a contiguous int64 copy where needed
    auto view = a.unchecked<1>();
    std::vector<std::int64_t> out(static_cast<std::size_t>(view.shape(0)));
    for (py::ssize_t i = 0; i < view.shape(0); ++i) out[static_cast<std::size_t>(i)] = view(i);
    return out;
}

inline I64Array to_array(const std::vector<std::int64_t>& v) {
    I64Array out(static_cast<py::ssize_t>(v.size()));
    auto m = out.mutable_unchecked<1>();
    for (std::size_t i = 0; i < v.size(); ++i) m(static_cast<py::ssize_t>(i)) = v[i];
    return out;
}

template <typename T>
void require_length(const std::vector<T>& v, std::size_t n, const char* name,
                    const char* expected) {
    if (v.size() != n) {
        throw py::value_error(std::string(name) + " has length " + std::to_string(v.size()) +
                              ", expected " + expected + " = " + std::to_string(n));
    }
}

// Offsets are at most the sum of all (aligned) sizes; keeping that sum below 2^62
// rules out overflow anywhere in the engines.
inline void require_total_fits(const std::vector<std::int64_t>& sizes, std::int64_t alignment,
                               const char* name) {
    constexpr std::int64_t kLimit = std::int64_t{1} << 62;
    std::int64_t total = 0;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
        if (sizes[i] > kLimit - alignment || total > kLimit - alignment - sizes[i]) {
            throw py::value_error(std::string("the sizes sum past 2^62 bytes at ") + name + "[" +
                                  std::to_string(i) + "]");
        }
        total += sizes[i] + alignment;
    }
}

}  // namespace rlx
