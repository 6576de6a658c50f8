// The fused path of collectives on device memory (core/coll/fused_path.h) on a machine without a
// GPU: the stand-in runtime (host_as_device.h) gives shared "device" memory and runs each rank's
// program on host threads, as the rank kernel runs it on a GPU. Every collective, type and op;
// the same bits as the staged path's schedule on host memory; a mismatch fails the call and
// every later one, naming the first failure.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <functional>
#include <cstring>
#include <random>
#include <vector>

#include "tests/coll/coll_check.h"
#include "tests/coll/host_as_device.h"
#include "tests/coll/thread_coll_check.h"
#include "tests/harness/thread_ranks.h"

namespace tutti::testing {
namespace {

TEST(FusedPath, EveryCollectiveWithoutStaging) {
  auto rt = std::make_shared<HostAsDevice>(/*all_device=*/true, /*fused=*/true);
  CommOptions o;
  o.timeout_s = 120;
  o.device_runtime = rt;
  CollCheckConfig cfg;
  cfg.counts = {0, 1, 7, 300, 5000};  // LL and Simple (TUTTI_FUSED_LL_MAX 16 KiB)
  ExpectCollectivesPassOnThreadRanks(3, o, cfg);
  EXPECT_GT(rt->fused_runs.load(), 100);
  EXPECT_EQ(rt->staging_allocs.load(), 0) << "a call went the staged path";
  EXPECT_GT(rt->maps.load(), 0);
  EXPECT_EQ(rt->live.load(), 0) << "connections or scratch outlived the communicators";
}

// The fused kernels compute what the schedule computes: bit for bit the host path's result with
// the same schedule (no slots), for types whose sums round (fp8, bf16) on 3 ranks.
TEST(FusedPath, SameBitsAsTheScheduleOnHostMemory) {
  setenv("TUTTI_SLOT_MAX", "0", 1);
  auto rt = std::make_shared<HostAsDevice>(/*all_device=*/false, /*fused=*/true);
  CommOptions o;
  o.timeout_s = 60;
  o.device_runtime = rt;
  RunThreadRanks(3, [&](Communicator& c) {
    std::mt19937 rng(7 + c.rank());
    for (DataType t : {DataType::kFp8E4M3, DataType::kBfloat16, DataType::kFloat32}) {
      for (RedOp op : {RedOp::kSum, RedOp::kMax, RedOp::kAvg, RedOp::kPremulSum}) {
        for (size_t count : {size_t{1}, size_t{333}, size_t{20000}}) {
          const size_t esz = DataTypeSize(t), n = 3;
          std::vector<uint8_t> in(n * count * esz), host_out(n * count * esz), dev_out(n * count * esz);
          for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint8_t>(rng());
          if (t != DataType::kFloat32) {
            for (size_t i = 0; i < in.size(); ++i) in[i] = (i % esz == esz - 1) ? 0x30 + rng() % 16 : in[i];
          } else {
            for (size_t i = 0; i < in.size(); i += 4) in[i + 3] = 0x3f;
          }
          CollOptions co;
          co.premul_scalar = 0.5 + c.rank();
          co.nchannels = 2;  // both paths the same schedule (the fused path picks more channels by size)
          char* din = rt->AllocDevice(0, in.size());
          char* dout = rt->AllocDevice(0, dev_out.size());
          std::memcpy(din, in.data(), in.size());
          for (int which = 0; which < 2; ++which) {
            const bool rs = which == 1;
            Status hs = rs ? c.ReduceScatter(in.data(), host_out.data(), count, t, op, co)
                           : c.AllReduce(in.data(), host_out.data(), count, t, op, co);
            ASSERT_TRUE(hs.ok()) << hs.ToString();
            Status ds = rs ? c.ReduceScatter(din, dout, count, t, op, co) : c.AllReduce(din, dout, count, t, op, co);
            ASSERT_TRUE(ds.ok()) << ds.ToString();
            const size_t bytes = count * esz;
            ASSERT_EQ(std::memcmp(dout, host_out.data(), bytes), 0)
                << (rs ? "reduce_scatter " : "all_reduce ") << DataTypeName(t) << " " << RedOpName(op) << " count "
                << count << " rank " << c.rank();
          }
          rt->FreeDevice(0, din);
          rt->FreeDevice(0, dout);
        }
      }
    }
    c.Destroy();
  }, o);
  unsetenv("TUTTI_SLOT_MAX");
  EXPECT_GT(rt->fused_runs.load(), 0);
  EXPECT_EQ(rt->live.load(), 0);
}

// Large calls stay on the fused path (more channels, one schedule stream per channel: the FIFOs
// pipeline), and the sum is right.
TEST(FusedPath, LargeCallsStayFused) {
  auto rt = std::make_shared<HostAsDevice>(/*all_device=*/true, /*fused=*/true);
  CommOptions o;
  o.timeout_s = 60;
  o.device_runtime = rt;
  RunThreadRanks(2, [&](Communicator& c) {
    for (size_t count : {size_t{1} << 18, size_t{3} << 20}) {
      std::vector<float> buf(count, static_cast<float>(c.rank() + 1));
      Status st = c.AllReduce(buf.data(), buf.data(), count, DataType::kFloat32, RedOp::kSum);
      ASSERT_TRUE(st.ok()) << st.ToString();
      EXPECT_EQ(buf[0], 3.0f);
      EXPECT_EQ(buf[count - 1], 3.0f);
    }
    c.Destroy();
  }, o);
  EXPECT_EQ(rt->staging_allocs.load(), 0) << "a large call went the staged path";
  EXPECT_EQ(rt->fused_runs.load(), 4);
}

// A rank that cannot map a peer's memory (GPUs without peer access): every rank goes the staged
// path instead, and the calls are right.
TEST(FusedPath, NoPeerAccessFallsBackToStagingOnEveryRank) {
  auto rt = std::make_shared<HostAsDevice>(/*all_device=*/true, /*fused=*/true);
  rt->refuse_maps = 1;
  CommOptions o;
  o.timeout_s = 60;
  o.device_runtime = rt;
  RunThreadRanks(3, [&](Communicator& c) {
    for (size_t count : {size_t{5}, size_t{100000}}) {
      std::vector<float> buf(count, static_cast<float>(c.rank() + 1));
      Status st = c.AllReduce(buf.data(), buf.data(), count, DataType::kFloat32, RedOp::kSum);
      ASSERT_TRUE(st.ok()) << st.ToString();
      EXPECT_EQ(buf[count - 1], 6.0f);
    }
    c.Destroy();
  }, o);
  EXPECT_EQ(rt->fused_runs.load(), 0);
  EXPECT_GT(rt->staging_allocs.load(), 0);
}

// Ranks that disagree on the count: the pieces' sizes differ, the call fails with kMismatch (or
// a timeout on a rank whose peer stopped first), and every later call on device memory is
// refused, naming the failure, rather than reading stale pieces.
TEST(FusedPath, AMismatchFailsTheCallAndLaterOnes) {
  auto rt = std::make_shared<HostAsDevice>(/*all_device=*/true, /*fused=*/true);
  CommOptions o;
  o.timeout_s = 5;
  o.device_runtime = rt;
  RunThreadRanks(2, [&](Communicator& c) {
    std::vector<float> buf(4096, 1.0f);
    ASSERT_TRUE(c.AllReduce(buf.data(), buf.data(), 100, DataType::kFloat32, RedOp::kSum).ok());
    const size_t count = c.rank() == 0 ? 100 : 200;
    Status st = c.AllReduce(buf.data(), buf.data(), count, DataType::kFloat32, RedOp::kSum);
    EXPECT_FALSE(st.ok());
    EXPECT_TRUE(st.code() == Code::kMismatch || st.code() == Code::kTimeout || st.code() == Code::kRemoteError)
        << st.ToString();
    EXPECT_NE(st.message().find("fused"), std::string::npos) << st.ToString();
    st = c.AllReduce(buf.data(), buf.data(), 100, DataType::kFloat32, RedOp::kSum);
    EXPECT_FALSE(st.ok()) << "a call after a failed fused call ran";
    c.Destroy();
  }, o);
}

// Ranks whose calls differ in what the pieces' sizes do not show: the op, a type of the same
// width, the algorithm, or a call one rank skipped. Each piece carries the call trail, so the
// call fails with kMismatch on a rank that receives from the other (before, such calls combined
// pieces of two different calls and returned wrong results as if nothing happened), over both
// protocols.
TEST(FusedPath, CallsThatDifferInWhatSizesDoNotShowAreAMismatch) {
  struct Case {
    const char* what;
    std::function<Status(Communicator&, std::vector<int32_t>&, size_t)> call;
  };
  // (A peer that waited for the call's timeout instead of being stopped would fail the test.)
  auto reduce = [](Communicator& c, std::vector<int32_t>& b, size_t n, DataType t, RedOp op,
                   const std::string& algorithm) {
    CollOptions co;
    co.algorithm = algorithm;
    co.timeout_s = 20;
    return c.AllReduce(b.data(), b.data(), n, t, op, co);
  };
  const std::vector<Case> cases = {
      {"op", [&](Communicator& c, std::vector<int32_t>& b, size_t n) {
         return reduce(c, b, n, DataType::kInt32, c.rank() == 0 ? RedOp::kSum : RedOp::kMax, "ring");
       }},
      {"type", [&](Communicator& c, std::vector<int32_t>& b, size_t n) {
         return reduce(c, b, n, c.rank() == 0 ? DataType::kInt32 : DataType::kUint32, RedOp::kSum, "ring");
       }},
      {"algorithm", [&](Communicator& c, std::vector<int32_t>& b, size_t n) {
         return reduce(c, b, n, DataType::kInt32, RedOp::kSum, c.rank() == 0 ? "ring" : "rhd");
       }},
      {"a skipped call", [&](Communicator& c, std::vector<int32_t>& b, size_t n) {
         // Rank 0 makes a broadcast rank 1 does not make (as root, it only sends: its pieces wait
         // in the connection), then both make the same all_reduce.
         if (c.rank() == 0) {
           CollOptions co;
           co.timeout_s = 20;
           Status st = c.Broadcast(b.data(), b.data(), n, DataType::kInt32, 0, co);
           if (!st.ok()) return st;
         }
         return reduce(c, b, n, DataType::kInt32, RedOp::kSum, "ring");
       }},
  };
  for (size_t count : {size_t{64}, size_t{20000}}) {  // LL and Simple
    for (const Case& k : cases) {
      auto rt = std::make_shared<HostAsDevice>(/*all_device=*/true, /*fused=*/true);
      CommOptions o;
      o.timeout_s = 10;
      o.device_runtime = rt;
      std::atomic<int> mismatches{0};
      RunThreadRanks(2, [&](Communicator& c) {
        std::vector<int32_t> buf(count, c.rank() + 1);
        ASSERT_TRUE(reduce(c, buf, count, DataType::kInt32, RedOp::kSum, "ring").ok());  // the connections are up
        const Status st = k.call(c, buf, count);
        EXPECT_FALSE(st.ok()) << k.what << ", count " << count << ": rank " << c.rank() << " completed";
        // Every rank names the mismatch: the one that saw it, and a peer whose kernel its CLOSE
        // stopped (kRemoteError), not one that waited for its timeout.
        EXPECT_NE(st.message().find("belongs to another call"), std::string::npos) << k.what << ": " << st.ToString();
        EXPECT_NE(st.message().find("fused"), std::string::npos) << st.ToString();
        if (st.code() == Code::kMismatch) ++mismatches;
        c.Destroy();
      }, o);
      EXPECT_GE(mismatches.load(), 1) << k.what << ", count " << count << ": no rank saw the mismatch";
      EXPECT_GT(rt->fused_runs.load(), 2) << k.what;
    }
  }
}

// Three ranks on a ring, rank 2 with another op: ranks 0 and 2 receive its pieces and see the
// mismatch, rank 1 receives only rank 0's, whose tag is its own. Rank 1 is stopped by the
// failure its peers announce (CLOSE), naming the mismatch, instead of waiting for its timeout.
TEST(FusedPath, ARankThatSeesNoForeignPieceIsStoppedByThePeersFailure) {
  for (size_t count : {size_t{64}, size_t{20000}}) {  // LL and Simple
    auto rt = std::make_shared<HostAsDevice>(/*all_device=*/true, /*fused=*/true);
    CommOptions o;
    o.timeout_s = 60;
    o.device_runtime = rt;
    RunThreadRanks(3, [&](Communicator& c) {
      std::vector<int32_t> buf(count, c.rank() + 1);
      CollOptions co;
      co.algorithm = "ring";
      co.timeout_s = 20;  // a rank that waited for it would not name the mismatch
      ASSERT_TRUE(c.AllReduce(buf.data(), buf.data(), count, DataType::kInt32, RedOp::kSum, co).ok());
      const RedOp op = c.rank() == 2 ? RedOp::kMax : RedOp::kSum;
      const Status st = c.AllReduce(buf.data(), buf.data(), count, DataType::kInt32, op, co);
      EXPECT_FALSE(st.ok()) << "count " << count << ": rank " << c.rank() << " completed";
      EXPECT_NE(st.message().find("belongs to another call"), std::string::npos)
          << "count " << count << ", rank " << c.rank() << ": " << st.ToString();
      c.Destroy();
    }, o);
  }
}

}  // namespace
}  // namespace tutti::testing
