// Seed: gather of [rank] to rank 0.
#include "tools/examples/example_main.h"

int main() {
  auto& c = WorldOrDie();
  float mine = static_cast<float>(c.rank());
  std::vector<float> all(c.rank() == 0 ? c.size() : 0);
  OrDie(c.Gather(&mine, all.data(), 1, tutti::DataType::kFloat32, /*root=*/0));
  if (c.rank() == 0) {
    printf("rank 0 gathered [");
    for (size_t i = 0; i < all.size(); ++i) printf("%s%.1f", i ? ", " : "", all[i]);
    printf("]\n");
  }
}
