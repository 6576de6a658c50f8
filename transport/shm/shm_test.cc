#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <thread>
#include <vector>

#include "transport/shm/doorbell.h"
#include "transport/shm/shm_connection.h"
#include "transport/shm/shm_ring.h"
#include "transport/test_sink.h"

namespace tutti {
namespace {

std::string Pattern(size_t n, int seed) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 131 + seed) & 0xff);
  return s;
}

// A ring of `cap` data bytes, formatted, in 64-byte aligned memory of its own.
struct RingMemory {
  explicit RingMemory(size_t cap) : mem(ShmRing::BytesFor(cap) + 64) {
    base = reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(mem.data()) + 63) & ~uintptr_t{63});
    ShmRing::Format(base, cap);
  }
  std::vector<char> mem;
  void* base;
};

TEST(ShmRing, FramesSurviveWrapAround) {
  const size_t cap = 4096;
  RingMemory m(cap);
  void* base = m.base;
  ShmRing w, r;
  ASSERT_TRUE(w.Attach(base, cap).ok());
  ASSERT_TRUE(r.Attach(base, cap).ok());
  for (int i = 0; i < 200; ++i) {
    size_t len = (i * 37) % 900;
    std::string p = Pattern(len, i);
    ASSERT_TRUE(w.TryWrite(MakeHeader(TestFrame::kData, i, len, len), p.data()));
    FrameHeader h;
    auto have = r.Peek(&h, 1 << 20);
    ASSERT_TRUE(have.ok() && *have);
    EXPECT_EQ(h.id, static_cast<uint64_t>(i));
    std::string got(h.payload_len, '\0');
    r.Consume(h, got.data());
    EXPECT_EQ(got, p);
  }
}

TEST(ShmRing, FullRingRefusesAndCorruptionIsDetected) {
  const size_t cap = 1024;
  RingMemory m(cap);
  void* base = m.base;
  ShmRing w, r;
  ASSERT_TRUE(w.Attach(base, cap).ok());
  ASSERT_TRUE(r.Attach(base, cap).ok());
  std::string p(400, 'x');
  EXPECT_TRUE(w.TryWrite(MakeHeader(TestFrame::kData, 1, 400, 400), p.data()));
  EXPECT_TRUE(w.TryWrite(MakeHeader(TestFrame::kData, 2, 400, 400), p.data()));
  EXPECT_FALSE(w.TryWrite(MakeHeader(TestFrame::kData, 3, 400, 400), p.data()));
  // A hostile peer publishes a frame whose header claims more payload than a frame may hold:
  // the reader refuses instead of copying.
  FrameHeader h;
  ASSERT_TRUE(r.Peek(&h, 1 << 20).ok());
  char* first = static_cast<char*>(base) + sizeof(ShmRingHeader) + kShmStampBytes;
  const uint64_t huge = 1 << 20;
  std::memcpy(first + offsetof(FrameHeader, payload_len), &huge, sizeof(huge));
  EXPECT_EQ(r.Peek(&h, 1 << 20).status().code(), Code::kProtocol);
  // Wrong capacity in the header is refused on attach.
  ShmRing other;
  EXPECT_FALSE(other.Attach(base, 2048).ok());
}

TEST(ShmRing, AFrameIsItsStampHeaderAndPayloadPaddedTo8Bytes) {
  EXPECT_EQ(ShmFrameBytes(0), 48u);
  EXPECT_EQ(ShmFrameBytes(8), 56u);
  EXPECT_EQ(ShmFrameBytes(9), 64u);
}

TEST(ShmRing, FramesOfAnEarlierRingInTheSameMemoryAreNotSeen) {
  const size_t cap = 1024;
  RingMemory m(cap);
  void* base = m.base;
  ShmRing w;
  ASSERT_TRUE(w.Attach(base, cap).ok());
  std::string p(100, 'y');
  ASSERT_TRUE(w.TryWrite(MakeHeader(TestFrame::kData, 1, 100, 100), p.data()));
  ASSERT_TRUE(w.TryWrite(MakeHeader(TestFrame::kData, 2, 100, 100), p.data()));
  // A new ring in the same memory (its frames' stamps still there): nothing to read.
  ShmRing::Format(base, cap);
  ShmRing r;
  ASSERT_TRUE(r.Attach(base, cap).ok());
  FrameHeader h;
  auto have = r.Peek(&h, 1 << 20);
  ASSERT_TRUE(have.ok());
  EXPECT_FALSE(*have);
}

