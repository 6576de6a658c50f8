// The seed's non-blocking P2P: isend/irecv return a Work; wait() before touching the data.
//
//   bazel run //tools:tuttirun -- -n 2 $(pwd)/bazel-bin/tools/examples/isend_irecv
#include <cstdio>

#include "core/communicator.h"
#include "tools/examples/tensor.h"

int main() {
  auto comm = tutti::Communicator::InitFromEnv();
  if (!comm.ok()) {
    fprintf(stderr, "%s\n", comm.status().ToString().c_str());
    return 1;
  }
  auto& c = **comm;
  if (c.size() != 2) {
    fprintf(stderr, "this example needs exactly 2 ranks\n");
    return 1;
  }
  Tensor2x2 t = c.rank() == 0 ? Tensor2x2::Randn(7) : Tensor2x2{};
  if (c.rank() == 1) t.Print("rank 1 before");
  auto work = c.rank() == 0 ? c.ISend(&t.v, sizeof(t.v), 1) : c.IRecv(&t.v, sizeof(t.v), 0);
  if (!work.ok()) {
    fprintf(stderr, "%s\n", work.status().ToString().c_str());
    return 1;
  }
  // ... other work could happen here ...
  tutti::Status st = work->Wait();
  if (!st.ok()) {
    fprintf(stderr, "%s\n", st.ToString().c_str());
    return 1;
  }
  t.Print(c.rank() == 0 ? "rank 0 sent" : "rank 1 after");
  return 0;
}
