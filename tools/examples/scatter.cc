// Seed: scatter of [10, 20, 30, 40] from rank 0: rank r receives element r.
#include "tools/examples/example_main.h"

int main() {
  auto& c = WorldOrDie();
  std::vector<float> all;
  if (c.rank() == 0)
    for (int r = 0; r < c.size(); ++r) all.push_back(10.0f * (r + 1));
  float mine = 0;
  OrDie(c.Scatter(all.data(), &mine, 1, tutti::DataType::kFloat32, /*root=*/0));
  printf("rank %d received %.1f\n", c.rank(), mine);
}
