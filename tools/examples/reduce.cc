// Seed: reduce (sum) of ones * rank to rank 0; with 4 ranks rank 0 holds 6 everywhere.
#include "tools/examples/example_main.h"
#include "tools/examples/tensor.h"

int main() {
  auto& c = WorldOrDie();
  Tensor2x2 t;
  for (auto& row : t.v)
    for (float& x : row) x = static_cast<float>(c.rank());
  OrDie(c.Reduce(&t.v, &t.v, 4, tutti::DataType::kFloat32, tutti::RedOp::kSum, /*root=*/0));
  if (c.rank() == 0) t.Print("rank 0 after reduce");
}
