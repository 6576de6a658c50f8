#include "kernels/prims/world_check.h"

#include <cstdio>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

#include "algorithms/registry.h"
#include "algorithms/simulator.h"
#include "kernels/functors.h"

namespace tutti::prims {
namespace {

uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Small values: sums and products of a few ranks stay in range for every type (no signed
// overflow), floats are not all integers (so the order of the sum shows in the bits).
template <class S>
S InputValue(int rank, uint64_t i) {
  const uint64_t h = Mix((static_cast<uint64_t>(rank) << 40) ^ i);
  if constexpr (std::is_integral_v<S>) {
    if constexpr (std::is_signed_v<S>) return static_cast<S>(static_cast<int>(h % 9) - 4);
    return static_cast<S>(h % 9);
  } else {
    const double v = (static_cast<double>(h % 2001) - 1000.0) / 257.0;
    return kernels::Narrow<S>(static_cast<kernels::Accum<S>>(v));
  }
}

template <class S>
std::string Bits(const S& v) {
  unsigned char b[sizeof(S)];
  std::memcpy(b, &v, sizeof(S));
  std::string out = "0x";
  char hex[3];
  for (size_t i = sizeof(S); i-- > 0;) {
    std::snprintf(hex, sizeof hex, "%02x", b[i]);
    out += hex;
  }
  return out;
}

template <class S, class Op>
Status CheckTyped(const WorldCheck& c, const algo::SimResult& sim, const std::vector<algo::PrimProgram>& programs) {
  const int n = c.args.nranks;
  algo::CollArgs a = c.args;
  // The simulator's reduction nodes, evaluated as the kernels reduce: widen, combine left to
  // right, narrow once.
  const algo::ExprPool& pool = sim.pool;
  std::vector<S> nodes(pool.num_nodes());
  auto value = [&](algo::ExprId id) -> S {
    if (pool.IsLeaf(id)) {
      int r;
      uint64_t i;
      pool.LeafOf(id, &r, &i);
      return InputValue<S>(r, i);
    }
    return nodes[id - pool.num_leaves() - 1];
  };
  for (size_t j = 0; j < pool.num_nodes(); ++j) {
    size_t k = 0;
    const algo::ExprId* ch = pool.Children(static_cast<algo::ExprId>(pool.num_leaves() + 1 + j), &k);
    kernels::Accum<S> acc = kernels::Widen<S>(value(ch[0]));
    for (size_t x = 1; x < k; ++x) acc = Op::Apply(acc, kernels::Widen<S>(value(ch[x])));
    nodes[j] = kernels::Narrow<S>(acc);
  }

  std::vector<std::vector<S>> in(n), out(n), scratch(n);
  std::vector<HostRankBuffers> bufs(n);
  for (int r = 0; r < n; ++r) {
    a.rank = r;
    in[r].resize(algo::BufferCount(a, algo::Buf::kInput));
    for (uint64_t i = 0; i < in[r].size(); ++i) in[r][i] = InputValue<S>(r, i);
    out[r].resize(algo::BufferCount(a, algo::Buf::kOutput));
    if (!out[r].empty()) std::memset(static_cast<void*>(out[r].data()), 0xa5, out[r].size() * sizeof(S));
    scratch[r].resize(programs[r].scratch_count);
    bufs[r] = HostRankBuffers{in[r].data(),         out[r].data(),          scratch[r].data(),
                              in[r].size() * sizeof(S), out[r].size() * sizeof(S), scratch[r].size() * sizeof(S)};
  }
  const Status ran = c.run ? c.run(c.type, c.op, programs, bufs, c.world) : RunHostWorld(c.type, c.op, programs, bufs, c.world);
  if (!ran.ok()) return ran;
  for (int r = 0; r < n; ++r) {
    if (sim.output[r].size() != out[r].size()) {
      return InternalError("rank " + std::to_string(r) + ": the simulator has " + std::to_string(sim.output[r].size()) +
                           " output elements, the buffer " + std::to_string(out[r].size()));
    }
    for (uint64_t i = 0; i < out[r].size(); ++i) {
      const algo::ExprId id = sim.output[r][i];
      if (id == algo::kUnwritten) continue;
      const S want = value(id);
      if (std::memcmp(&want, &out[r][i], sizeof(S)) != 0) {
        return InternalError("rank " + std::to_string(r) + " output[" + std::to_string(i) + "] is " + Bits(out[r][i]) +
                             ", the schedule computes " + Bits(want) + " (" + pool.Format(id) + ")");
      }
    }
  }
  return OkStatus();
}

}  // namespace

Status RunWorldCheck(const WorldCheck& check, uint64_t* fused_locals, uint64_t* early_sends) {
  const std::string what = check.algorithm + " " + algo::DescribeArgs(check.args);
  std::vector<algo::Schedule> schedules;
  std::vector<algo::PrimProgram> programs;
  uint64_t fused = 0, early = 0;
  for (int r = 0; r < check.args.nranks; ++r) {
    algo::CollArgs a = check.args;
    a.rank = r;
    Result<algo::Schedule> s = algo::BuildSchedule(check.algorithm, a);
    if (!s.ok()) return s.status().WithContext(what);
    Result<algo::PrimProgram> p = algo::LowerSchedule(*s, check.lower);
    if (!p.ok()) return p.status().WithContext(what + ", rank " + std::to_string(r));
    fused += p->fused_locals;
    early += p->early_sends;
    schedules.push_back(std::move(*s));
    programs.push_back(std::move(*p));
  }
  if (fused_locals) *fused_locals = fused;
  if (early_sends) *early_sends = early;
  Result<algo::SimResult> sim = algo::SimulateSchedules(check.args, schedules);
  if (!sim.ok()) return sim.status().WithContext(what);
  const Status bad = InvalidArgument(std::string(RedOpName(check.op)) + " on " + DataTypeName(check.type));
  Status st = kernels::DispatchType(
      check.type,
      [&](auto tag) -> Status {
        using S = typename decltype(tag)::type;
        return kernels::DispatchOp<kernels::Accum<S>>(
            check.op,
            [&](auto optag) -> Status { return CheckTyped<S, typename decltype(optag)::type>(check, *sim, programs); },
            [&] { return bad; });
      },
      [&] { return bad; });
  return st.ok() ? st : st.WithContext(what);
}

}  // namespace tutti::prims
