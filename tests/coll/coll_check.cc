#include "tests/coll/coll_check.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>

#include "algorithms/registry.h"
#include "tests/coll/values.h"

namespace tutti::testing {
namespace {

using algo::Collective;

struct Case {
  Collective coll;
  DataType type;
  RedOp op;
  uint64_t count;
  int root;
  std::string algorithm;
  bool in_place;
};

std::string Name(const Case& c) {
  char buf[200];
  snprintf(buf, sizeof(buf), "%s %s %s count=%llu root=%d algo=%s%s", algo::CollectiveName(c.coll),
           DataTypeName(c.type), RedOpName(c.op), static_cast<unsigned long long>(c.count), c.root,
           c.algorithm.empty() ? "auto" : c.algorithm.c_str(), c.in_place ? " in-place" : "");
  return buf;
}

bool Reduces(Collective c) {
  return c == Collective::kReduce || c == Collective::kAllReduce || c == Collective::kReduceScatter;
}

class Checker {
 public:
  explicit Checker(Communicator& c) : c_(c), n_(c.size()), r_(c.rank()) {}
  int failures = 0;
  int cases = 0;

  void Fail(const std::string& what) {
    ++failures;
    if (failures <= 20) fprintf(stderr, "rank %d: FAIL %s\n", r_, what.c_str());
  }

  // Input element k of rank `rank` for this case.
  double In(const Case& k, int rank, uint64_t i) const { return ExactInput(k.type, k.op, rank, i + 13 * rank); }

  Status Run(const Case& k, const void* send, void* recv) {
    CollOptions o;
    o.algorithm = k.algorithm;
    o.premul_scalar = PremulScalar(r_);
    switch (k.coll) {
      case Collective::kBroadcast: return c_.Broadcast(send, recv, k.count, k.type, k.root, o);
      case Collective::kReduce: return c_.Reduce(send, recv, k.count, k.type, k.op, k.root, o);
      case Collective::kScatter: return c_.Scatter(send, recv, k.count, k.type, k.root, o);
      case Collective::kGather: return c_.Gather(send, recv, k.count, k.type, k.root, o);
      case Collective::kAllReduce: return c_.AllReduce(send, recv, k.count, k.type, k.op, o);
      case Collective::kAllGather: return c_.AllGather(send, recv, k.count, k.type, o);
      case Collective::kReduceScatter: return c_.ReduceScatter(send, recv, k.count, k.type, k.op, o);
      case Collective::kAllToAll: return c_.AllToAll(send, recv, k.count, k.type, o);
      case Collective::kBarrier: return c_.Barrier(o);
    }
    return InternalError("unknown collective");
  }

  // Runs one case and compares every output element with the reference.
  void Check(const Case& k) {
    ++cases;
    const size_t elem = DataTypeSize(k.type);
    const uint64_t n = static_cast<uint64_t>(n_), cnt = k.count;
    uint64_t in_cnt = cnt, out_cnt = cnt;
    switch (k.coll) {
      case Collective::kScatter: in_cnt = n * cnt; break;
      case Collective::kGather: out_cnt = n * cnt; break;
      case Collective::kAllGather: out_cnt = n * cnt; break;
      case Collective::kReduceScatter: in_cnt = n * cnt; break;
      case Collective::kAllToAll: in_cnt = out_cnt = n * cnt; break;
      default: break;
    }
    // In-place layouts (NCCL's): all_gather's input is the rank's block of the output,
    // reduce_scatter's output is the rank's block of the input; at the root, scatter's output is
    // its block of the input and gather's input its block of the output; otherwise one buffer.
    std::vector<char> a(std::max(in_cnt, out_cnt) * elem + 1), b(out_cnt * elem + 1);
    char* send = a.data();
    char* recv = b.data();
    if (k.in_place) {
      recv = a.data();
      if (k.coll == Collective::kAllGather) send = a.data() + r_ * cnt * elem;
      if (k.coll == Collective::kReduceScatter) recv = a.data() + r_ * cnt * elem;
      if (k.coll == Collective::kScatter && r_ == k.root) recv = a.data() + r_ * cnt * elem;
      if (k.coll == Collective::kGather && r_ == k.root) send = a.data() + r_ * cnt * elem;
    }
    for (uint64_t i = 0; i < in_cnt; ++i) SetAs(k.type, send, i, In(k, r_, i));
    if (!k.in_place)
      for (uint64_t i = 0; i < out_cnt; ++i) SetAs(k.type, recv, i, -1);
    Status st = Run(k, send, recv);
    if (!st.ok()) return Fail(Name(k) + ": " + st.ToString());
    const bool root = r_ == k.root;
    auto expect = [&](uint64_t i) -> double {
      std::vector<double> vals(n_);
      switch (k.coll) {
        case Collective::kBroadcast: return In(k, k.root, i);
        case Collective::kScatter: return In(k, k.root, r_ * cnt + i);
        case Collective::kGather:
        case Collective::kAllGather: return In(k, static_cast<int>(i / cnt), i % cnt);
        case Collective::kAllToAll: return In(k, static_cast<int>(i / cnt), r_ * cnt + i % cnt);
        case Collective::kReduceScatter:
          for (int q = 0; q < n_; ++q) vals[q] = In(k, q, r_ * cnt + i);
          return ReduceRef(k.type, k.op, vals);
        default:
          for (int q = 0; q < n_; ++q) vals[q] = In(k, q, i);
          return ReduceRef(k.type, k.op, vals);
      }
    };
    if ((k.coll == Collective::kReduce || k.coll == Collective::kGather) && !root) return;
    if (k.coll == Collective::kBarrier) return;
    const bool tolerant = IsFloatingPoint(k.type) && (k.op == RedOp::kAvg || k.op == RedOp::kPremulSum) && Reduces(k.coll);
    for (uint64_t i = 0; i < out_cnt; ++i) {
      double want = expect(i), got = GetAs(k.type, recv, i);
      // The exact reference, rounded to the type, is what the kernels must produce.
      std::vector<char> tmp(elem);
      SetAs(k.type, tmp.data(), 0, want);
      double want_t = GetAs(k.type, tmp.data(), 0);
      bool ok = tolerant ? std::fabs(got - want) <= 4 * Epsilon(k.type) * std::max(1.0, std::fabs(want))
                         : std::memcmp(tmp.data(), recv + i * elem, elem) == 0;
      if (!ok) {
        char msg[64];
        snprintf(msg, sizeof(msg), ": element %llu is %g, expected %g", static_cast<unsigned long long>(i), got, want_t);
        return Fail(Name(k) + msg);
      }
    }
  }

