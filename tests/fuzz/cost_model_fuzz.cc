// Fuzz target: cost-model strings (TUTTI_COST_SHM / TUTTI_COST_TCP, "alpha_us,GBps,reduce_GBps";
// core/coll/selector.h CostParamsFor). Checked: accepted parameters are finite numbers, alpha
// >= 0 and beta, gamma > 0, so every model time is a number >= 0 and the selector can compare
// them; errors are kInvalidArgument. Three numbers printed in the documented form are accepted
// and come back as written.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "algorithms/registry.h"
#include "core/coll/selector.h"
#include "tests/fuzz/fuzz_util.h"

namespace tutti {
namespace {

void CheckParams(const CostParams& c, const std::string& text) {
  FUZZ_CHECK(std::isfinite(c.alpha_s) && c.alpha_s >= 0, "alpha from \"" + text + "\"");
  FUZZ_CHECK(std::isfinite(c.beta_s_per_byte) && c.beta_s_per_byte > 0, "beta from \"" + text + "\"");
  FUZZ_CHECK(std::isfinite(c.gamma_s_per_byte) && c.gamma_s_per_byte > 0, "gamma from \"" + text + "\"");
  for (int k = 0; k <= static_cast<int>(algo::Collective::kBarrier); ++k) {
    auto coll = static_cast<algo::Collective>(k);
    for (const std::string& a : algo::AlgorithmsFor(coll))
      for (int p : {2, 3, 64})
        for (double n : {0.0, 1.0, 1e6}) {
          double t = ModelTime(a, coll, p, n, c);
          FUZZ_CHECK(!std::isnan(t) && t >= 0, a + " model time from \"" + text + "\"");
        }
  }
}

}  // namespace
}  // namespace tutti

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tutti;  // NOLINT: a fuzz entry point
  unsetenv("TUTTI_DEBUG");
  fuzz::Input in(data, size);
  bool tcp = in.Bool();
  const char* var = tcp ? "TUTTI_COST_TCP" : "TUTTI_COST_SHM";
  const char* transport = tcp ? "tcp" : "shm";
  std::string text = in.Field('\0');
  setenv(var, text.c_str(), 1);
  Result<CostParams> c = CostParamsFor(transport);
  if (c.ok()) CheckParams(*c, text);
  else FUZZ_CHECK(c.status().code() == Code::kInvalidArgument, c.status().ToString());

  // Three plain numbers in the documented form.
  double a = in.U16() / 10.0, b = 1 + in.U16() / 100.0, g = 1 + in.U16() / 100.0;
  char buf[96];
  std::snprintf(buf, sizeof(buf), "%.17g,%.17g,%.17g", a, b, g);
  setenv(var, buf, 1);
  Result<CostParams> d = CostParamsFor(transport);
  unsetenv(var);
  FUZZ_CHECK(d.ok(), std::string(buf) + ": " + d.status().ToString());
  CheckParams(*d, buf);
  FUZZ_CHECK(d->alpha_s == a * 1e-6 && d->beta_s_per_byte == 1 / (b * 1e9) &&
                 d->gamma_s_per_byte == 1 / (g * 1e9),
             std::string(buf) + " came back changed");
  return 0;
}
