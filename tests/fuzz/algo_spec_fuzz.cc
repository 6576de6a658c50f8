// Fuzz target: TUTTI_ALGO strings (core/coll/selector.h Selector::Parse, Selector::FromEnv).
// Checked: a spec that parses makes every collective choose an algorithm that implements it,
// the same one from the environment as from Parse; a per-call name is taken iff the collective
// has it; a spec built from (collective, algorithm) pairs makes each named collective choose
// its last named algorithm; errors are kInvalidArgument.
#include <algorithm>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "algorithms/registry.h"
#include "core/coll/selector.h"
#include "tests/fuzz/fuzz_util.h"

namespace tutti {
namespace {

using algo::Collective;
constexpr int kNumColls = static_cast<int>(Collective::kBarrier) + 1;

bool Has(Collective c, const std::string& a) {
  std::vector<std::string> names = algo::AlgorithmsFor(c);
  return std::find(names.begin(), names.end(), a) != names.end();
}

std::string Choice(const Selector& s, Collective c, int p, uint64_t bytes, const std::string& tr) {
  Result<std::string> a = s.Choose(c, p, bytes, tr, "");
  FUZZ_CHECK(a.ok(), a.status().ToString());
  FUZZ_CHECK(Has(c, *a), *a + " does not implement " + algo::CollectiveName(c));
  return *a;
}

}  // namespace
}  // namespace tutti

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tutti;  // NOLINT: a fuzz entry point
  unsetenv("TUTTI_DEBUG");
  unsetenv("TUTTI_COST_SHM");
  unsetenv("TUTTI_COST_TCP");
  fuzz::Input in(data, size);
  int p = 1 + in.U8() % 70;
  uint64_t bytes = in.U32() << (in.U8() % 24);
  std::string per_call = in.Field('\0');
  std::string spec = in.Rest();

  Result<Selector> s = Selector::Parse(spec);
  bool env_ok = spec.find('\0') == std::string::npos;
  if (env_ok) setenv("TUTTI_ALGO", spec.c_str(), 1);
  Result<Selector> e = Selector::FromEnv();
  unsetenv("TUTTI_ALGO");
  if (!s.ok()) {
    FUZZ_CHECK(s.status().code() == Code::kInvalidArgument, s.status().ToString());
    if (env_ok && !spec.empty()) FUZZ_CHECK(!e.ok(), "the environment accepted a bad spec");
  } else {
    for (int c = 0; c < kNumColls; ++c) {
      auto coll = static_cast<Collective>(c);
      for (const char* tr : {"shm", "tcp"}) {
        std::string a = Choice(*s, coll, p, bytes, tr);
        if (env_ok && e.ok()) FUZZ_CHECK(Choice(*e, coll, p, bytes, tr) == a, "env and Parse differ");
        Result<std::string> pc = s->Choose(coll, p, bytes, tr, per_call);
        if (per_call.empty()) FUZZ_CHECK(pc.ok() && *pc == a, "empty per-call name");
        else FUZZ_CHECK(pc.ok() == Has(coll, per_call) && (!pc.ok() || *pc == per_call), "per-call name");
      }
    }
  }

  // Built from pairs: the last name for a collective wins.
  fuzz::Input b(data, size);
  std::string built;
  std::map<Collective, std::string> want;
  for (int i = 0; i < 6 && !b.empty(); ++i) {
    auto coll = static_cast<Collective>(b.U8() % kNumColls);
    std::vector<std::string> names = algo::AlgorithmsFor(coll);
    if (names.empty()) continue;
    std::string a = names[b.U8() % names.size()];
    built += (built.empty() ? "" : ",") + std::string(algo::CollectiveName(coll)) + ":" + a;
    want[coll] = a;
  }
  Result<Selector> bs = Selector::Parse(built);
  FUZZ_CHECK(bs.ok(), "\"" + built + "\": " + bs.status().ToString());
  for (const auto& [coll, a] : want)
    FUZZ_CHECK(Choice(*bs, coll, p, bytes, "shm") == a, "\"" + built + "\" chose another algorithm");
  return 0;
}
