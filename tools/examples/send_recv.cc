// The seed's P2P example: rank 0 sends a random 2x2 tensor to rank 1 with blocking send/recv.
// Run under the launcher with 2 ranks:
//
//   bazel run //tools:tuttirun -- -n 2 $(pwd)/bazel-bin/tools/examples/send_recv
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
  tutti::Status st;
  if (c.rank() == 0) {
    Tensor2x2 t = Tensor2x2::Randn(2024);
    t.Print("rank 0 sends");
    st = c.Send(&t.v, sizeof(t.v), 1);
  } else if (c.rank() == 1) {
    Tensor2x2 t;
    t.Print("rank 1 before");
    st = c.Recv(&t.v, sizeof(t.v), 0);
    t.Print("rank 1 after");
  } else {
    fprintf(stderr, "wrong rank %d: this example needs exactly 2 ranks\n", c.rank());
    return 1;
  }
  if (!st.ok()) {
    fprintf(stderr, "%s\n", st.ToString().c_str());
    return 1;
  }
  return 0;
}
