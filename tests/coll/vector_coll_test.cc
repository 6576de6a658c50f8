// The v-collectives (all_to_all_v, all_gather_v, gather_v, scatter_v, reduce_scatter_v) on
// thread ranks over shm and tcp: random counts (zeros included) and displacements with gaps,
// every root, several element sizes, checked element by element against what each rank sent;
// untouched gaps stay untouched; disagreements and bad arguments are clear errors; nothing is
// left held afterwards.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "core/base/dtype.h"
#include "tests/harness/thread_ranks.h"

namespace tutti::testing {
namespace {

class VColl : public ::testing::TestWithParam<std::string> {
 protected:
  CommOptions Opts() {
    CommOptions o;
    o.transport = GetParam();
    o.timeout_s = 60;
    return o;
  }
};

// The same for every rank (seeded by the round): counts[i][j] = elements rank i sends rank j.
std::vector<std::vector<uint64_t>> Matrix(int n, uint64_t seed, uint64_t max) {
  std::mt19937_64 rng(seed);
  std::vector<std::vector<uint64_t>> m(n, std::vector<uint64_t>(n));
  for (auto& row : m)
    for (auto& v : row) v = rng() % 4 == 0 ? 0 : rng() % (max + 1);
  return m;
}

// Blocks with gaps of a few elements between them, in a shuffled order of ranks.
Communicator::Blocks Spread(const std::vector<uint64_t>& counts, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<int> order(counts.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::shuffle(order.begin(), order.end(), rng);
  Communicator::Blocks b{counts, std::vector<uint64_t>(counts.size())};
  uint64_t at = rng() % 3;
  for (int r : order) {
    b.displs[r] = at;
    at += counts[r] + rng() % 3;
  }
  return b;
}

uint64_t Extent(const Communicator::Blocks& b) {
  uint64_t e = 0;
  for (size_t i = 0; i < b.counts.size(); ++i) e = std::max(e, b.displs[i] + b.counts[i]);
  return e;
}

// Byte k of element e that rank `from` sends rank `to`.
uint8_t Byte(int from, int to, uint64_t e, size_t k) { return static_cast<uint8_t>(from * 37 + to * 11 + e * 3 + k); }
constexpr uint8_t kUntouched = 0xEE;

TEST_P(VColl, AllToAllV) {
  for (int n : {1, 2, 3, 5}) {
    for (DataType t : {DataType::kInt8, DataType::kFloat32, DataType::kFloat64}) {
      const size_t es = DataTypeSize(t);
      const uint64_t seed = n * 100 + static_cast<int>(t);
      auto m = Matrix(n, seed, 300);
      RunThreadRanks(n, [&](Communicator& c) {
        const int me = c.rank();
        std::vector<uint64_t> scounts(n), rcounts(n);
        for (int j = 0; j < n; ++j) {
          scounts[j] = m[me][j];
          rcounts[j] = m[j][me];
        }
        auto sb = Spread(scounts, seed + me), rb = Spread(rcounts, seed + 50 + me);
        std::vector<uint8_t> send(Extent(sb) * es, 0), recv(Extent(rb) * es, kUntouched);
        for (int j = 0; j < n; ++j)
          for (uint64_t e = 0; e < scounts[j]; ++e)
            for (size_t k = 0; k < es; ++k) send[(sb.displs[j] + e) * es + k] = Byte(me, j, e, k);
        Status st = c.AllToAllV(send.data(), sb, recv.data(), rb, t);
        ASSERT_TRUE(st.ok()) << st.ToString();
        std::vector<bool> written(recv.size());
        for (int j = 0; j < n; ++j)
          for (uint64_t e = 0; e < rcounts[j]; ++e)
            for (size_t k = 0; k < es; ++k) {
              const size_t at = (rb.displs[j] + e) * es + k;
              written[at] = true;
              ASSERT_EQ(recv[at], Byte(j, me, e, k)) << "n=" << n << " from " << j << " element " << e;
            }
        for (size_t i = 0; i < recv.size(); ++i)
          if (!written[i]) ASSERT_EQ(recv[i], kUntouched) << "gap byte " << i << " was written";
        EXPECT_EQ(c.stats().collectives_in_flight, 0u);
        EXPECT_EQ(c.stats().tracked_messages, 0u);
      }, Opts());
    }
  }
}

TEST_P(VColl, AllGatherVAndGatherVAndScatterV) {
  for (int n : {1, 2, 4}) {
    std::vector<uint64_t> counts(n);
    for (int i = 0; i < n; ++i) counts[i] = (i * 7 + 3) % 5 == 0 ? 0 : i * 1000 + 17;  // a zero now and then
    RunThreadRanks(n, [&](Communicator& c) {
      const int me = c.rank();
      auto rb = Spread(counts, 7 + me);
      std::vector<int32_t> mine(counts[me]);
      for (uint64_t e = 0; e < counts[me]; ++e) mine[e] = me * 100000 + static_cast<int32_t>(e);
      std::vector<int32_t> all(Extent(rb), -1);
      Status st = c.AllGatherV(mine.data(), counts[me], all.data(), rb, DataType::kInt32);
      ASSERT_TRUE(st.ok()) << st.ToString();
      for (int j = 0; j < n; ++j)
        for (uint64_t e = 0; e < counts[j]; ++e) ASSERT_EQ(all[rb.displs[j] + e], j * 100000 + static_cast<int32_t>(e));
      for (int root = 0; root < n; ++root) {
        std::vector<int32_t> g(me == root ? Extent(rb) : 0, -1);
        st = c.GatherV(mine.data(), counts[me], g.data(), me == root ? rb : Communicator::Blocks{}, DataType::kInt32, root);
        ASSERT_TRUE(st.ok()) << st.ToString();
        if (me == root)
          for (int j = 0; j < n; ++j)
            for (uint64_t e = 0; e < counts[j]; ++e) ASSERT_EQ(g[rb.displs[j] + e], j * 100000 + static_cast<int32_t>(e));
        // scatter_v back out of what the root gathered
        std::vector<int32_t> back(counts[me], -1);
        st = c.ScatterV(g.data(), me == root ? rb : Communicator::Blocks{}, back.data(), counts[me], DataType::kInt32, root);
        ASSERT_TRUE(st.ok()) << st.ToString();
        EXPECT_EQ(back, mine);
      }
    }, Opts());
  }
}

TEST_P(VColl, ReduceScatterV) {
  for (int n : {1, 2, 3, 5}) {
    std::vector<uint64_t> counts(n);
    for (int i = 0; i < n; ++i) counts[i] = i == 1 ? 0 : 40 * i + 9;
    uint64_t total = 0;
    for (uint64_t v : counts) total += v;
    for (RedOp op : {RedOp::kSum, RedOp::kMax, RedOp::kBxor, RedOp::kAvg}) {
      RunThreadRanks(n, [&](Communicator& c) {
        const int me = c.rank();
        auto value = [](int r, uint64_t i) { return static_cast<int64_t>((r * 131 + i * 7) % 1000) - 300; };
        std::vector<int64_t> in(total), out(counts[me], 77);
        for (uint64_t i = 0; i < total; ++i) in[i] = value(me, i);
        Status st = c.ReduceScatterV(in.data(), out.data(), counts, DataType::kInt64, op);
        ASSERT_TRUE(st.ok()) << st.ToString();
        uint64_t base = 0;
        for (int j = 0; j < me; ++j) base += counts[j];
        for (uint64_t e = 0; e < counts[me]; ++e) {
          int64_t want = value(0, base + e);
          for (int r = 1; r < n; ++r) {
            const int64_t v = value(r, base + e);
            want = op == RedOp::kSum || op == RedOp::kAvg ? want + v : op == RedOp::kMax ? std::max(want, v) : (want ^ v);
          }
          if (op == RedOp::kAvg) want /= n;  // integers truncate
          ASSERT_EQ(out[e], want) << "element " << e << " of rank " << me << " " << RedOpName(op);
        }
      }, Opts());
    }
  }
  // float32 sums, rank order: the same bits as summing locally left to right
  RunThreadRanks(3, [&](Communicator& c) {
    std::vector<uint64_t> counts = {5, 6, 7};
    std::vector<float> in(18), out(counts[c.rank()]);
    for (size_t i = 0; i < in.size(); ++i) in[i] = 0.1f * (c.rank() + 1) + 1e-3f * i;
    ASSERT_TRUE(c.ReduceScatterV(in.data(), out.data(), counts, DataType::kFloat32, RedOp::kSum).ok());
    const uint64_t base = c.rank() == 0 ? 0 : c.rank() == 1 ? 5 : 11;
    for (uint64_t e = 0; e < counts[c.rank()]; ++e) {
      float want = 0.1f * 1 + 1e-3f * (base + e);
      for (int r = 1; r < 3; ++r) want += 0.1f * (r + 1) + 1e-3f * (base + e);
      EXPECT_EQ(out[e], want);
    }
  }, Opts());
}

// premul_sum: each rank's input scaled by its own scalar, then summed in rank order.
TEST_P(VColl, ReduceScatterVPremulSum) {
  RunThreadRanks(3, [&](Communicator& c) {
    const std::vector<uint64_t> counts = {4, 0, 7};
    std::vector<float> in(11), out(counts[c.rank()], -1.0f);
    for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(c.rank() * 10 + i);
    CollOptions o;
    o.premul_scalar = 0.5 * (c.rank() + 1);
    ASSERT_TRUE(c.ReduceScatterV(in.data(), out.data(), counts, DataType::kFloat32, RedOp::kPremulSum, o).ok());
    const uint64_t base = c.rank() == 2 ? 4 : 0;
    for (uint64_t e = 0; e < counts[c.rank()]; ++e) {
      float want = 0;
      for (int r = 0; r < 3; ++r) want += static_cast<float>(r * 10 + base + e) * (0.5f * (r + 1));
      EXPECT_EQ(out[e], want) << "element " << e << " of rank " << c.rank();
    }
    // The caller's input is untouched (scaled into a private copy).
    for (size_t i = 0; i < in.size(); ++i) ASSERT_EQ(in[i], static_cast<float>(c.rank() * 10 + i));
  }, Opts());
}

TEST_P(VColl, DisagreementsAndBadArgumentsAreClearErrors) {
  RunThreadRanks(2, [&](Communicator& c) {
    std::vector<float> a(64), b(64);
    Communicator::Blocks two{{4, 4}, {}};
    // wrong number of counts; overlapping receive blocks; overlapping buffers; a NaN premul scalar
    Status st = c.AllToAllV(a.data(), Communicator::Blocks{{4}, {}}, b.data(), two, DataType::kFloat32);
    EXPECT_EQ(st.code(), Code::kInvalidArgument) << st.ToString();
    EXPECT_NE(st.message().find("1 counts"), std::string::npos) << st.message();
    st = c.AllToAllV(a.data(), two, b.data(), Communicator::Blocks{{4, 4}, {0, 2}}, DataType::kFloat32);
    EXPECT_EQ(st.code(), Code::kInvalidArgument) << st.ToString();
    EXPECT_NE(st.message().find("overlap"), std::string::npos) << st.message();
    st = c.AllToAllV(a.data(), two, a.data() + 2, two, DataType::kFloat32);
    EXPECT_EQ(st.code(), Code::kInvalidArgument) << st.ToString();
    CollOptions nan_scalar;
    nan_scalar.premul_scalar = std::nan("");
    st = c.ReduceScatterV(a.data(), b.data(), {3, 3}, DataType::kFloat32, RedOp::kPremulSum, nan_scalar);
    EXPECT_EQ(st.code(), Code::kInvalidArgument) << st.ToString();
    st = c.ReduceScatterV(a.data(), b.data(), {3, 3}, DataType::kFloat32, RedOp::kBand);
    EXPECT_EQ(st.code(), Code::kInvalidArgument) << st.ToString();
    st = c.GatherV(a.data(), 4, b.data(), two, DataType::kFloat32, 5);
    EXPECT_EQ(st.code(), Code::kInvalidArgument) << st.ToString();
    // Still usable: refused calls were never issued.
    ASSERT_TRUE(c.AllToAllV(a.data(), two, b.data(), two, DataType::kFloat32).ok());
    // Rank 1 expects 5 elements from rank 0, which sends 4: a mismatch, on the ranks involved.
    // Rank 0's small sends complete unanswered (tcp), so it may learn of it only at its next call.
    Communicator::Blocks r1{{5, 4}, {}};
    st = c.AllToAllV(a.data(), two, b.data(), c.rank() == 1 ? r1 : two, DataType::kFloat32);
    if (c.rank() == 0 && st.ok()) {
      st = c.AllToAllV(a.data(), two, b.data(), two, DataType::kFloat32);
      ASSERT_FALSE(st.ok()) << "rank 0 never heard of the mismatch";
      EXPECT_TRUE(st.code() == Code::kMismatch || st.code() == Code::kRemoteError) << st.ToString();
      EXPECT_NE(st.message().find("rank 1"), std::string::npos) << st.ToString();
    }
    EXPECT_FALSE(st.ok());
    if (c.rank() == 1) EXPECT_EQ(st.code(), Code::kMismatch) << st.ToString();
  }, Opts());
}

INSTANTIATE_TEST_SUITE_P(Transports, VColl, ::testing::Values("shm", "tcp"));

}  // namespace
}  // namespace tutti::testing
