// The back-end independent parts of tutti_perf: flags, sweep, per-collective arithmetic, bus
// bandwidth factors, and the claim that the test data's results are exact.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <vector>

#include "bench/perf/perf_coll.h"
#include "bench/perf/perf_data.h"
#include "bench/perf/perf_options.h"
#include "kernels/cpu/reduce.h"

namespace tutti::perf {
namespace {

Result<PerfOptions> Parse(std::vector<const char*> args) {
  args.insert(args.begin(), "tutti_perf");
  return ParsePerfArgs(static_cast<int>(args.size()), args.data());
}

TEST(PerfOptions, Bytes) {
  size_t v = 0;
  EXPECT_TRUE(ParseBytes("8", &v));
  EXPECT_EQ(v, 8u);
  EXPECT_TRUE(ParseBytes("64K", &v));
  EXPECT_EQ(v, 65536u);
  EXPECT_TRUE(ParseBytes("256M", &v));
  EXPECT_EQ(v, size_t{256} << 20);
  EXPECT_TRUE(ParseBytes("1G", &v));
  EXPECT_EQ(v, size_t{1} << 30);
  EXPECT_TRUE(ParseBytes("2kB", &v));
  EXPECT_EQ(v, 2048u);
  for (const char* bad : {"", "K", "-1", "1X", "1KK", "8 ", "99999999999999999999", "17179869184G"})
    EXPECT_FALSE(ParseBytes(bad, &v)) << bad;
}

TEST(PerfOptions, Defaults) {
  auto o = Parse({});
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->iters, 20);
  EXPECT_EQ(o->warmup_iters, 5);
  EXPECT_TRUE(o->check);
  EXPECT_EQ(o->average, 1);
  EXPECT_EQ(o->root, 0);
  EXPECT_EQ(o->coll, Coll::kAllReduce);
  EXPECT_EQ(o->types, std::vector<DataType>{DataType::kFloat32});
  EXPECT_EQ(o->ops, std::vector<RedOp>{RedOp::kSum});
  EXPECT_EQ(o->debug_corrupt_rank, -1);
}

TEST(PerfOptions, Flags) {
  auto o = Parse({"-b", "8", "-e256M", "-f", "2", "-n", "3", "-w", "0", "-c", "0", "-d", "all", "-o", "all", "-r",
                  "1", "-a", "3", "-z", "1", "-T", "30", "--coll=reduce_scatter", "--algo", "ring",
                  "--debug-corrupt-rank", "2"});
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(o->min_bytes, 8u);
  EXPECT_EQ(o->max_bytes, size_t{256} << 20);
  EXPECT_EQ(o->step_factor, 2u);
  EXPECT_EQ(o->iters, 3);
  EXPECT_EQ(o->warmup_iters, 0);
  EXPECT_FALSE(o->check);
  EXPECT_EQ(o->types.size(), static_cast<size_t>(kNumDataTypes));
  EXPECT_EQ(o->ops.size(), static_cast<size_t>(kNumRedOps));
  EXPECT_EQ(o->root, 1);
  EXPECT_EQ(o->average, 3);
  EXPECT_EQ(o->blocking, 1);
  EXPECT_EQ(o->timeout_s, 30);
  EXPECT_EQ(o->coll, Coll::kReduceScatter);
  EXPECT_EQ(o->algo, "ring");
  EXPECT_EQ(o->debug_corrupt_rank, 2);
  auto h = Parse({"-h"});
  ASSERT_TRUE(h.ok());
  EXPECT_TRUE(h->help);
  auto d = Parse({"-d", "half", "-o", "prod", "--coll", "sendrecv"});
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->types, std::vector<DataType>{DataType::kFloat16});
  EXPECT_EQ(d->ops, std::vector<RedOp>{RedOp::kProd});
  EXPECT_EQ(d->coll, Coll::kSendRecv);
}

TEST(PerfOptions, Errors) {
  const std::vector<std::vector<const char*>> bad = {
      {"--bogus"}, {"-x"}, {"-b"}, {"-b", "1X"}, {"-c", "2"}, {"-a", "4"}, {"-n", "0"}, {"-w", "-1"},
      {"-b", "1K", "-e", "8"}, {"-f", "1", "-i", "0"}, {"--coll", "foo"}, {"-d", "foo"}, {"-o", "foo"},
      {"-g", "2"}, {"-T", "x"}, {"stray"}, {"--help=1"}, {"-r", "-1"},
  };
  for (const auto& args : bad) {
    auto o = Parse(args);
    std::string joined;
    for (const char* a : args) joined += std::string(a) + " ";
    EXPECT_FALSE(o.ok()) << joined;
    if (!o.ok()) {
      EXPECT_FALSE(o.status().message().empty());
    }
  }
}

