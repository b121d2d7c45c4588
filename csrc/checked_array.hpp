// Helpers shared by the binding layer: every array that crosses from Python is
// checked here (dtype, rank, length, value range) before C++ code indexes it.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>
#include <vector>

namespace rlx {

namespace py = pybind11;

using I64Array = py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>;

// Copies a 1-D integer array into a vector, failing with a ValueError that names
// the argument when the rank is wrong.
inline std::vector<std::int64_t> to_vector(const I64Array& a, const char* name) {
    if (a.ndim() != 1) {
        throw py::value_error(std::string(name) + " must be a 1-D array, got rank " +
                              std::to_string(a.ndim()));
    }
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

}  // namespace rlx
