// Collectives whose local copies and reductions go through other local engines than the
// default inline one: a worker thread, a worker that delays every task by a random time (so
// completions arrive late and out of step with the messages), and an engine whose task fails.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "core/exec/cpu_engine.h"
#include "tests/coll/coll_check.h"
#include "tests/coll/thread_coll_check.h"
#include "tests/harness/thread_ranks.h"

namespace tutti::testing {
namespace {

using exec::CpuEngine;
using exec::LocalEngine;
using exec::LocalTask;

void CheckAll(int n, std::shared_ptr<LocalEngine> engine) {
  CommOptions o;
  o.timeout_s = 120;
  o.local_engine = std::move(engine);
  CollCheckConfig cfg;
  cfg.counts = {0, 1, 7, 300};
  ExpectCollectivesPassOnThreadRanks(n, o, cfg);
}

TEST(LocalEngines, WorkerThread) { CheckAll(3, std::make_shared<CpuEngine>(CpuEngine::Mode::kWorker)); }

TEST(LocalEngines, DelayedCompletions) {
  auto mu = std::make_shared<std::mutex>();
  auto rng = std::make_shared<std::mt19937>(7);
  CheckAll(4, std::make_shared<CpuEngine>(CpuEngine::Mode::kWorker, [mu, rng](const LocalTask&) {
    int us;
    {
      std::lock_guard<std::mutex> lock(*mu);
      us = static_cast<int>((*rng)() % 300);
    }
    std::this_thread::sleep_for(std::chrono::microseconds(us));
  }));
}

// Fails the task with the given ticket (counting every rank's tasks: the engine is shared).
class FailingEngine : public LocalEngine {
 public:
  explicit FailingEngine(uint64_t bad) : bad_(bad) {}
  std::string name() const override { return "failing"; }
  Result<uint64_t> Post(const LocalTask& task) override {
    Result<uint64_t> t = inner_.Post(task);
    if (t.ok() && *t == bad_) failed_task_ = task.Describe();
    return t;
  }
  bool Test(uint64_t first, uint64_t last, Status* st) override {
    if (!inner_.Test(first, last, st)) return false;
    if (st != nullptr && first <= bad_ && bad_ <= last) *st = InternalError("injected failure of " + failed_task_);
    return true;
  }

 private:
  CpuEngine inner_;
  const uint64_t bad_;
  std::string failed_task_;
};

TEST(LocalEngines, AFailedLocalTaskFailsTheCallOnEveryRankPromptly) {
  CommOptions o;
  o.timeout_s = 60;
  o.local_engine = std::make_shared<FailingEngine>(5);
  std::atomic<int> injected{0};
  RunThreadRanks(3, [&](Communicator& c) {
    std::vector<float> in(1 << 12, 1.0f), out(1 << 12);
    const auto start = std::chrono::steady_clock::now();
    Status st;
    CollOptions ring;  // a schedule, whose local tasks go to the engine (not the shared slots)
    ring.algorithm = "ring";
    for (int i = 0; i < 10 && st.ok(); ++i)
      st = c.AllReduce(in.data(), out.data(), in.size(), DataType::kFloat32, RedOp::kSum, ring);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ASSERT_FALSE(st.ok()) << "rank " << c.rank();
    EXPECT_LT(secs, 20) << "rank " << c.rank() << " waited for its timeout instead of being told: " << st.ToString();
    if (st.message().find("injected failure of reduce") != std::string::npos) ++injected;
    EXPECT_NE(st.message().find("all_reduce"), std::string::npos) << st.ToString();
  }, o);
  EXPECT_GE(injected.load(), 1) << "the rank whose task failed names it";
}

TEST(LocalEngines, ATimedOutCallWaitsForItsLocalTasksBeforeReturning) {
  std::promise<void> release;
  std::shared_future<void> gate = release.get_future().share();
  std::atomic<bool> gate_closed{true}, task_ran_after_return{false};
  std::atomic<bool> returned{false};
  CommOptions o;
  o.timeout_s = 0.3;
  o.local_engine = std::make_shared<CpuEngine>(CpuEngine::Mode::kWorker, [&](const LocalTask&) {
    if (gate_closed) gate.wait();
    if (returned) task_ran_after_return = true;
  });
  std::thread opener([&] {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    gate_closed = false;
    release.set_value();
  });
  RunThreadRanks(2, [&](Communicator& c) {
    std::vector<int32_t> in(1024, 3), out(1024);
    CollOptions ring;  // a schedule, whose local tasks go to the engine (not the shared slots)
    ring.algorithm = "ring";
    Status st = c.AllReduce(in.data(), out.data(), in.size(), DataType::kInt32, RedOp::kSum, ring);
    if (c.rank() == 0) returned = true;
    EXPECT_FALSE(st.ok());
  }, o);
  opener.join();
  EXPECT_FALSE(task_ran_after_return.load());
}

}  // namespace
}  // namespace tutti::testing
