// The pybind11 module rlx_compile._core. Each component registers its own
// functions; flat numpy arrays and scalars cross this boundary, the tensor planner's as
// two read-only objects built (and checked) once: TensorGraph and PlanOptions.
#include <pybind11/pybind11.h>

namespace rlx {
void register_liveness(pybind11::module_& m);
void register_placement(pybind11::module_& m);
void register_memplan(pybind11::module_& m);
void register_shard(pybind11::module_& m);
}  // namespace rlx

PYBIND11_MODULE(_core, m) {
    m.doc() = "rlx-compile C++ core: liveness, arena placement, shard cost search";
    rlx::register_liveness(m);
    rlx::register_placement(m);
    rlx::register_memplan(m);
    rlx::register_shard(m);
}