TEST(PerfColl, Names) {
  for (int i = 0; i < kNumColls; ++i) {
    Coll c = static_cast<Coll>(i), back;
    ASSERT_TRUE(ParseColl(CollName(c), &back));
    EXPECT_EQ(back, c);
  }
  Coll c;
  EXPECT_TRUE(ParseColl("allreduce", &c));
  EXPECT_EQ(c, Coll::kAllReduce);
  EXPECT_FALSE(ParseColl("barrier", &c));
}

TEST(PerfColl, Sweep) {
  EXPECT_EQ(SizeSweep(8, 65536, 4, 0), (std::vector<size_t>{8, 32, 128, 512, 2048, 8192, 32768}));
  EXPECT_EQ(SizeSweep(8, 32, 1, 8), (std::vector<size_t>{8, 16, 24, 32}));
  EXPECT_EQ(SizeSweep(0, 4, 2, 0), (std::vector<size_t>{0, 1, 2, 4}));
  EXPECT_EQ(SizeSweep(5, 5, 2, 0), (std::vector<size_t>{5}));
  EXPECT_EQ(SizeSweep(8, 256 << 20, 2, 0).size(), 26u);
  EXPECT_TRUE(SizeSweep(8, 64, 1, 0).empty());
}

TEST(PerfColl, BusBandwidthFactors) {
  EXPECT_DOUBLE_EQ(BusBwFactor(Coll::kAllReduce, 4), 1.5);
  for (Coll c : {Coll::kReduceScatter, Coll::kAllGather, Coll::kAllToAll, Coll::kGather, Coll::kScatter})
    EXPECT_DOUBLE_EQ(BusBwFactor(c, 4), 0.75) << CollName(c);
  for (Coll c : {Coll::kBroadcast, Coll::kReduce, Coll::kSendRecv}) EXPECT_DOUBLE_EQ(BusBwFactor(c, 4), 1) << CollName(c);
  EXPECT_DOUBLE_EQ(BusBwFactor(Coll::kAllReduce, 1), 0);
}

TEST(PerfColl, Plans) {
  // all_reduce: S / elem elements, rounded down.
  Plan p = PlanFor(Coll::kAllReduce, 1030, 4, 4, 1);
  EXPECT_EQ(p.count, 257u);
  EXPECT_EQ(p.op_bytes, 1028u);
  EXPECT_EQ(p.send_elems, 257u);
  EXPECT_EQ(p.recv_elems, 257u);
  // all_gather: S is the whole array, count per rank.
  p = PlanFor(Coll::kAllGather, 1024, 4, 4, 3);
  EXPECT_EQ(p.count, 64u);
  EXPECT_EQ(p.send_elems, 64u);
  EXPECT_EQ(p.recv_elems, 256u);
  EXPECT_EQ(p.op_bytes, 1024u);
  EXPECT_EQ(p.inplace_send_off, 192u);
  EXPECT_EQ(p.inplace_recv_off, 0u);
  p = PlanFor(Coll::kReduceScatter, 1000, 4, 3, 2);
  EXPECT_EQ(p.count, 83u);
  EXPECT_EQ(p.send_elems, 249u);
  EXPECT_EQ(p.recv_elems, 83u);
  EXPECT_EQ(p.op_bytes, 996u);
  EXPECT_EQ(p.inplace_recv_off, 166u);
  p = PlanFor(Coll::kAllToAll, 64, 8, 2, 0);
  EXPECT_EQ(p.count, 4u);
  EXPECT_EQ(p.send_elems, 8u);
  EXPECT_EQ(p.recv_elems, 8u);
  p = PlanFor(Coll::kAllGather, 8, 4, 4, 0);  // too small for one element per rank
  EXPECT_EQ(p.count, 0u);
  EXPECT_EQ(p.op_bytes, 0u);
  // Buffers never exceed S bytes (the harness allocates max size bytes).
  for (int c = 0; c < kNumColls; ++c)
    for (size_t s : {0, 1, 7, 8, 100, 4096, 65537})
      for (int n : {1, 2, 3, 7})
        for (size_t e : {1, 2, 4, 8}) {
          Plan q = PlanFor(static_cast<Coll>(c), s, e, n, n - 1);
          EXPECT_LE(q.whole_elems() * e, s);
          EXPECT_LE(q.op_bytes, s);
          EXPECT_LE(q.inplace_send_off + q.send_elems, q.whole_elems());
          EXPECT_LE(q.inplace_recv_off + q.recv_elems, q.whole_elems());
        }
}

