// Seed: a barrier where rank 0 sleeps first: nobody passes it before rank 0 arrives.
#include <chrono>
#include <thread>

#include "tools/examples/example_main.h"

int main() {
  auto& c = WorldOrDie();
  OrDie(c.Barrier());  // everyone has started
  auto t0 = std::chrono::steady_clock::now();
  if (c.rank() == 0) std::this_thread::sleep_for(std::chrono::seconds(1));
  OrDie(c.Barrier());
  double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  printf("rank %d passed the barrier after %.1f s\n", c.rank(), waited);
}