  Communicator& c_;
  int n_, r_;
};

std::vector<DataType> Types(bool all) {
  if (!all) return {DataType::kFloat32, DataType::kInt32};
  std::vector<DataType> v;
  for (int t = 0; t < kNumDataTypes; ++t) v.push_back(static_cast<DataType>(t));
  return v;
}

const Collective kColls[] = {Collective::kBroadcast, Collective::kReduce,        Collective::kScatter,
                             Collective::kGather,    Collective::kAllReduce,     Collective::kAllGather,
                             Collective::kReduceScatter, Collective::kAllToAll,  Collective::kBarrier};

// Random floats against a float64 reference, and the same bits on every rank.
void CheckRandom(Checker& ck, Communicator& c) {
  const uint64_t count = 4099;
  for (DataType t : {DataType::kFloat32, DataType::kFloat64, DataType::kFloat16, DataType::kBfloat16}) {
    const size_t elem = DataTypeSize(t);
    std::vector<std::vector<char>> ins(c.size(), std::vector<char>(count * elem));
    for (int q = 0; q < c.size(); ++q) {
      std::mt19937_64 gen(1234 + q);
      std::uniform_real_distribution<double> d(-1, 1);
      for (uint64_t i = 0; i < count; ++i) SetAs(t, ins[q].data(), i, d(gen));
    }
    std::vector<char> out(count * elem), again(count * elem);
    Status st = c.AllReduce(ins[c.rank()].data(), out.data(), count, t, RedOp::kSum);
    if (st.ok()) st = c.AllReduce(ins[c.rank()].data(), again.data(), count, t, RedOp::kSum);
    if (!st.ok()) return ck.Fail(std::string("random all_reduce ") + DataTypeName(t) + ": " + st.ToString());
    if (out != again) ck.Fail(std::string("random all_reduce ") + DataTypeName(t) + ": two runs gave different bits");
    for (uint64_t i = 0; i < count; ++i) {
      double ref = 0, mag = 0;
      for (int q = 0; q < c.size(); ++q) {
        ref += GetAs(t, ins[q].data(), i);
        mag += std::fabs(GetAs(t, ins[q].data(), i));
      }
      double got = GetAs(t, out.data(), i);
      if (std::fabs(got - ref) > (c.size() + 1) * Epsilon(t) * std::max(mag, 1e-30) + 1e-300) {
        ck.Fail(std::string("random all_reduce ") + DataTypeName(t) + ": element " + std::to_string(i) + " is " +
                std::to_string(got) + ", float64 reference " + std::to_string(ref));
        break;
      }
    }
    // Every rank holds the same bits: compare everyone's result with rank 0's.
    std::vector<char> all(out.size() * c.size());
    st = c.AllGather(out.data(), all.data(), out.size(), DataType::kUint8);
    if (!st.ok()) return ck.Fail("all_gather of results: " + st.ToString());
    for (int q = 1; q < c.size(); ++q)
      if (std::memcmp(all.data(), all.data() + q * out.size(), out.size()) != 0)
        ck.Fail(std::string("random all_reduce ") + DataTypeName(t) + ": rank " + std::to_string(q) + " got other bits than rank 0");
  }
}

// Many collectives in flight at once, and a sub-communicator working beside its parent.
void CheckAsync(Checker& ck, Communicator& c) {
  const int kInFlight = 16;
  const uint64_t count = 777;
  std::vector<std::vector<int32_t>> in(kInFlight, std::vector<int32_t>(count)), out(kInFlight, std::vector<int32_t>(count));
  std::vector<Work> works;
  for (int j = 0; j < kInFlight; ++j) {
    for (uint64_t i = 0; i < count; ++i) in[j][i] = static_cast<int32_t>(c.rank() * 100 + j + i);
    auto w = c.IAllReduce(in[j].data(), out[j].data(), count, DataType::kInt32, RedOp::kSum);
    if (!w.ok()) return ck.Fail("IAllReduce: " + w.status().ToString());
    works.push_back(*w);
  }
  for (int j = 0; j < kInFlight; ++j) {
    Status st = works[j].Wait();
    if (!st.ok()) return ck.Fail("async all_reduce " + std::to_string(j) + ": " + st.ToString());
    const int64_t n = c.size();
    for (uint64_t i = 0; i < count; ++i) {
      int64_t want = 100 * n * (n - 1) / 2 + n * (j + static_cast<int64_t>(i));
      if (out[j][i] != want) return ck.Fail("async all_reduce " + std::to_string(j) + ": wrong element " + std::to_string(i));
    }
  }
  auto sub = c.Split(c.rank() % 2, c.rank());
  if (!sub.ok()) return ck.Fail("split: " + sub.status().ToString());
  int32_t a = c.rank(), sa = 0, b = c.rank(), sb = 0;
  auto w1 = (*sub)->IAllReduce(&a, &sa, 1, DataType::kInt32, RedOp::kSum);
  auto w2 = c.IAllReduce(&b, &sb, 1, DataType::kInt32, RedOp::kSum);
  if (!w1.ok() || !w2.ok()) return ck.Fail("sub/parent all_reduce could not start");
  Status s2 = w2->Wait(), s1 = w1->Wait();
  if (!s1.ok() || !s2.ok()) return ck.Fail("sub/parent all_reduce: " + s1.ToString() + " / " + s2.ToString());
  int32_t want_sub = 0;
  for (int q = c.rank() % 2; q < c.size(); q += 2) want_sub += q;
  if (sa != want_sub || sb != c.size() * (c.size() - 1) / 2) ck.Fail("sub/parent all_reduce gave wrong sums");
}

}  // namespace

// Reductions on integer types also take band, bor and bxor.
static std::vector<RedOp> WithBitwise(std::vector<RedOp> ops, DataType t, bool reduces) {
  if (!reduces) return ops;
  for (RedOp op : {RedOp::kBand, RedOp::kBor, RedOp::kBxor})
    if (OpTakesType(op, t)) ops.push_back(op);
  return ops;
}

CollCheckResult CheckCollectives(Communicator& comm, const CollCheckConfig& cfg) {
  Checker ck(comm);
  const int n = comm.size();
  std::vector<uint64_t> counts = cfg.counts;
  if (n > 2) counts.push_back(static_cast<uint64_t>(n - 1));
  const int roots[] = {0, n - 1};
  for (Collective coll : kColls) {
    std::vector<RedOp> ops = {RedOp::kSum};
    if (Reduces(coll)) ops = {RedOp::kSum, RedOp::kProd, RedOp::kMin, RedOp::kMax, RedOp::kAvg, RedOp::kPremulSum};
    for (DataType t : Types(cfg.all_types))
      for (RedOp op : WithBitwise(ops, t, Reduces(coll)))
        for (uint64_t count : counts) {
          if (coll == Collective::kBarrier && (count != 0 || t != DataType::kUint8)) continue;
          int root = roots[count % 2];
          ck.Check({coll, t, op, count, root, "", false});
          if (op == RedOp::kSum && coll != Collective::kBarrier) ck.Check({coll, t, op, count, root, "", true});
        }
    if (cfg.algorithms)
      for (const std::string& a : algo::AlgorithmsFor(coll))
        for (uint64_t count : {uint64_t{5}, uint64_t{3000}})
          for (bool in_place : {false, true}) {
            if (in_place && coll == Collective::kBarrier) continue;
            ck.Check({coll, DataType::kFloat32, RedOp::kSum, count, n / 2, a, in_place});
            // Root 0 too: in-place scatter/gather lay the root's block at its own offset.
            if (in_place && (coll == Collective::kScatter || coll == Collective::kGather))
              ck.Check({coll, DataType::kFloat32, RedOp::kSum, count, 0, a, in_place});
          }
  }
  if (cfg.random) CheckRandom(ck, comm);
  if (cfg.async) CheckAsync(ck, comm);
  return {ck.cases, ck.failures};
}

}  // namespace tutti::testing
