#include "core/work_completer.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace tutti {
namespace {

using namespace std::chrono_literals;

// A Work the test completes by hand. Wait(t) waits up to t for completion, then fails the work
// with a timeout, as the library's Works do.
class ManualWork : public WorkImpl {
 public:
  void Finish(Status st) {
    std::lock_guard<std::mutex> lock(mu_);
    if (done_) return;
    status_ = std::move(st);
    done_ = true;
  }
  Status Wait(double timeout_s) override {
    auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    while (!Test() && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(1ms);
    Finish(TimeoutError("manual work timed out"));
    return status();
  }
  bool Test() override {
    std::lock_guard<std::mutex> lock(mu_);
    ++tests_;
    return done_;
  }
  bool IsCompleted() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return done_;
  }
  Status status() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return status_;
  }
  int tests() const {
    std::lock_guard<std::mutex> lock(mu_);
    return tests_;
  }

 private:
  mutable std::mutex mu_;
  bool done_ = false;
  Status status_;
  int tests_ = 0;
};

WorkCompleter::Options Opts(double timeout_s = 30) {
  WorkCompleter::Options o;
  o.rank = 3;
  o.timeout_s = timeout_s;
  o.spin_us = 5;
  o.yield_us = 20;
  return o;
}

template <class Pred>
bool Eventually(Pred p, std::chrono::milliseconds limit = 5000ms) {
  auto until = std::chrono::steady_clock::now() + limit;
  while (!p()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

TEST(WorkCompleter, CompletedWorkRunsItsFunctionAtOnceOnTheCallingThread) {
  WorkCompleter c(Opts());
  auto impl = std::make_shared<ManualWork>();
  impl->Finish(OkStatus());
  std::thread::id ran_on;
  Status seen = InternalError("not called");
  ASSERT_TRUE(c.Add(Work(impl), [&](const Status& st) {
                 ran_on = std::this_thread::get_id();
                 seen = st;
               }).ok());
  EXPECT_EQ(ran_on, std::this_thread::get_id());
  EXPECT_TRUE(seen.ok());
  EXPECT_EQ(c.pending(), 0u);
}

TEST(WorkCompleter, FunctionsRunInTheOrderWorksCompleteNotTheOrderGiven) {
  WorkCompleter c(Opts());
  std::vector<std::shared_ptr<ManualWork>> works;
  std::mutex mu;
  std::vector<int> order;
  std::vector<Status> statuses(3);
  std::thread::id caller = std::this_thread::get_id();
  std::atomic<bool> on_caller{false};
  for (int i = 0; i < 3; ++i) {
    works.push_back(std::make_shared<ManualWork>());
    ASSERT_TRUE(c.Add(Work(works.back()), [&, i](const Status& st) {
                   std::lock_guard<std::mutex> lock(mu);
                   order.push_back(i);
                   statuses[i] = st;
                   if (std::this_thread::get_id() == caller) on_caller = true;
                 }).ok());
  }
  EXPECT_EQ(c.pending(), 3u);
  works[2]->Finish(OkStatus());
  ASSERT_TRUE(Eventually([&] { return c.pending() == 2; }));
  works[0]->Finish(RemoteError("rank 1 went away"));
  ASSERT_TRUE(Eventually([&] { return c.pending() == 1; }));
  works[1]->Finish(OkStatus());
  ASSERT_TRUE(Eventually([&] { return c.pending() == 0; }));
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_EQ(order, (std::vector<int>{2, 0, 1}));
  EXPECT_TRUE(statuses[2].ok());
  EXPECT_EQ(statuses[0].code(), Code::kRemoteError);
  EXPECT_NE(statuses[0].message().find("rank 1 went away"), std::string::npos);
  EXPECT_FALSE(on_caller.load());
}

TEST(WorkCompleter, WorkPendingPastTheTimeoutGetsATimeoutFailure) {
  WorkCompleter c(Opts(0.2));
  auto impl = std::make_shared<ManualWork>();
  std::atomic<int> calls{0};
  Status seen;
  std::mutex mu;
  auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(c.Add(Work(impl), [&](const Status& st) {
                 std::lock_guard<std::mutex> lock(mu);
                 seen = st;
                 ++calls;
               }).ok());
  ASSERT_TRUE(Eventually([&] { return calls.load() == 1; }));
  EXPECT_GE(std::chrono::steady_clock::now() - start, 200ms);
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_EQ(seen.code(), Code::kTimeout);
  EXPECT_NE(seen.message().find("rank 3"), std::string::npos) << seen.ToString();
  EXPECT_NE(seen.message().find("completion callback"), std::string::npos) << seen.ToString();
  EXPECT_TRUE(impl->IsCompleted());  // the Work itself failed, as a timed-out Wait does
}

TEST(WorkCompleter, IdleCompleterDoesNotPoll) {
  WorkCompleter c(Opts());
  auto impl = std::make_shared<ManualWork>();
  ASSERT_TRUE(c.Add(Work(impl), [](const Status&) {}).ok());
  impl->Finish(OkStatus());
  ASSERT_TRUE(Eventually([&] { return c.pending() == 0; }));
  int tests = impl->tests();
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(impl->tests(), tests);  // the finished Work is dropped and nothing else is polled
}

TEST(WorkCompleter, StopRunsPendingFunctionsWithTheirFailureAndRefusesLaterWork) {
  auto c = std::make_unique<WorkCompleter>(Opts());
  auto impl = std::make_shared<ManualWork>();
  Status seen = InternalError("not called");
  ASSERT_TRUE(c->Add(Work(impl), [&](const Status& st) { seen = st; }).ok());
  c->Stop();  // the Work gets its short last wait and fails
  EXPECT_EQ(seen.code(), Code::kTimeout);
  EXPECT_EQ(c->pending(), 0u);
  auto later = std::make_shared<ManualWork>();
  Status st = c->Add(Work(later), [](const Status&) { ADD_FAILURE() << "must not run"; });
  EXPECT_EQ(st.code(), Code::kInvalidUsage);
  c->Stop();  // idempotent
}

TEST(WorkCompleter, ThrowingFunctionDoesNotEndTheThreadAndChainingWorks) {
  WorkCompleter c(Opts());
  auto first = std::make_shared<ManualWork>();
  auto second = std::make_shared<ManualWork>();
  auto third = std::make_shared<ManualWork>();
  std::atomic<bool> second_ran{false}, third_ran{false};
  ASSERT_TRUE(c.Add(Work(first), [](const Status&) { throw std::runtime_error("boom"); }).ok());
  ASSERT_TRUE(c.Add(Work(second), [&](const Status&) {
                 second_ran = true;
                 // Chained from the completer's thread: a later call's function.
                 EXPECT_TRUE(c.Add(Work(third), [&](const Status&) { third_ran = true; }).ok());
               }).ok());
  first->Finish(OkStatus());
  second->Finish(OkStatus());
  ASSERT_TRUE(Eventually([&] { return second_ran.load(); }));
  third->Finish(OkStatus());
  ASSERT_TRUE(Eventually([&] { return third_ran.load(); }));
}

TEST(WorkCompleter, StopFromAFunctionDoesNotDeadlock) {
  WorkCompleter c(Opts());
  auto impl = std::make_shared<ManualWork>();
  std::atomic<bool> ran{false};
  ASSERT_TRUE(c.Add(Work(impl), [&](const Status&) {
                 c.Stop();
                 ran = true;
               }).ok());
  impl->Finish(OkStatus());
  ASSERT_TRUE(Eventually([&] { return ran.load(); }));
  // The destructor joins the thread, which ends after the function returned.
}

TEST(WorkCompleter, RefusesEmptyWorkAndMissingFunction) {
  WorkCompleter c(Opts());
  EXPECT_EQ(c.Add(Work(), [](const Status&) {}).code(), Code::kInvalidUsage);
  EXPECT_EQ(c.Add(Work(std::make_shared<ManualWork>()), nullptr).code(), Code::kInvalidArgument);
}

// A function may drop the last reference to the completer (a callback that held the
// communicator that owns it): the completer finishes as Stop would, and is destroyed as its
// thread ends, not from inside the function (which ended in std::terminate: a joinable thread
// destroyed by itself).
TEST(WorkCompleter, AFunctionMayLetGoOfTheCompletersLastOwner) {
  auto c = std::make_shared<WorkCompleter>(Opts());
  std::weak_ptr<WorkCompleter> watch = c;
  auto first = std::make_shared<ManualWork>(), second = std::make_shared<ManualWork>();
  std::atomic<int> ran{0};
  Status second_status = InternalError("not called");
  ASSERT_TRUE(c->Add(Work(first), [owner = c, &ran](const Status&) mutable {
                 owner.reset();  // the last owner goes here
                 ++ran;
               }).ok());
  ASSERT_TRUE(c->Add(Work(second), [&](const Status& st) {
                 second_status = st;
                 ++ran;
               }).ok());
  c.reset();
  ASSERT_FALSE(watch.expired());  // the first function still owns it
  first->Finish(OkStatus());
  // The second Work never completes: the completer, stopping, gives it its last short wait.
  ASSERT_TRUE(Eventually([&] { return ran.load() == 2; }, 10000ms));
  ASSERT_TRUE(Eventually([&] { return watch.expired(); }));
  EXPECT_EQ(second_status.code(), Code::kTimeout) << second_status.ToString();
}

}  // namespace
}  // namespace tutti
