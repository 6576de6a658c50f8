// Seed: broadcast of a random 2x2 tensor from rank 0.   tuttirun -n 4 .../broadcast
#include "tools/examples/example_main.h"
#include "tools/examples/tensor.h"

int main() {
  auto& c = WorldOrDie();
  Tensor2x2 t = c.rank() == 0 ? Tensor2x2::Randn(42) : Tensor2x2{};
  OrDie(c.Broadcast(&t.v, &t.v, 4, tutti::DataType::kFloat32, /*root=*/0));
  char label[32];
  snprintf(label, sizeof(label), "rank %d", c.rank());
  t.Print(label);
}
