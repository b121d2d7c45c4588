#include "liveness.hpp"

#include <algorithm>
#include <string>

#include "checked_array.hpp"

namespace rlx {

Intervals liveness_intervals(const std::vector<std::int64_t>& producer_step,
                             const std::vector<std::int64_t>& consumer_offsets,
                             const std::vector<std::int64_t>& consumer_steps,
                             const std::vector<std::int64_t>& is_output, std::int64_t num_steps) {
    const std::size_t n = producer_step.size();
    Intervals out;
    out.birth = producer_step;
    out.death = producer_step;
    for (std::size_t t = 0; t < n; ++t) {
        const auto begin = static_cast<std::size_t>(consumer_offsets[t]);
        const auto end = static_cast<std::size_t>(consumer_offsets[t + 1]);
        std::int64_t death = out.death[t];
        for (std::size_t i = begin; i < end; ++i) death = std::max(death, consumer_steps[i]);
        if (is_output[t] != 0) death = std::max(death, num_steps);
        out.death[t] = death;
    }
    return out;
}

namespace {

py::tuple py_liveness_intervals(const IntArg& producer_step, const IntArg& consumer_offsets,
                                const IntArg& consumer_steps, const IntArg& is_output,
                                std::int64_t num_steps) {
    auto producer = to_vector(producer_step, "producer_step");
    auto offsets = to_vector(consumer_offsets, "consumer_offsets");
    auto consumers = to_vector(consumer_steps, "consumer_steps");
    auto outputs = to_vector(is_output, "is_output");
    const std::size_t n = producer.size();
    require_length(offsets, n + 1, "consumer_offsets", "len(producer_step) + 1");
    require_length(outputs, n, "is_output", "len(producer_step)");
    if (num_steps < 0) throw py::value_error("num_steps must be >= 0");
    if (offsets.front() != 0) throw py::value_error("consumer_offsets[0] must be 0");
    if (static_cast<std::size_t>(offsets.back()) != consumers.size()) {
        throw py::value_error("consumer_offsets[-1] must equal len(consumer_steps)");
    }
    // Offsets first: the value checks below index consumer_steps through them.
    for (std::size_t t = 0; t < n; ++t) {
        if (offsets[t + 1] < offsets[t]) {
            throw py::value_error("consumer_offsets is not non-decreasing at index " +
                                  std::to_string(t + 1));
        }
    }
    for (std::size_t t = 0; t < n; ++t) {
        if (producer[t] < 0 || producer[t] >= num_steps) {
            throw py::value_error("producer_step[" + std::to_string(t) + "] = " +
                                  std::to_string(producer[t]) + " is outside [0, num_steps)");
        }
        for (auto i = offsets[t]; i < offsets[t + 1]; ++i) {
            const auto s = consumers[static_cast<std::size_t>(i)];
            if (s <= producer[t] || s >= num_steps) {
                throw py::value_error("consumer_steps[" + std::to_string(i) + "] = " +
                                      std::to_string(s) + " of tensor " + std::to_string(t) +
                                      " is outside (producer_step, num_steps)");
            }
        }
    }
    Intervals iv;
    {
        py::gil_scoped_release release;
        iv = liveness_intervals(producer, offsets, consumers, outputs, num_steps);
    }
    return py::make_tuple(to_array(iv.birth), to_array(iv.death));
}

}  // namespace

void register_liveness(py::module_& m) {
    m.def("liveness_intervals", &py_liveness_intervals, py::arg("producer_step"),
          py::arg("consumer_offsets"), py::arg("consumer_steps"), py::arg("is_output"),
          py::arg("num_steps"),
          "Closed live intervals (birth, death) of every tensor from a schedule in CSR form.");
}

}  // namespace rlx
