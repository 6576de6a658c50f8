#include "algorithms/lowering.h"

#include <gtest/gtest.h>

#include "algorithms/registry.h"

namespace tutti::algo {
namespace {

Region R(Buf b, uint64_t off, uint64_t n) { return Region{b, off, n}; }

// One stream: receive `n` elements from peer 1 into scratch, then reduce them into the output.
Schedule ReceiveThenReduce(uint64_t n) {
  Schedule s;
  s.scratch_count = n;
  s.streams.resize(1);
  Step recv;
  recv.recvs.push_back(Transfer{1, R(Buf::kScratch, 0, n)});
  Step red;
  red.locals.push_back(LocalOp{LocalOp::Kind::kReduce, R(Buf::kOutput, 0, n), {R(Buf::kOutput, 0, n), R(Buf::kScratch, 0, n)}});
  s.streams[0].steps = {recv, red};
  return s;
}

int CountOps(const PrimProgram& p) { return static_cast<int>(p.ops.size()); }

TEST(Lowering, RingAllReduceFusesReceivesAndSendsEarly) {
  CollArgs a;
  a.coll = Collective::kAllReduce;
  a.nranks = 4;
  a.rank = 1;
  a.count = 64;
  Result<Schedule> s = BuildSchedule("ring", a);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  Result<PrimProgram> fused = LowerSchedule(*s);
  ASSERT_TRUE(fused.ok()) << fused.status().ToString();
  Result<PrimProgram> plain = LowerSchedule(*s, LowerOptions{false, false});
  ASSERT_TRUE(plain.ok());
  EXPECT_GT(fused->fused_locals, 0u) << DescribeProgram(*fused);
  EXPECT_GT(fused->early_sends, 0u) << DescribeProgram(*fused);
  EXPECT_EQ(plain->fused_locals, 0u);
  EXPECT_EQ(plain->early_sends, 0u);
  EXPECT_LT(fused->steps.size(), plain->steps.size());
  // Every reduction of the ring happens inside a receive: recv-reduce-copy.
  bool reduce_in_recv = false;
  for (const PrimOp& op : fused->ops) {
    EXPECT_FALSE(op.reduce && op.recv_peer < 0 && op.send_peer < 0) << DescribeProgram(*fused);
    if (op.reduce && op.recv_peer >= 0) reduce_in_recv = true;
  }
  EXPECT_TRUE(reduce_in_recv);
  EXPECT_NE(DescribeProgram(*fused).find(" after "), std::string::npos);
}

TEST(Lowering, UnfusedIsTheScheduleStepByStep) {
  const Schedule s = ReceiveThenReduce(4);
  Result<PrimProgram> p = LowerSchedule(s, LowerOptions{false, false});
  ASSERT_TRUE(p.ok());
  ASSERT_EQ(p->steps.size(), 2u);
  ASSERT_EQ(CountOps(*p), 2);
  EXPECT_EQ(p->ops[0].recv_peer, 1);
  EXPECT_EQ(p->ops[0].srcs[0].buf, kPrimRecv);
  EXPECT_EQ(p->ops[0].dsts[0].buf, static_cast<uint8_t>(Buf::kScratch));
  EXPECT_EQ(p->ops[1].reduce, 1);
  EXPECT_EQ(p->ops[1].recv_peer, -1);
  EXPECT_EQ(p->scratch_count, 4u);
}

TEST(Lowering, AFusedReceiveSkipsScratchThatNothingReadsLater) {
  Result<PrimProgram> p = LowerSchedule(ReceiveThenReduce(4));
  ASSERT_TRUE(p.ok());
  ASSERT_EQ(CountOps(*p), 1) << DescribeProgram(*p);
  const PrimOp& op = p->ops[0];
  EXPECT_EQ(op.recv_peer, 1);
  EXPECT_EQ(op.reduce, 1);
  ASSERT_EQ(op.nsrcs, 2);
  EXPECT_EQ(op.srcs[0].buf, static_cast<uint8_t>(Buf::kOutput));
  EXPECT_EQ(op.srcs[1].buf, kPrimRecv);  // the order of the sources is kept
  ASSERT_EQ(op.ndsts, 1);
  EXPECT_EQ(op.dsts[0].buf, static_cast<uint8_t>(Buf::kOutput));
  EXPECT_EQ(p->fused_locals, 1u);
}

TEST(Lowering, AFusedReceiveStillWritesWhatIsReadLater) {
  Schedule s = ReceiveThenReduce(4);
  Step send;
  send.sends.push_back(Transfer{2, R(Buf::kScratch, 0, 4)});
  s.streams[0].steps.push_back(send);
  Result<PrimProgram> p = LowerSchedule(s);
  ASSERT_TRUE(p.ok());
  const PrimOp& op = p->ops[0];
  ASSERT_EQ(op.ndsts, 2) << DescribeProgram(*p);
  EXPECT_EQ(op.dsts[1].buf, static_cast<uint8_t>(Buf::kScratch));
  // The send of the scratch the fused op writes goes early, after it.
  EXPECT_EQ(p->ops[1].after, 0);
  EXPECT_EQ(p->early_sends, 1u);
}

TEST(Lowering, NoFusionWhereTheStepsOtherOpsReadTheDestination) {
  Schedule s = ReceiveThenReduce(4);
  s.streams[0].steps[0].sends.push_back(Transfer{1, R(Buf::kOutput, 0, 4)});
  Result<PrimProgram> p = LowerSchedule(s);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->fused_locals, 0u) << DescribeProgram(*p);
  EXPECT_EQ(p->steps.size(), 2u);
}

TEST(Lowering, NoEarlySendOfPartlyWrittenData) {
  Schedule s;
  s.scratch_count = 8;
  s.streams.resize(1);
  Step recv;
  recv.recvs.push_back(Transfer{1, R(Buf::kScratch, 0, 4)});
  recv.recvs.push_back(Transfer{2, R(Buf::kScratch, 4, 4)});
  Step send;
  send.sends.push_back(Transfer{3, R(Buf::kScratch, 0, 8)});  // written by both receives
  s.streams[0].steps = {recv, send};
  Result<PrimProgram> p = LowerSchedule(s);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->early_sends, 0u) << DescribeProgram(*p);
}

TEST(Lowering, TooManyTransfersInAStepIsAnError) {
  Schedule s;
  s.streams.resize(1);
  Step step;
  for (int i = 0; i < kPrimMaxOpsPerStep + 1; ++i) step.sends.push_back(Transfer{1, R(Buf::kInput, 0, 1)});
  s.streams[0].steps.push_back(step);
  Result<PrimProgram> p = LowerSchedule(s);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), Code::kInvalidArgument);
  EXPECT_NE(p.status().message().find("stream 0 step 0 has 33 transfers"), std::string::npos) << p.status().message();
}

TEST(Lowering, TooManySourcesIsAnError) {
  Schedule s;
  s.streams.resize(1);
  Step step;
  LocalOp l{LocalOp::Kind::kReduce, R(Buf::kOutput, 0, 1), {}};
  for (int i = 0; i < kPrimMaxSrcs + 1; ++i) l.srcs.push_back(R(Buf::kInput, 0, 1));
  step.locals.push_back(l);
  s.streams[0].steps.push_back(step);
  Result<PrimProgram> p = LowerSchedule(s);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("9 sources"), std::string::npos) << p.status().message();
}

}  // namespace
}  // namespace tutti::algo
