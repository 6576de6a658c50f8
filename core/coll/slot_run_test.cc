// A slot call on two channels over one area in memory, driven by hand: what happens to a round
// when the area is marked failed or the engine fails, depending on whether the round's data is
// already in the slots.
#include "core/coll/slot_run.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <memory>
#include <thread>
#include <vector>

#include "core/coll/slot_test_world.h"

namespace tutti {
namespace {

using testing::World;

const std::vector<int32_t> kIn0{1, 2, 3, 4}, kIn1{10, 20, 30, 40}, kSum{11, 22, 33, 44};

// Rank 1 finished the call and left; rank 0 found it gone (and marked the area) before it read
// the round. Everything rank 0 needs is in the slots: the call completes.
TEST(SlotRun, ARoundWhoseDataArrivedCompletesAfterThisRankMarkedTheArea) {
  World w;
  std::vector<int32_t> out0(4, -1), out1(4, -1);
  auto r0 = w.AllReduce(0, kIn0, out0);
  auto r1 = w.AllReduce(1, kIn1, out1);
  EXPECT_FALSE(r0->Advance());  // written; rank 1's round not there yet
  ASSERT_TRUE(r1->Advance());
  ASSERT_TRUE(r1->status().ok()) << r1->status().ToString();
  w.ch[0]->MarkFailed("rank 0: rank 1 (pid 1) has died");
  ASSERT_TRUE(r0->Advance());
  ASSERT_TRUE(r0->status().ok()) << r0->status().ToString();
  EXPECT_EQ(out0, kSum);
  EXPECT_EQ(out1, kSum);
}

// The same when a peer marked it: one that finished the round, and one that published it but
// has not finished it (it found a third rank dead while off its core; it completes the round
// itself when it comes back).
TEST(SlotRun, ARoundWhoseDataArrivedCompletesAfterAPeerMarkedTheArea) {
  for (bool peer_finished : {true, false}) {
    World w;
    std::vector<int32_t> out0(4, -1), out1(4, -1);
    auto r0 = w.AllReduce(0, kIn0, out0);
    auto r1 = w.AllReduce(1, kIn1, out1);
    if (peer_finished) {
      EXPECT_FALSE(r0->Advance());
      ASSERT_TRUE(r1->Advance());
    } else {
      EXPECT_FALSE(r1->Advance());
    }
    w.ch[1]->MarkFailed("rank 1: rank 2 (pid 2) has died");
    ASSERT_TRUE(r0->Advance());
    ASSERT_TRUE(r0->status().ok()) << peer_finished << ": " << r0->status().ToString();
    EXPECT_EQ(out0, kSum);
    ASSERT_TRUE(r1->Advance());
    ASSERT_TRUE(r1->status().ok()) << peer_finished << ": " << r1->status().ToString();
    EXPECT_EQ(out1, kSum);
  }
}

// A peer that published the round and then failed the call (gave up on it): this rank fails it
// too even though the data is there, naming the peer and why it failed.
TEST(SlotRun, ARoundAPeerGaveUpOnFailsOnEveryRank) {
  World w;
  std::vector<int32_t> out0(4, -1), out1(4, -1);
  auto r0 = w.AllReduce(0, kIn0, out0);
  auto r1 = w.AllReduce(1, kIn1, out1);
  EXPECT_FALSE(r1->Advance());
  r1->Fail(InvalidUsage("rank 1: two threads issued collectives"));
  w.ch[1]->MarkFailed("rank 1: two threads issued collectives");
  ASSERT_TRUE(r0->Advance());
  const Status st = r0->status();
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("rank 1's communicator failed"), std::string::npos) << st.ToString();
  EXPECT_NE(st.message().find("two threads"), std::string::npos) << st.ToString();
  EXPECT_EQ(out0, std::vector<int32_t>(4, -1));
}

// A header that may never come: a peer's mark fails the round at once, naming the peer and its
// reason; this rank's own mark fails it with the reason it left (the engine's error, which names
// the cause: a dead peer). And with no mark yet, a waiter whose engine failed fails the run with
// the engine's error.
TEST(SlotRun, AMissingHeaderFailsWithTheMarkersReasonOrWaitsForTheEngines) {
  {
    World w;
    std::vector<int32_t> out0(4, -1);
    auto r0 = w.AllReduce(0, kIn0, out0);
    EXPECT_FALSE(r0->Advance());
    w.ch[1]->MarkFailed("rank 1: out of patience");
    ASSERT_TRUE(r0->Advance());
    const Status st = r0->status();
    EXPECT_FALSE(st.ok());
    EXPECT_NE(st.message().find("rank 1's communicator failed"), std::string::npos) << st.ToString();
    EXPECT_NE(st.message().find("out of patience"), std::string::npos) << st.ToString();
    EXPECT_NE(st.message().find("all_reduce #1"), std::string::npos) << st.ToString();
  }
  {
    World w;
    std::vector<int32_t> out0(4, -1);
    auto r0 = w.AllReduce(0, kIn0, out0);
    EXPECT_FALSE(r0->Advance());
    w.ch[0]->MarkFailed("rank 0: rank 1 (pid 1) has died");
    ASSERT_TRUE(r0->Advance());  // (also when the progress thread advances it: nobody waits)
    const Status st = r0->status();
    EXPECT_EQ(st.code(), Code::kAborted) << st.ToString();
    EXPECT_NE(st.message().find("this rank's communicator failed: rank 0: rank 1 (pid 1) has died"), std::string::npos)
        << st.ToString();
  }
  {
    World w;
    std::vector<int32_t> out0(4, -1);
    auto r0 = w.AllReduce(0, kIn0, out0);
    EXPECT_FALSE(r0->Advance());

    EngineOptions eo;
    eo.size = 2;
    auto engine = std::make_shared<P2PEngine>(eo);
    engine->Fail(RemoteError("rank 1 (pid 1) has died"));
    SlotWaitEnv env;
    env.engine = engine.get();
    auto registry = std::make_shared<CollRegistry>();
    env.registry = registry.get();
    const Status st = WaitSlotRun(*r0, env, 5);
    EXPECT_FALSE(st.ok());
    EXPECT_NE(st.message().find("rank 1 (pid 1) has died"), std::string::npos) << st.ToString();
  }
}

// A broadcast's root waits for nobody's header, so headers cannot tell it that the others have
// left: it fails once a rank that had not finished the round marked the area, or it did.
TEST(SlotRun, ARootThatWaitsForNobodyFailsOnceARankLeftBeforeTheRound) {
  auto broadcast = [](World& w, int r, const std::vector<int32_t>& in, std::vector<int32_t>& out) {
    return w.Call(r, algo::Collective::kBroadcast, in, out);
  };
  {
    World w;  // rank 1 left (its communicator destroyed) before this call
    std::vector<int32_t> out0(4, -1);
    w.ch[1]->MarkFailed("rank 1: communicator destroyed");
    auto r0 = broadcast(w, 0, kIn0, out0);
    ASSERT_TRUE(r0->Advance());
    EXPECT_NE(r0->status().message().find("rank 1's communicator failed"), std::string::npos)
        << r0->status().ToString();
  }
  {
    World w;  // this rank's own communicator failed
    std::vector<int32_t> out0(4, -1);
    w.ch[0]->MarkFailed("rank 0: rank 1 (pid 1) has died");
    auto r0 = broadcast(w, 0, kIn0, out0);
    ASSERT_TRUE(r0->Advance());
    EXPECT_NE(r0->status().message().find("rank 1 (pid 1) has died"), std::string::npos) << r0->status().ToString();
  }
}

// An asynchronous call tested after the engine failed: it completes if its data is in the slots
// (Test used to fail it before looking), and fails with the engine's error if not.
TEST(SlotRun, AWorkTestedAfterTheEngineFailedCompletesIfItsDataArrived) {
  World w;
  std::vector<int32_t> out0(4, -1), out1(4, -1);
  auto r0 = w.AllReduce(0, kIn0, out0);
  auto r1 = w.AllReduce(1, kIn1, out1);
  EXPECT_FALSE(r0->Advance());
  ASSERT_TRUE(r1->Advance());

  EngineOptions eo;
  eo.size = 2;
  auto engine = std::make_shared<P2PEngine>(eo);
  auto registry = std::make_shared<CollRegistry>();
  engine->Fail(RemoteError("rank 1 (pid 1) has died"));
  SlotWork work(r0, engine, registry, SlotWaitEnv{});
  ASSERT_TRUE(work.Test());
  ASSERT_TRUE(work.status().ok()) << work.status().ToString();
  EXPECT_EQ(out0, kSum);

  World w2;
  auto lone = w2.AllReduce(0, kIn0, out0);
  SlotWork waiting(lone, engine, registry, SlotWaitEnv{});
  ASSERT_TRUE(waiting.Test());
  EXPECT_NE(waiting.status().message().find("rank 1 (pid 1) has died"), std::string::npos)
      << waiting.status().ToString();
}

// The area's control lines are the board of the ranks' CPUs (core/p2p/cpu_board_test.cc tests
// what a waiter makes of it): a note by one rank's channel is what the other's sees, and a
// waiter for a rank on its own CPU does not spin.
TEST(SlotRun, TheAreaIsTheBoardOfTheCpusTheRanksWaitOn) {
  std::thread([] {
    World w;
    std::vector<int32_t> out(4);
    auto r0 = w.AllReduce(0, kIn0, out);
    EXPECT_EQ(w.ch[1]->RankOnCpu(0, 2, 3), -1);
    w.ch[0]->NoteCpu(3);
    EXPECT_EQ(w.ch[1]->RankOnCpu(0, 2, 3), 0);
    EXPECT_EQ(w.ch[0]->RankOnCpu(0, 2, 3), -1);  // not itself
    EXPECT_EQ(r0->Awaited(), std::make_pair(0, 2));
    const int cpu = sched_getcpu();
    ASSERT_GE(cpu, 0);
    cpu_set_t one;  // kept on this CPU (the thread is gone after the test)
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
    SlotWaitEnv env;
    env.spin_us = 50;
    EXPECT_EQ(SlotSpinUs(*r0, env), 50);
    EXPECT_EQ(w.ch[1]->RankOnCpu(0, 2, cpu), 0);
    w.ch[1]->NoteCpu(cpu);
    EXPECT_EQ(SlotSpinUs(*r0, env), 0);  // rank 1 runs here: rank 0 (the lower) yields to it
  }).join();
}

}  // namespace
}  // namespace tutti
