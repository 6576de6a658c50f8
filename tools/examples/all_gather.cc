// Seed: all_gather of [rank]: every rank holds [0, 1, ..., n-1].
#include "tools/examples/example_main.h"

int main() {
  auto& c = WorldOrDie();
  float mine = static_cast<float>(c.rank());
  std::vector<float> all(c.size());
  OrDie(c.AllGather(&mine, all.data(), 1, tutti::DataType::kFloat32));
  printf("rank %d: [", c.rank());
  for (size_t i = 0; i < all.size(); ++i) printf("%s%.1f", i ? ", " : "", all[i]);
  printf("]\n");
}
