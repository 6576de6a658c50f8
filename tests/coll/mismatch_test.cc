// Mismatched collective calls (different collective, count, type, op or root in the same
// position) end with a clear error on every rank involved, never a hang or garbage.
#include <gtest/gtest.h>

#include <functional>
#include <vector>

#include "tests/harness/thread_ranks.h"

namespace tutti::testing {
namespace {

using Call = std::function<Status(Communicator&, std::vector<float>&, std::vector<float>&)>;

// Over shm (single-host calls go through the shared slots), shm with every call compared on every
// rank as it runs (TUTTI_STRICT_CHECKS), and tcp (messages).
class Mismatch : public ::testing::TestWithParam<std::string> {
 protected:
  // Rank 0 makes call a, rank 1 call b; both must fail and the error must explain it. With
  // `or_next`, calls in which neither rank takes the other's data may complete, through the slots
  // (without strict checks) or as messages (a collective's eager sends wait for no answer); the
  // next call that connects the ranks must then fail on both.
  void ExpectMismatch(const Call& a, const Call& b, bool or_next = false) {
    CommOptions o;
    o.timeout_s = 2;
    o.transport = GetParam() == "shm_strict" ? "shm" : GetParam();
    o.strict_checks = GetParam() == "shm_strict";
    or_next = or_next && GetParam() != "shm_strict";
    RunThreadRanks(2, [&](Communicator& c) {
      std::vector<float> in(64, 1.0f), out(64, 0.0f);
      Status st = (c.rank() == 0 ? a : b)(c, in, out);
      if (or_next && st.ok()) {
        st = c.AllReduce(in.data(), out.data(), 4, DataType::kFloat32, RedOp::kSum);
        ASSERT_FALSE(st.ok()) << "rank " << c.rank() << " did not notice the mismatch at the next call";
        EXPECT_EQ(st.code(), Code::kMismatch) << st.ToString();
      }
      ASSERT_FALSE(st.ok()) << "rank " << c.rank() << " did not notice the mismatch";
      // Mismatch where the messages meet; a timeout (or the peer's report of one) where they cannot.
      EXPECT_TRUE(st.code() == Code::kMismatch || st.code() == Code::kTimeout || st.code() == Code::kRemoteError)
          << st.ToString();
      EXPECT_NE(st.message().find("different c"), std::string::npos) << st.ToString();
      EXPECT_NE(st.message().find("rank " + std::to_string(c.rank())), std::string::npos) << st.ToString();
    }, o);
  }
};

Call AllReduce(size_t count, DataType t, RedOp op = RedOp::kSum) {
  return [=](Communicator& c, std::vector<float>& in, std::vector<float>& out) {
    return c.AllReduce(in.data(), out.data(), count, t, op);
  };
}

TEST_P(Mismatch, Count) { ExpectMismatch(AllReduce(10, DataType::kFloat32), AllReduce(12, DataType::kFloat32)); }

TEST_P(Mismatch, Type) { ExpectMismatch(AllReduce(10, DataType::kFloat32), AllReduce(10, DataType::kInt32)); }

TEST_P(Mismatch, Op) { ExpectMismatch(AllReduce(10, DataType::kFloat32), AllReduce(10, DataType::kFloat32, RedOp::kMax)); }

TEST_P(Mismatch, Collective) {
  ExpectMismatch(AllReduce(8, DataType::kFloat32),
                 [](Communicator& c, std::vector<float>& in, std::vector<float>& out) {
                   return c.AllGather(in.data(), out.data(), 8, DataType::kFloat32);
                 });
}

TEST_P(Mismatch, Root) {
  // Both ranks think they are the root: neither waits for the other (as messages both only send,
  // and small sends complete unanswered), so the next call finds that the ranks' calls diverged.
  auto bcast = [](int root) {
    return [root](Communicator& c, std::vector<float>& in, std::vector<float>& out) {
      return c.Broadcast(in.data(), out.data(), 16, DataType::kFloat32, root);
    };
  };
  ExpectMismatch(bcast(0), bcast(1), /*or_next=*/true);
}

TEST_P(Mismatch, RootedCallsThatDoNotMeet) {
  // Rank 0 the root of a broadcast, rank 1 a non-root of a reduce: neither takes the other's data.
  ExpectMismatch(
      [](Communicator& c, std::vector<float>& in, std::vector<float>& out) {
        return c.Broadcast(in.data(), out.data(), 16, DataType::kFloat32, 0);
      },
      [](Communicator& c, std::vector<float>& in, std::vector<float>& out) {
        return c.Reduce(in.data(), out.data(), 16, DataType::kFloat32, RedOp::kSum, 0);
      },
      /*or_next=*/true);
}

TEST_P(Mismatch, EmptyCallOnOneRank) {
  // A call of count 0 moves nothing and completes at once; the count differs. (As messages it
  // sends nothing either, so only the peer, waiting in vain, fails: covered by the timeout.)
  if (GetParam() == "tcp") GTEST_SKIP() << "an empty call sends no message";
  ExpectMismatch(AllReduce(0, DataType::kFloat32), AllReduce(16, DataType::kFloat32), /*or_next=*/true);
}

TEST_P(Mismatch, Algorithm) {
  auto with = [](const char* algo) {
    return [algo](Communicator& c, std::vector<float>& in, std::vector<float>& out) {
      CollOptions o;
      o.algorithm = algo;
      return c.AllReduce(in.data(), out.data(), 32, DataType::kFloat32, RedOp::kSum, o);
    };
  };
  ExpectMismatch(with("ring"), with("rhd"));
}

INSTANTIATE_TEST_SUITE_P(Transports, Mismatch, ::testing::Values("shm", "shm_strict", "tcp"));

}  // namespace
}  // namespace tutti::testing
