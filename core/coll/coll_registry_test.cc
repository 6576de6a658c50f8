// The registry of collectives in flight: each run in flight is advanced once per pass, the run a
// Work waits for among them (one poll of the connections per run and pass, not two).
#include "core/coll/coll_registry.h"

#include <gtest/gtest.h>

#include <memory>

namespace tutti {
namespace {

// Finishes at its `need`-th Advance; counts them.
class CountingRun : public CollRun {
 public:
  explicit CountingRun(int need) : need_(need) {}
  bool Advance() override {
    if (done_) return true;
    done_ = ++advances_ >= need_;
    return done_;
  }
  bool done() const override { return done_; }
  uint64_t steps_done() const override { return static_cast<uint64_t>(advances_); }
  Status status() const override { return OkStatus(); }
  void Fail(const Status&) override { done_ = true; }
  std::string Progress() const override { return "counting"; }
  std::string what() const override { return "counting run"; }
  int advances() const { return advances_; }

 private:
  int need_;
  int advances_ = 0;
  bool done_ = false;
};

std::shared_ptr<CountingRun> Issue(CollRegistry& reg, int need) {
  auto run = std::make_shared<CountingRun>(need);
  EXPECT_TRUE(reg.BeginIssue(0, CollLabel::Of("counting run")).ok());
  reg.EndIssue(run);
  return run;
}

TEST(CollRegistry, EachRunInFlightIsAdvancedOncePerPass) {
  CollRegistry reg;
  auto a = Issue(reg, 100), b = Issue(reg, 100);
  EXPECT_TRUE(reg.AdvanceAll());
  EXPECT_EQ(a->advances(), 1);
  EXPECT_EQ(b->advances(), 1);
  // The run named as `also` is among them: once, not twice.
  EXPECT_TRUE(reg.AdvanceAll(a.get()));
  EXPECT_EQ(a->advances(), 2);
  EXPECT_EQ(b->advances(), 2);
  // One that is not in flight in the registry (it finished before it was registered, say) is
  // advanced too.
  CountingRun loose(100);
  EXPECT_TRUE(reg.AdvanceAll(&loose));
  EXPECT_EQ(loose.advances(), 1);
  EXPECT_EQ(a->advances(), 3);
  EXPECT_EQ(reg.InFlight(), 2u);
}

TEST(CollRegistry, FinishedRunsLeaveTheRegistry) {
  CollRegistry reg;
  auto a = Issue(reg, 2);
  EXPECT_EQ(reg.InFlight(), 1u);
  reg.AdvanceAll();
  reg.AdvanceAll();
  EXPECT_TRUE(a->done());
  EXPECT_EQ(reg.InFlight(), 0u);
  EXPECT_FALSE(reg.AdvanceAll());  // nothing in flight: nothing moved
  EXPECT_EQ(a->advances(), 2);
}

TEST(CollWork, TestAdvancesItsRunOncePerCall) {
  EngineOptions o;
  o.rank = 0;
  o.size = 1;
  auto engine = std::make_shared<P2PEngine>(o);
  auto reg = std::make_shared<CollRegistry>();
  auto run = Issue(*reg, 3);
  CollWork w(run, engine, reg, 0, 5, 0, 0);
  EXPECT_FALSE(w.Test());
  EXPECT_EQ(run->advances(), 1);
  EXPECT_FALSE(w.Test());
  EXPECT_EQ(run->advances(), 2);
  EXPECT_TRUE(w.Test());
  EXPECT_EQ(run->advances(), 3);
  EXPECT_TRUE(w.Wait(1).ok());
  EXPECT_EQ(run->advances(), 3);
}

}  // namespace
}  // namespace tutti
