// Direct slot calls (SlotCall::direct): readers copy blocks straight from the writers' buffers,
// whose calls complete only once their readers finished the round; a reader or writer that gives
// up fails the round on the other side too.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/coll/slot_run.h"
#include "core/coll/slot_test_world.h"

namespace tutti {
namespace {

using algo::Collective;
using testing::World;

// Both ranks' inputs: 2 blocks of 3 (the per-rank collectives take both, the others the first).
std::vector<int32_t> In(int r, Collective c) {
  std::vector<int32_t> in{10 * r + 1, 10 * r + 2, 10 * r + 3, 10 * r + 4, 10 * r + 5, 10 * r + 6};
  if (!slot_call::PerRankBlocks(c)) in.resize(3);
  return in;
}

TEST(SlotDirect, AllGatherAndAllToAllCompleteOnceBothRanksReadEachOther) {
  for (Collective c : {Collective::kAllGather, Collective::kAllToAll}) {
    World w;
    const std::vector<int32_t> in0 = In(0, c), in1 = In(1, c);
    std::vector<int32_t> out0(6, -1), out1(6, -1);
    auto r0 = w.Call(0, c, in0, out0, /*direct=*/true);
    auto r1 = w.Call(1, c, in1, out1, /*direct=*/true);
    EXPECT_FALSE(r0->Advance());  // published; rank 1's address not there yet
    EXPECT_FALSE(r1->Advance());  // read rank 0's block; rank 0 has not read rank 1's yet
    EXPECT_NE(r1->Progress().find("waiting for rank 0"), std::string::npos) << r1->Progress();
    ASSERT_TRUE(r0->Advance());
    ASSERT_TRUE(r1->Advance());
    ASSERT_TRUE(r0->status().ok()) << r0->status().ToString();
    ASSERT_TRUE(r1->status().ok()) << r1->status().ToString();
    if (c == Collective::kAllGather) {
      EXPECT_EQ(out0, (std::vector<int32_t>{1, 2, 3, 11, 12, 13}));
      EXPECT_EQ(out1, out0);
    } else {
      EXPECT_EQ(out0, (std::vector<int32_t>{1, 2, 3, 11, 12, 13}));
      EXPECT_EQ(out1, (std::vector<int32_t>{4, 5, 6, 14, 15, 16}));
    }
  }
}

// A rooted call is one-directional no more: scatter's and broadcast's root and gather's non-root
// wait for their reader, and their Progress says so.
TEST(SlotDirect, AWriterWaitsForItsReader) {
  for (Collective c : {Collective::kScatter, Collective::kGather, Collective::kBroadcast}) {
    World w;
    const std::vector<int32_t> in0 = In(0, c), in1 = In(1, c);
    std::vector<int32_t> out0(6, -1), out1(6, -1);
    const int writer = c == Collective::kGather ? 1 : 0;
    auto r0 = w.Call(0, c, in0, out0, /*direct=*/true);
    auto r1 = w.Call(1, c, in1, out1, /*direct=*/true);
    auto& wr = writer == 0 ? r0 : r1;
    auto& rd = writer == 0 ? r1 : r0;
    EXPECT_FALSE(wr->Advance());
    EXPECT_NE(wr->Progress().find("waiting for rank " + std::to_string(1 - writer)), std::string::npos)
        << wr->Progress();
    EXPECT_NE(wr->Progress().find("reading this rank's buffer"), std::string::npos) << wr->Progress();
    ASSERT_TRUE(rd->Advance());
    ASSERT_TRUE(wr->Advance());
    ASSERT_TRUE(r0->status().ok()) << r0->status().ToString();
    ASSERT_TRUE(r1->status().ok()) << r1->status().ToString();
    if (c == Collective::kScatter) {
      EXPECT_EQ(out0, (std::vector<int32_t>{1, 2, 3, -1, -1, -1}));
      EXPECT_EQ(out1, (std::vector<int32_t>{4, 5, 6, -1, -1, -1}));
    } else if (c == Collective::kBroadcast) {
      EXPECT_EQ(out0, (std::vector<int32_t>{1, 2, 3, -1, -1, -1}));
      EXPECT_EQ(out1, out0);
    } else {
      EXPECT_EQ(out0, (std::vector<int32_t>{1, 2, 3, 11, 12, 13}));
      EXPECT_EQ(out1, std::vector<int32_t>(6, -1));
    }
  }
}

// A side that gives up on the round fails the other's: the writer, which would wait for its
// reader, and a reader, for which the writer's buffer may be gone (also one already reading). The
// error names the rank that gave up and why.
TEST(SlotDirect, WhenOneSideGivesUpTheOtherFailsTheRoundToo) {
  for (int quitter : {0, 1}) {  // scatter's root (the writer), rank 1 (its reader)
    World w;
    const std::vector<int32_t> in0 = In(0, Collective::kScatter);
    std::vector<int32_t> out0(3, -1), out1(3, -1);
    std::shared_ptr<SlotRun> runs[2] = {w.Call(0, Collective::kScatter, in0, out0, /*direct=*/true),
                                        w.Call(1, Collective::kScatter, in0, out1, /*direct=*/true)};
    EXPECT_FALSE(runs[0]->Advance());
    const std::string why = "rank " + std::to_string(quitter) + ": scatter timed out";
    runs[quitter]->Fail(TimeoutError(why));
    w.ch[quitter]->MarkFailed(why);
    SlotRun& other = *runs[1 - quitter];
    ASSERT_TRUE(other.Advance());
    const Status st = other.status();
    EXPECT_FALSE(st.ok());
    EXPECT_NE(st.message().find("rank " + std::to_string(quitter) + "'s communicator failed"), std::string::npos)
        << st.ToString();
    EXPECT_NE(st.message().find("timed out"), std::string::npos) << st.ToString();
  }
}

// A buffer that cannot be read (here an address nothing is mapped at): the reader fails with the
// system's error, naming the writer and the size.
TEST(SlotDirect, AnUnreadableBufferFailsTheReaderNamingTheWriter) {
  World w;
  std::vector<int32_t> out1(6, -1);
  SlotCall bad;
  bad.coll = Collective::kAllGather;
  bad.input = reinterpret_cast<const char*>(uintptr_t{64});
  bad.count = 3;
  bad.type = DataType::kInt32;
  bad.direct = true;
  SlotRun r0(w.ch[0], bad, SlotChunk(bad, 2, w.ch[0]->slot_bytes()), 1);
  EXPECT_FALSE(r0.Advance());  // publishes the address; (its own copy is never reached)
  const std::vector<int32_t> in1 = In(1, Collective::kAllGather);
  auto r1 = w.Call(1, Collective::kAllGather, in1, out1, /*direct=*/true);
  ASSERT_TRUE(r1->Advance());
  const Status st = r1->status();
  EXPECT_EQ(st.code(), Code::kSystemError) << st.ToString();
  EXPECT_NE(st.message().find("reading 12 bytes of rank 0's buffer"), std::string::npos) << st.ToString();
  EXPECT_NE(st.message().find("process_vm_readv"), std::string::npos) << st.ToString();
}

// Every rank's channel publishes a word for the others to read: in one process every read works;
// a rank whose channel is not made yet has published nothing.
TEST(SlotDirect, ProbingReadsTheWordEveryRankPublished) {
  World w;
  EXPECT_TRUE(w.ch[0]->ProbeReads().ok()) << w.ch[0]->ProbeReads().ToString();
  EXPECT_TRUE(w.ch[1]->ProbeReads().ok()) << w.ch[1]->ProbeReads().ToString();
  SlotChannel::Shape three{3, 8, 256, 2};
  std::vector<char> mem(SlotChannel::AreaBytes(three) + 64);
  char* area = mem.data() + (64 - reinterpret_cast<uintptr_t>(mem.data()) % 64) % 64;
  SlotChannel::Format(area, three);
  SlotChannel lone(area, three, 0);
  const Status st = lone.ProbeReads();
  EXPECT_EQ(st.code(), Code::kUnavailable) << st.ToString();
  EXPECT_NE(st.message().find("rank 1"), std::string::npos) << st.ToString();
}

}  // namespace
}  // namespace tutti
