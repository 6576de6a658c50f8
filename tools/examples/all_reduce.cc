// Seed: all_reduce (sum) of ones * rank: every rank holds 0 + 1 + ... + (n-1).
#include "tools/examples/example_main.h"
#include "tools/examples/tensor.h"

int main() {
  auto& c = WorldOrDie();
  Tensor2x2 t;
  for (auto& row : t.v)
    for (float& x : row) x = static_cast<float>(c.rank());
  OrDie(c.AllReduce(&t.v, &t.v, 4, tutti::DataType::kFloat32, tutti::RedOp::kSum));
  char label[32];
  snprintf(label, sizeof(label), "rank %d", c.rank());
  t.Print(label);
}
