// Seed: reduce_scatter of [1, 10, 100, 1000] * rank on 4 ranks: rank r holds the r-th column
// sum, [6, 60, 600, 6000][r].
#include "tools/examples/example_main.h"

int main() {
  auto& c = WorldOrDie();
  std::vector<float> in(c.size());
  float scale = 1;
  for (int j = 0; j < c.size(); ++j, scale *= 10) in[j] = scale * c.rank();
  float out = 0;
  OrDie(c.ReduceScatter(in.data(), &out, 1, tutti::DataType::kFloat32, tutti::RedOp::kSum));
  printf("rank %d: %.1f\n", c.rank(), out);
}