TEST(ShmRing, AConcurrentReaderSeesEveryFrameWholeAndInOrder) {
  const size_t cap = 4096;
  RingMemory m(cap);
  void* base = m.base;
  ShmRing w, r;
  ASSERT_TRUE(w.Attach(base, cap).ok());
  ASSERT_TRUE(r.Attach(base, cap).ok());
  constexpr int kFrames = 20000;
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    for (int i = 0; i < kFrames && !stop.load(); ++i) {
      const size_t len = (i * 53) % 700;
      std::string p = Pattern(len, i);
      while (!w.TryWrite(MakeHeader(TestFrame::kData, i, len, len), p.data()) && !stop.load())
        std::this_thread::yield();
    }
  });
  int bad = 0;
  for (int i = 0; i < kFrames;) {
    FrameHeader h;
    auto have = r.Peek(&h, 1 << 20);
    if (!have.ok()) {
      ADD_FAILURE() << have.status().ToString();
      break;
    }
    if (!*have) {
      std::this_thread::yield();
      continue;
    }
    std::string got(h.payload_len, '\0');
    r.Consume(h, got.data());
    const size_t len = (i * 53) % 700;
    if (h.id != static_cast<uint64_t>(i) || got != Pattern(len, i)) ++bad;
    ++i;
  }
  stop.store(true);
  writer.join();
  EXPECT_EQ(bad, 0);
}

TEST(ShmConnection, PairExchangesFramesAndReadsRemoteMemory) {
  ShmOptions opts;
  opts.fifo_bytes = 64 << 10;
  opts.use_cma = true;
  auto seg = ShmSegment::Create(ShmConnection::SegmentBytes(opts));
  ASSERT_TRUE(seg.ok()) << seg.status().ToString();
  auto seg2 = ShmSegment::Open((*seg)->name(), ShmConnection::SegmentBytes(opts));
  ASSERT_TRUE(seg2.ok()) << seg2.status().ToString();
  auto a = ShmConnection::Make(1, getpid(), std::move(*seg), true, true, opts);
  auto b = ShmConnection::Make(0, getpid(), std::move(*seg2), false, false, opts);
  ASSERT_TRUE(a.ok() && b.ok());
  RecordingSink sa, sb;
  // More than the FIFO holds: the sender queues and the progress loop drains.
  std::vector<std::string> payloads;
  for (int i = 0; i < 50; ++i) payloads.push_back(Pattern(5000 + i, i));
  for (int i = 0; i < 50; ++i)
    ASSERT_TRUE((*a)->Enqueue(MakeHeader(TestFrame::kBulk, 7, i, payloads[i].size()), payloads[i].data(), i + 1).ok());
  for (int iter = 0; iter < 1000 && sb.frames.size() < 50; ++iter) {
    ASSERT_TRUE((*a)->Progress(sa).ok());
    ASSERT_TRUE((*b)->Progress(sb).ok());
  }
  ASSERT_EQ(sb.frames.size(), 50u);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(sb.frames[i].payload, payloads[i]);
  EXPECT_EQ(sa.sent.size(), 50u);
  // One-sided access (CMA) is checked by //transport/conformance on the "shm_cma" pair.
}

// A CMA pair in this process (both ends' copies are real process_vm_readv/writev calls).
struct CmaPair {
  std::unique_ptr<ShmConnection> a, b;
};
CmaPair MakeCmaPair() {
  ShmOptions opts;
  opts.fifo_bytes = 64 << 10;
  opts.use_cma = true;
  CmaPair p;
  auto seg = ShmSegment::Create(ShmConnection::SegmentBytes(opts));
  EXPECT_TRUE(seg.ok()) << seg.status().ToString();
  if (!seg.ok()) return p;
  auto seg2 = ShmSegment::Open((*seg)->name(), ShmConnection::SegmentBytes(opts));
  EXPECT_TRUE(seg2.ok()) << seg2.status().ToString();
  if (!seg2.ok()) return p;
  auto a = ShmConnection::Make(1, getpid(), std::move(*seg), true, true, opts);
  auto b = ShmConnection::Make(0, getpid(), std::move(*seg2), false, false, opts);
  EXPECT_TRUE(a.ok() && b.ok());
  if (a.ok() && b.ok()) {
    p.a = std::move(*a);
    p.b = std::move(*b);
  }
  return p;
}

// Progress of `c` until it reported the access posted with `cookie`.
Status AccessOutcome(ShmConnection& c, RecordingSink& sink, uint64_t cookie) {
  for (int i = 0; i < 100000; ++i) {
    for (const auto& [k, st] : sink.accesses)
      if (k == cookie) return st;
    c.RunAccesses();
    EXPECT_TRUE(c.Progress(sink).ok());
  }
  return InternalError("the access was never reported");
}

TEST(ShmConnection, ACopyFromBuffersTheirOwnerLetGoOfFails) {
  CmaPair p = MakeCmaPair();
  ASSERT_TRUE(p.a && p.b);
  std::string src = Pattern(1 << 16, 3), dst(1 << 16, '\0');
  auto region = p.b->Expose(src.data(), src.size());
  ASSERT_NE(region, nullptr);
  RecordingSink sa;
  ASSERT_TRUE(p.a->PostRead(region->descriptor(), 0, dst.data(), dst.size(), 1).ok());
  ASSERT_TRUE(AccessOutcome(*p.a, sa, 1).ok());
  EXPECT_EQ(dst, src);
  // b's communicator fails: its buffers may be reused from now on, and a's copies must say so.
  p.b->ReleaseBuffers();
  ASSERT_TRUE(p.a->PostRead(region->descriptor(), 0, dst.data(), dst.size(), 2).ok());
  // (kUnavailable: the protocol asks for the data by message instead, and the peer's CLOSE says
  // why it let go.)
  Status st = AccessOutcome(*p.a, sa, 2);
  EXPECT_EQ(st.code(), Code::kUnavailable) << st.ToString();
  EXPECT_NE(st.message().find("rank 1 let go of the buffer"), std::string::npos) << st.ToString();
  ASSERT_TRUE(p.a->PostWrite(dst.data(), region->descriptor(), 0, dst.size(), 3).ok());
  EXPECT_EQ(AccessOutcome(*p.a, sa, 3).code(), Code::kUnavailable);
}

