// Communicator::OnComplete over shm and tcp: functions run when their Work completes, in the
// order Works complete (a receive that matches late does not hold back one that matched early),
// with the call's result visible; chaining a call from a function; Abort, Destroy and the
// communicator's timeout complete pending Works with their error; a function may destroy its
// communicator; empty Works and destroyed communicators are refused.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>
#include <vector>

#include "tests/harness/thread_ranks.h"

namespace tutti::testing {
namespace {

using namespace std::chrono_literals;

template <class Pred>
bool Eventually(Pred p, std::chrono::milliseconds limit = 20000ms) {
  auto until = std::chrono::steady_clock::now() + limit;
  while (!p()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(200us);
  }
  return true;
}

class WorkCallback : public ::testing::TestWithParam<std::string> {
 protected:
  CommOptions Opts(double timeout_s = 30) {
    CommOptions o;
    o.transport = GetParam();
    o.timeout_s = timeout_s;
    return o;
  }
};

TEST_P(WorkCallback, ReceivesCompleteInTheOrderTheyMatch) {
  RunThreadRanks(2, [&](Communicator& c) {
    int token = 0;
    if (c.rank() == 1) {
      int two = 2;
      ASSERT_TRUE(c.Send(&two, sizeof two, 0, 2).ok());
      ASSERT_TRUE(c.Recv(&token, sizeof token, 0, 9).ok());  // rank 0 saw tag 2's function run
      int one = 1;
      ASSERT_TRUE(c.Send(&one, sizeof one, 0, 1).ok());
      return;
    }
    int in1 = 0, in2 = 0;
    std::atomic<int> ran1{0}, ran2{0};
    auto w1 = c.IRecv(&in1, sizeof in1, 1, 1);
    auto w2 = c.IRecv(&in2, sizeof in2, 1, 2);
    ASSERT_TRUE(w1.ok() && w2.ok());
    ASSERT_TRUE(c.OnComplete(*w1, [&](const Status& st) {
                   EXPECT_TRUE(st.ok()) << st.ToString();
                   ran1 = in1;  // the message is in place when the function runs
                 }).ok());
    ASSERT_TRUE(c.OnComplete(*w2, [&](const Status& st) {
                   EXPECT_TRUE(st.ok()) << st.ToString();
                   ran2 = in2;
                 }).ok());
    // Tag 2 arrives first; its function runs although the receive posted before it is pending.
    ASSERT_TRUE(Eventually([&] { return ran2.load() == 2; }));
    EXPECT_EQ(ran1.load(), 0);
    ASSERT_TRUE(c.Send(&token, sizeof token, 1, 9).ok());
    ASSERT_TRUE(Eventually([&] { return ran1.load() == 1; }));
  }, Opts());
}

TEST_P(WorkCallback, CollectiveResultsAndAChainedCall) {
  for (size_t count : {size_t{2}, size_t{70000}}) {  // slot-sized and a scheduled collective
    RunThreadRanks(3, [&](Communicator& c) {
      std::vector<float> x(count, static_cast<float>(c.rank() + 1)), y(count, 0.f), z(count, 0.f);
      std::promise<Status> chained;
      auto w = c.IAllReduce(x.data(), y.data(), count, DataType::kFloat32, RedOp::kSum);
      ASSERT_TRUE(w.ok()) << w.status().ToString();
      ASSERT_TRUE(c.OnComplete(*w, [&](const Status& st) {
                     if (!st.ok()) {
                       chained.set_value(st);
                       return;
                     }
                     // Every rank issues the second call from its completer thread, in the same
                     // order on every rank (nothing else is issued meanwhile).
                     auto w2 = c.IAllReduce(y.data(), z.data(), count, DataType::kFloat32, RedOp::kMax);
                     if (!w2.ok()) {
                       chained.set_value(w2.status());
                       return;
                     }
                     Status added = c.OnComplete(*w2, [&](const Status& st2) { chained.set_value(st2); });
                     if (!added.ok()) chained.set_value(added);
                   }).ok());
      auto fut = chained.get_future();
      ASSERT_EQ(fut.wait_for(30s), std::future_status::ready);
      Status st = fut.get();
      ASSERT_TRUE(st.ok()) << st.ToString();
      for (size_t i = 0; i < count; i += 997) {
        ASSERT_EQ(y[i], 6.f) << "count " << count << " at " << i;
        ASSERT_EQ(z[i], 6.f) << "count " << count << " at " << i;
      }
    }, Opts());
  }
}

TEST_P(WorkCallback, AbortCompletesPendingWorkWithItsError) {
  RunThreadRanks(2, [&](Communicator& c) {
    if (c.rank() == 1) {  // never sends, and stays until rank 0 has aborted
      std::this_thread::sleep_for(500ms);
      return;
    }
    int in = 0;
    std::promise<Status> done;
    auto w = c.IRecv(&in, sizeof in, 1, 5);
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE(c.OnComplete(*w, [&](const Status& st) { done.set_value(st); }).ok());
    std::this_thread::sleep_for(20ms);
    c.Abort("test gives up");
    auto fut = done.get_future();
    ASSERT_EQ(fut.wait_for(10s), std::future_status::ready);
    Status st = fut.get();
    EXPECT_EQ(st.code(), Code::kAborted) << st.ToString();
    EXPECT_NE(st.message().find("test gives up"), std::string::npos) << st.ToString();
  }, Opts());
}

TEST_P(WorkCallback, DestroyRunsPendingFunctionsBeforeItReturns) {
  RunThreadRanks(2, [&](Communicator& c) {
    if (c.rank() == 1) {  // stays until rank 0 has destroyed its communicator
      std::this_thread::sleep_for(500ms);
      return;
    }
    int in = 0;
    Status seen = InternalError("not called");
    std::atomic<bool> ran{false};
    auto w = c.IRecv(&in, sizeof in, 1, 5);
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE(c.OnComplete(*w, [&](const Status& st) {
                   seen = st;
                   ran = true;
                 }).ok());
    c.Destroy();
    ASSERT_TRUE(ran.load());
    EXPECT_FALSE(seen.ok());
    EXPECT_NE(seen.message().find("rank 0: communicator destroyed"), std::string::npos) << seen.ToString();
    EXPECT_EQ(c.OnComplete(*w, [](const Status&) {}).code(), Code::kInvalidUsage);
  }, Opts());
}

TEST_P(WorkCallback, AFunctionMayDestroyItsCommunicator) {
  RunThreadRanks(2, [&](Communicator& c) {
    int token = 7;
    if (c.rank() == 1) {
      ASSERT_TRUE(c.Send(&token, sizeof token, 0, 3).ok());
      return;
    }
    int in = 0;
    std::promise<Status> destroyed;
    auto w = c.IRecv(&in, sizeof in, 1, 3);
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE(c.OnComplete(*w, [&](const Status& st) {
                   EXPECT_TRUE(st.ok()) << st.ToString();
                   c.Destroy();  // from the completion thread: must not wait for itself
                   destroyed.set_value(c.Barrier());
                 }).ok());
    auto fut = destroyed.get_future();
    ASSERT_EQ(fut.wait_for(20s), std::future_status::ready);
    EXPECT_EQ(fut.get().code(), Code::kInvalidUsage);
    EXPECT_EQ(in, 7);
  }, Opts());
}

TEST_P(WorkCallback, PendingWorkTimesOut) {
  RunThreadRanks(2, [&](Communicator& c) {
    if (c.rank() == 1) {
      std::this_thread::sleep_for(1500ms);  // stays until rank 0's receive timed out
      return;
    }
    int in = 0;
    std::promise<Status> done;
    const auto start = std::chrono::steady_clock::now();
    auto w = c.IRecv(&in, sizeof in, 1, 5);
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE(c.OnComplete(*w, [&](const Status& st) { done.set_value(st); }).ok());
    auto fut = done.get_future();
    ASSERT_EQ(fut.wait_for(10s), std::future_status::ready);
    Status st = fut.get();
    EXPECT_GE(std::chrono::steady_clock::now() - start, 500ms);
    EXPECT_EQ(st.code(), Code::kTimeout) << st.ToString();
    EXPECT_NE(st.message().find("rank 0"), std::string::npos) << st.ToString();
  }, Opts(/*timeout_s=*/0.5));
}

TEST_P(WorkCallback, RefusesAnEmptyWork) {
  RunThreadRanks(1, [&](Communicator& c) {
    EXPECT_EQ(c.OnComplete(Work(), [](const Status&) {}).code(), Code::kInvalidUsage);
    // A finished call's function runs at once, on this thread.
    float v = 1, r = 0;
    auto w = c.IAllReduce(&v, &r, 1, DataType::kFloat32, RedOp::kSum);
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE(w->Wait().ok());
    std::thread::id ran_on;
    ASSERT_TRUE(c.OnComplete(*w, [&](const Status&) { ran_on = std::this_thread::get_id(); }).ok());
    EXPECT_EQ(ran_on, std::this_thread::get_id());
  }, Opts());
}

INSTANTIATE_TEST_SUITE_P(Transports, WorkCallback, ::testing::Values("shm", "tcp"));

}  // namespace
}  // namespace tutti::testing
