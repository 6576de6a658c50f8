#include "algorithms/testing.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "algorithms/simulator.h"

namespace tutti::algo::testing {

int64_t TestInput(int rank, uint64_t index) {
  uint64_t z = (static_cast<uint64_t>(rank) << 40) ^ index;
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return static_cast<int64_t>(z ^ (z >> 31));
}

namespace {
int64_t Add(int64_t x, int64_t y) { return static_cast<int64_t>(static_cast<uint64_t>(x) + static_cast<uint64_t>(y)); }
int64_t SumOver(int n, uint64_t index) {
  int64_t s = 0;
  for (int q = 0; q < n; ++q) s = Add(s, TestInput(q, index));
  return s;
}
}  // namespace

std::vector<std::vector<int64_t>> Reference(const CollArgs& args) {
  const int n = args.nranks;
  const uint64_t c = args.count;
  std::vector<std::vector<int64_t>> out(n);
  for (int r = 0; r < n; ++r) {
    CollArgs a = args;
    a.rank = r;
    auto& o = out[r];
    o.resize(BufferCount(a, Buf::kOutput));
    for (uint64_t e = 0; e < o.size(); ++e) {
      const uint64_t j = c == 0 ? 0 : e / c, i = c == 0 ? 0 : e % c;
      switch (args.coll) {
        case Collective::kBroadcast: o[e] = TestInput(args.root, e); break;
        case Collective::kReduce:
        case Collective::kAllReduce: o[e] = SumOver(n, e); break;
        case Collective::kScatter: o[e] = TestInput(args.root, static_cast<uint64_t>(r) * c + e); break;
        case Collective::kGather:
        case Collective::kAllGather: o[e] = TestInput(static_cast<int>(j), i); break;
        case Collective::kReduceScatter: o[e] = SumOver(n, static_cast<uint64_t>(r) * c + e); break;
        case Collective::kAllToAll: o[e] = TestInput(static_cast<int>(j), static_cast<uint64_t>(r) * c + i); break;
        case Collective::kBarrier: break;
      }
    }
  }
  return out;
}

namespace {
std::string CheckResult(const std::string& what, const CollArgs& args, const Result<SimResult>& sim) {
  if (!sim.ok()) return what + sim.status().ToString();
  const SimResult& res = *sim;
  const auto ref = Reference(args);
  const auto got = SumOutputs(res, TestInput);
  const int n = args.nranks;
  for (int r = 0; r < n; ++r) {
    if (got[r].size() != ref[r].size()) return what + "rank " + std::to_string(r) + " output size differs";
    for (uint64_t e = 0; e < ref[r].size(); ++e) {
      if (res.output[r][e] == kUnwritten)
        return what + "rank " + std::to_string(r) + " output[" + std::to_string(e) + "] never written";
      if (got[r][e] != ref[r][e])
        return what + "rank " + std::to_string(r) + " output[" + std::to_string(e) + "] = " +
               res.pool.Format(res.output[r][e], true) + ", wrong value";
    }
    if (args.coll != Collective::kAllReduce) continue;
    for (uint64_t e = 0; e < ref[r].size(); ++e)
      if (!res.pool.Same(res.output[r][e], res.output[0][e]))
        return what + "ranks 0 and " + std::to_string(r) + " reduce element " + std::to_string(e) +
               " differently: " + res.pool.Format(res.output[0][e]) + " vs " + res.pool.Format(res.output[r][e]);
  }
  // Causality: who must have heard from whom.
  const bool any_data = args.count > 0 || args.coll == Collective::kBarrier;
  for (int r = 0; r < n && any_data; ++r)
    for (int q = 0; q < n; ++q) {
      bool must = false;
      switch (args.coll) {
        case Collective::kBroadcast:
        case Collective::kScatter: must = q == args.root; break;
        case Collective::kReduce:
        case Collective::kGather: must = r == args.root; break;
        default: must = true;
      }
      if (must && !res.heard_from[r][q])
        return what + "rank " + std::to_string(r) + " finishes without having heard from rank " + std::to_string(q);
    }
  return "";
}
}  // namespace

std::string CheckOne(const std::string& algorithm, const CollArgs& args, Aliasing aliasing) {
  const std::string how = aliasing == Aliasing::kInPlace ? " (in place)" : "";
  if (args.distinct && aliasing == Aliasing::kInPlace) {
    return algorithm + " " + DescribeArgs(args) + how + ": a schedule for distinct buffers does not run in place";
  }
  return CheckResult(algorithm + " " + DescribeArgs(args) + how + ": ", args, Simulate(algorithm, args, aliasing));
}

std::string CheckSchedules(const CollArgs& args, const std::vector<Schedule>& schedules, Aliasing aliasing) {
  const std::string how = aliasing == Aliasing::kInPlace ? " (in place)" : "";
  return CheckResult(DescribeArgs(args) + how + ": ", args, SimulateSchedules(args, schedules, aliasing));
}

std::vector<std::string> InPlaceSweep(const std::string& algorithm, Collective c, size_t max_failures, int* cases) {
  std::vector<std::string> failures;
  std::vector<int> sizes;
  for (int n = 1; n <= 33; ++n) sizes.push_back(n);
  sizes.push_back(64);
  for (int n : sizes) {
    const uint64_t un = static_cast<uint64_t>(n);
    std::set<uint64_t> counts{0, 1, 2, 7, 13, un - 1, un + 1, 1000};
    std::set<int> roots{0};
    if (IsRooted(c)) roots = {0, n / 2, n - 1};
    for (uint64_t count : counts)
      for (int root : roots)
        for (int nch : {1, 2})
          for (uint64_t chunk : {uint64_t{0}, uint64_t{3}}) {
            CollArgs a;
            a.coll = c;
            a.nranks = n;
            a.root = root;
            a.count = count;
            a.nchannels = nch;
            a.chunk = chunk;
            if (cases) ++*cases;
            std::string err = CheckOne(algorithm, a, Aliasing::kInPlace);
            if (err.empty()) continue;
            failures.push_back(std::move(err));
            if (failures.size() >= max_failures) return failures;
          }
  }
  return failures;
}

int Sweep(const std::string& algorithm, Collective c, const SweepOptions& o) {
  std::vector<int> sizes = o.nranks;
  if (sizes.empty()) {
    for (int n = 1; n <= 33; ++n) sizes.push_back(n);
    sizes.push_back(64);
  }
  int cases = 0, failures = 0;
  for (int n : sizes) {
    std::set<uint64_t> small{0, 1, 2, 7, 13, static_cast<uint64_t>(n + 1), 3 * static_cast<uint64_t>(n) + 2};
    if (n > 1) small.insert(static_cast<uint64_t>(n - 1));
    if (c == Collective::kBarrier) small = {0};
    std::set<int> roots{0};
    if (IsRooted(c)) roots = {0, n - 1, n / 2};
    auto run = [&](uint64_t count, int root, int nch, uint64_t chunk) {
      CollArgs a;
      a.coll = c;
      a.nranks = n;
      a.root = root;
      a.count = count;
      a.nchannels = nch;
      a.chunk = chunk;
      a.distinct = o.distinct;
      ++cases;
      const std::string err = CheckOne(algorithm, a);
      if (!err.empty() && failures++ < 10) ADD_FAILURE() << err;
    };
    for (uint64_t count : small)
      for (int root : roots)
        for (int nch : o.nchannels)
          for (uint64_t chunk : o.chunks) run(count, root, nch, chunk);
    if (!o.big_counts || c == Collective::kBarrier) continue;
    for (uint64_t count : {uint64_t{1000}, uint64_t{4099}}) {
      run(count, *roots.rbegin(), 1, 0);
      if (n <= 16 || n == 33) run(count, 0, 2, count == 1000 ? 64 : 0);
    }
  }
  return cases;
}

std::string OrderOf(const std::string& algorithm, const CollArgs& args, int rank, uint64_t index) {
  Result<SimResult> sim = Simulate(algorithm, args);
  if (!sim.ok()) return sim.status().ToString();
  if (index >= sim->output[rank].size()) return "no such element";
  return sim->pool.Format(sim->output[rank][index]);
}

}  // namespace tutti::algo::testing