// ---- data ---------------------------------------------------------------------------------

std::vector<char> Fill(const Pattern& p, int rank, DataType t, size_t elems) {
  std::vector<char> buf(elems * DataTypeSize(t));
  FillInput(p, rank, t, buf.data(), 0, elems);
  return buf;
}

// Reduces the ranks' inputs the way a multi-hop algorithm does: pairwise, rounding into the
// storage type after every step, in the given rank order (premul_sum scaled first; avg divided
// at the end), and returns the result.
std::vector<char> Simulate(const Pattern& p, DataType t, RedOp op, int n, size_t elems, const std::vector<int>& order,
                           bool tree) {
  std::vector<std::vector<char>> in(n);
  for (int q = 0; q < n; ++q) {
    in[q] = Fill(p, q, t, elems);
    if (op == RedOp::kPremulSum) {
      EXPECT_TRUE(kernels::ScaleBy(in[q].data(), in[q].data(), elems, t, p.Scalar(q)).ok());
    }
  }
  const RedOp kop = (op == RedOp::kAvg || op == RedOp::kPremulSum) ? RedOp::kSum : op;
  std::vector<std::vector<char>> items;
  for (int q : order) items.push_back(in[q]);
  auto combine = [&](std::vector<char>& a, const std::vector<char>& b) {
    const void* srcs[2] = {a.data(), b.data()};
    EXPECT_TRUE(kernels::ReduceN(a.data(), srcs, 2, elems, t, kop).ok());
  };
  if (tree) {
    while (items.size() > 1) {
      std::vector<std::vector<char>> next;
      for (size_t i = 0; i + 1 < items.size(); i += 2) {
        combine(items[i], items[i + 1]);
        next.push_back(items[i]);
      }
      if (items.size() % 2) next.push_back(items.back());
      items.swap(next);
    }
  } else {
    for (size_t i = 1; i < items.size(); ++i) combine(items[0], items[i]);
  }
  std::vector<char> out = items[0];
  if (op == RedOp::kAvg) {
    EXPECT_TRUE(kernels::DivideBy(out.data(), elems, t, n).ok());
  }
  return out;
}

TEST(PerfData, ReductionsAreExactInEveryTypeAndOrder) {
  const size_t elems = 512;
  for (int ti = 0; ti < kNumDataTypes; ++ti) {
    const DataType t = static_cast<DataType>(ti);
    for (int oi = 0; oi < kNumRedOps; ++oi) {
      const RedOp op = static_cast<RedOp>(oi);
      if (!OpTakesType(op, t)) continue;  // integer types only
      for (int n : {1, 2, 3, 4, 5, 8, 9, 16, 17, 33}) {
        Pattern p(Coll::kAllReduce, t, op, n, 0, elems, 12345 + n);
        std::vector<int> fwd(n), rev(n), odd;
        std::iota(fwd.begin(), fwd.end(), 0);
        rev.assign(fwd.rbegin(), fwd.rend());
        for (int q = 1; q < n; q += 2) odd.push_back(q);
        for (int q = 0; q < n; q += 2) odd.push_back(q);
        for (const auto* order : {&fwd, &rev, &odd}) {
          for (bool tree : {false, true}) {
            std::vector<char> got = Simulate(p, t, op, n, elems, *order, tree);
            CheckResult cr = CheckOutput(p, 0, t, got.data(), elems);
            ASSERT_EQ(cr.wrong, 0u) << DataTypeName(t) << " " << RedOpName(op) << " n=" << n << " tree=" << tree
                                    << ": index " << cr.first_index << " got " << cr.got << " expected "
                                    << cr.expected;
          }
        }
      }
    }
  }
}

