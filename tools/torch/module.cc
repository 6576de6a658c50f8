// The Python extension tutti_torch._C: creates the "tutti" process-group backend for
// torch.distributed (tutti_torch/__init__.py registers it).
#include <pybind11/chrono.h>
#include <torch/csrc/utils/pybind.h>

#include "tools/torch/backend.h"

namespace {

c10::intrusive_ptr<c10d::Backend> CreateBackend(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                                                const std::chrono::duration<float>& timeout) {
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(timeout);
  return c10::make_intrusive<tutti::torch_backend::TuttiBackend>(store, rank, size, ms);
}

}  // namespace

PYBIND11_MODULE(_C, m) {
  m.doc() = "tutti's torch.distributed backend (CPU tensors)";
  m.def("create_backend", &CreateBackend, pybind11::arg("store"), pybind11::arg("rank"), pybind11::arg("size"),
        pybind11::arg("timeout"),
        "Forms a tutti communicator for one process group through its store; torch.distributed calls this for "
        "backend \"tutti\".",
        pybind11::call_guard<pybind11::gil_scoped_release>());
}