TEST(ShmConnection, LettingGoWaitsForThePeersRunningCopy) {
  // a reads 256 MiB of b's memory on a thread of its own; b lets go of its buffers while the
  // copy runs and then overwrites the source, as an owner whose call failed may. What a read
  // must be whole: the copy finished before b's ReleaseBuffers returned. (b must see the copy
  // running first; on a machine too busy for that, within a few tries, the test is skipped.)
  const size_t n = size_t{256} << 20;
  std::vector<char> src(n), dst(n);
  for (int attempt = 0; attempt < 3; ++attempt) {
    CmaPair p = MakeCmaPair();
    ASSERT_TRUE(p.a && p.b);
    std::fill(src.begin(), src.end(), 'x');
    std::fill(dst.begin(), dst.end(), '\0');
    auto region = p.b->Expose(src.data(), n);
    ASSERT_NE(region, nullptr);
    ASSERT_TRUE(p.a->PostRead(region->descriptor(), 0, dst.data(), n, 1).ok());
    std::atomic<bool> finished{false};
    std::thread copier([&] {
      p.a->RunAccesses();
      finished = true;
    });
    bool seen = false;
    while (!finished && !(seen = p.b->PeerCopiesRunning() > 0)) std::this_thread::yield();
    if (seen) {
      p.b->ReleaseBuffers();
      std::memset(src.data(), 'y', n);
    }
    copier.join();
    if (!seen) continue;
    RecordingSink sa;
    Status st = AccessOutcome(*p.a, sa, 1);
    ASSERT_TRUE(st.ok()) << st.ToString();  // it had started, so it completed
    EXPECT_EQ(std::count(dst.begin(), dst.end(), 'x'), static_cast<std::ptrdiff_t>(n))
        << "the copy took bytes the owner wrote after letting go";
    return;
  }
  GTEST_SKIP() << "the copy was never seen running (a busy machine): nothing was checked";
}

TEST(ShmConnection, DeadPeerIsDetected) {
  pid_t child = fork();
  if (child == 0) _exit(0);
  waitpid(child, nullptr, 0);
  ShmOptions opts;
  opts.fifo_bytes = 4096;
  auto seg = ShmSegment::Create(ShmConnection::SegmentBytes(opts));
  ASSERT_TRUE(seg.ok());
  auto c = ShmConnection::Make(5, child, std::move(*seg), true, true, opts);
  ASSERT_TRUE(c.ok());
  Status st = (*c)->CheckPeerAlive();
  EXPECT_EQ(st.code(), Code::kRemoteError);
  EXPECT_NE(st.message().find("rank 5"), std::string::npos);
}

TEST(ShmSegment, RejectsMalformedNames) {
  EXPECT_EQ(ShmSegment::Open("../etc/passwd", 4096).status().code(), Code::kProtocol);
  EXPECT_EQ(ShmSegment::Open("/a/b", 4096).status().code(), Code::kProtocol);
  EXPECT_FALSE(ShmSegment::Open("/tutti-does-not-exist", 4096).ok());
}

}  // namespace
}  // namespace tutti

namespace tutti {
namespace {

TEST(Doorbell, RingWakesASleeperAndTimeoutsExpire) {
  auto own = Doorbell::Create();
  ASSERT_TRUE(own.ok()) << own.status().ToString();
  auto peer_view = Doorbell::Open((*own)->name());
  ASSERT_TRUE(peer_view.ok()) << peer_view.status().ToString();
  // Nobody rings: the wait ends at its timeout.
  auto t0 = std::chrono::steady_clock::now();
  uint32_t seen = (*own)->Prepare();
  (*own)->Wait(seen, 20000);
  (*own)->Done();
  double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_GE(waited, 0.015);
  // A ring from the other mapping wakes the sleeper long before its 10 s timeout.
  seen = (*own)->Prepare();
  std::thread ringer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    (*peer_view)->Ring();
  });
  t0 = std::chrono::steady_clock::now();
  (*own)->Wait(seen, 10000000);
  (*own)->Done();
  waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ringer.join();
  EXPECT_LT(waited, 5.0);
  // A ring between Prepare and Wait is not lost: Wait returns at once.
  seen = (*own)->Prepare();
  (*peer_view)->Ring();
  t0 = std::chrono::steady_clock::now();
  (*own)->Wait(seen, 10000000);
  (*own)->Done();
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 1.0);
}

}  // namespace
}  // namespace tutti