TEST(PerfData, ResultsAreNotTrivial) {
  // Apart from degenerate cases the data varies, so a collective that does nothing fails.
  for (int ti = 0; ti < kNumDataTypes; ++ti) {
    const DataType t = static_cast<DataType>(ti);
    for (int oi = 0; oi < kNumRedOps; ++oi) {
      const RedOp op = static_cast<RedOp>(oi);
      if (!OpTakesType(op, t)) continue;  // integer types only
      Pattern p(Coll::kAllReduce, t, op, 4, 0, 1000, 7);
      std::vector<int64_t> seen;
      int differs_from_input = 0;
      for (uint64_t k = 0; k < 1000; ++k) {
        seen.push_back(p.Reduced(k));
        if (p.Reduced(k) != p.Input(1, k)) ++differs_from_input;
      }
      std::sort(seen.begin(), seen.end());
      seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
      // fp8_e5m2 avg on 4 ranks has room for only b in {1, 2} (4 x 2 = 8 is its exact limit).
      EXPECT_GE(seen.size(), t == DataType::kFp8E5M2 && op == RedOp::kAvg ? 2u : 3u) << DataTypeName(t) << " " << RedOpName(op);
      EXPECT_GT(differs_from_input, 100) << DataTypeName(t) << " " << RedOpName(op);
    }
  }
}

TEST(PerfData, ValuesRoundTripAndPoisonIsNeverExpected) {
  for (int ti = 0; ti < kNumDataTypes; ++ti) {
    const DataType t = static_cast<DataType>(ti);
    for (int c = 0; c < kNumColls; ++c) {
      const Coll coll = static_cast<Coll>(c);
      for (int oi = 0; oi < kNumRedOps; ++oi) {
        const RedOp op = static_cast<RedOp>(oi);
        if (!OpTakesType(op, t)) continue;  // integer types only
        const int n = 3;
        const size_t count = 50;
        Pattern p(coll, t, op, n, 1, count, 99);
        std::vector<char> in = Fill(p, 2, t, n * count);
        for (size_t k = 0; k < n * count; ++k)
          ASSERT_EQ(LoadElement(t, in.data(), k), static_cast<double>(p.Input(2, k))) << DataTypeName(t);
        std::vector<char> poison(n * count * DataTypeSize(t));
        FillPoison(t, poison.data(), n * count);
        const size_t out_elems = PlanFor(coll, n * count * DataTypeSize(t), DataTypeSize(t), n, 0).recv_elems;
        for (int r = 0; r < n; ++r) {
          CheckResult cr = CheckOutput(p, r, t, poison.data(), out_elems);
          EXPECT_EQ(cr.wrong, p.HasOutput(r) ? out_elems : 0) << CollName(coll) << " " << DataTypeName(t);
        }
      }
    }
  }
}

TEST(PerfData, ExpectedLayouts) {
  const int n = 3;
  const size_t count = 4;
  Pattern ag(Coll::kAllGather, DataType::kInt32, RedOp::kSum, n, 0, count, 1);
  EXPECT_EQ(ag.Expected(0, 2 * count + 1), ag.Input(2, 1));
  Pattern a2a(Coll::kAllToAll, DataType::kInt32, RedOp::kSum, n, 0, count, 1);
  EXPECT_EQ(a2a.Expected(1, 2 * count + 3), a2a.Input(2, 1 * count + 3));
  Pattern sc(Coll::kScatter, DataType::kInt32, RedOp::kSum, n, 2, count, 1);
  EXPECT_EQ(sc.Expected(1, 3), sc.Input(2, count + 3));
  Pattern bc(Coll::kBroadcast, DataType::kInt32, RedOp::kSum, n, 1, count, 1);
  EXPECT_EQ(bc.Expected(2, 3), bc.Input(1, 3));
  Pattern sr(Coll::kSendRecv, DataType::kInt32, RedOp::kSum, n, 0, count, 1);
  EXPECT_EQ(sr.Expected(0, 3), sr.Input(2, 3));
  Pattern rs(Coll::kReduceScatter, DataType::kInt32, RedOp::kSum, n, 0, count, 1);
  EXPECT_EQ(rs.Expected(2, 1), rs.Reduced(2 * count + 1));
  Pattern rd(Coll::kReduce, DataType::kInt32, RedOp::kSum, n, 1, count, 1);
  EXPECT_TRUE(rd.HasOutput(1));
  EXPECT_FALSE(rd.HasOutput(0));
}

}  // namespace
}  // namespace tutti::perf
