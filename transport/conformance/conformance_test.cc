// What every transport must do, run on each of them (shm with and without CMA, tcp with one and
// with three sockets): frames of every size arrive intact, frames on the ordered path arrive in
// order, bulk pieces arrive whole in any order, cookies are reported once (before the frames that arrive after them), both directions flow
// under back-pressure, posted one-sided accesses work (each reported once, carried out beside
// progress, none after a release) or say kUnavailable, a malformed frame is a protocol error,
// released buffers are never read again, and a closed connection stays closed.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "transport/conformance/pairs.h"
#include "transport/test_sink.h"

namespace tutti::conformance {
namespace {

std::string Bytes(size_t n, int seed) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 131 + seed * 7 + 1) & 0xff);
  return s;
}

class Transport : public ::testing::TestWithParam<PairFactory> {
 protected:
  void SetUp() override {
    pair_ = GetParam().make();
    ASSERT_TRUE(pair_.a && pair_.b) << GetParam().name << ": could not connect a pair";
  }
  // Progresses both ends until done() or a bound; an error on either end fails the test.
  void Pump(const std::function<bool()>& done, int max_rounds = 2000000) {
    for (int i = 0; i < max_rounds && !done(); ++i) {
      auto ra = pair_.a->Progress(sink_a_);
      ASSERT_TRUE(ra.ok()) << "a: " << ra.status().ToString();
      auto rb = pair_.b->Progress(sink_b_);
      ASSERT_TRUE(rb.ok()) << "b: " << rb.status().ToString();
    }
    ASSERT_TRUE(done()) << "no progress";
  }
  Pair pair_;
  RecordingSink sink_a_, sink_b_;
};

TEST_P(Transport, FramesOfEverySizeArriveIntactAndOrdered) {
  Connection& a = *pair_.a;
  const size_t maxp = a.max_payload();
  ASSERT_GE(maxp, 4096u);
  std::vector<size_t> sizes = {0, 1, 7, 40, 4096, maxp - 1, maxp};
  std::mt19937 rng(3);
  for (int i = 0; i < 40; ++i) sizes.push_back(rng() % (maxp + 1));
  std::vector<std::string> payloads;
  for (size_t i = 0; i < sizes.size(); ++i) payloads.push_back(Bytes(sizes[i], static_cast<int>(i)));
  std::set<uint64_t> cookies;
  for (size_t i = 0; i < payloads.size(); ++i) {
    // Data frames and control frames share the ordered path; bulk pieces may take any.
    const uint8_t t = i % 5 == 4 ? TestFrame::kBulk : TestFrame::kData;
    const uint64_t cookie = i % 2 ? 1000 + i : 0;
    if (cookie != 0) cookies.insert(cookie);
    const uint64_t arg = t == TestFrame::kData ? payloads[i].size() : i;  // DATA: its size; BULK: an offset
    ASSERT_TRUE(a.Enqueue(MakeHeader(t, i, arg, payloads[i].size(), 5), payloads[i].data(), cookie).ok());
    if (i % 7 == 0) ASSERT_TRUE(a.Enqueue(MakeHeader(TestFrame::kAck, 50000 + i, 0, 0), nullptr, 0).ok());
  }
  const size_t expected = payloads.size() + (payloads.size() + 6) / 7;
  Pump([&] { return sink_b_.frames.size() >= expected && sink_a_.sent.size() >= cookies.size(); });
  ASSERT_EQ(sink_b_.frames.size(), expected);
  uint64_t last_ordered = 0;
  bool first = true;
  std::set<uint64_t> bulk_seen;
  for (const auto& f : sink_b_.frames) {
    if (f.h.type == TestFrame::kBulk) {
      bulk_seen.insert(f.h.id);
    } else {
      const uint64_t order = f.h.type == TestFrame::kAck ? (f.h.id - 50000) * 2 + 2 : f.h.id * 2 + 1;
      EXPECT_TRUE(first || order > last_ordered) << "ordered frame " << f.h.id << " out of order";
      first = false;
      last_ordered = order;
    }
    if (f.h.type != TestFrame::kAck) {
      EXPECT_EQ(f.h.tag, 5);
      EXPECT_EQ(f.payload, payloads[f.h.id]) << "frame " << f.h.id << " of " << f.payload.size() << " bytes";
    }
  }
  EXPECT_EQ(bulk_seen.size(), payloads.size() / 5);
  std::multiset<uint64_t> reported(sink_a_.sent.begin(), sink_a_.sent.end());
  EXPECT_EQ(reported.size(), cookies.size()) << "each cookie exactly once";
  for (uint64_t c : cookies) EXPECT_EQ(reported.count(c), 1u) << "cookie " << c;
  EXPECT_EQ(a.queued_bytes(), 0u);
}

TEST_P(Transport, BothDirectionsFlowUnderBackPressure) {
  const size_t piece = std::min<size_t>(pair_.a->max_payload(), 48 << 10);
  const int n = 300;  // far more than a small FIFO holds: Enqueue queues, Progress drains
  std::vector<std::string> ab, ba;
  for (int i = 0; i < n; ++i) {
    ab.push_back(Bytes(piece - i % 13, i));
    ba.push_back(Bytes(piece - i % 11, i + 7));
    ASSERT_TRUE(pair_.a->Enqueue(MakeHeader(TestFrame::kData, i, ab[i].size(), ab[i].size()), ab[i].data(), 0).ok());
    ASSERT_TRUE(pair_.b->Enqueue(MakeHeader(TestFrame::kData, i, ba[i].size(), ba[i].size()), ba[i].data(), 0).ok());
  }
  EXPECT_GT(pair_.a->queued_bytes(), 0u);
  Pump([&] { return sink_b_.frames.size() >= static_cast<size_t>(n) && sink_a_.frames.size() >= static_cast<size_t>(n); });
  for (int i = 0; i < n; ++i) {
    ASSERT_EQ(sink_b_.frames[i].h.id, static_cast<uint64_t>(i));
    ASSERT_EQ(sink_b_.frames[i].payload, ab[i]) << "a->b frame " << i;
    ASSERT_EQ(sink_a_.frames[i].payload, ba[i]) << "b->a frame " << i;
  }
  EXPECT_EQ(pair_.a->queued_bytes(), 0u);
  EXPECT_EQ(pair_.b->queued_bytes(), 0u);
}

TEST_P(Transport, PostedOneSidedAccessWorksOrIsUnavailable) {
  std::string remote = Bytes(1 << 16, 9);
  std::shared_ptr<const ExposedRegion> region = pair_.b->Expose(remote.data(), remote.size());
  std::string local(4096, '\0');
  if (region == nullptr) {
    EXPECT_EQ(pair_.a->PostRead("anything", 0, local.data(), local.size(), 1).code(), Code::kUnavailable);
    EXPECT_EQ(pair_.a->PostWrite(local.data(), "anything", 0, local.size(), 2).code(), Code::kUnavailable);
    EXPECT_FALSE(pair_.a->RunAccesses());
    return;
  }
  const std::string& desc = region->descriptor();
  ASSERT_FALSE(desc.empty());
  ASSERT_LE(desc.size(), kMaxDescriptorBytes);
  const std::string mine = Bytes(4096, 77);
  ASSERT_TRUE(pair_.a->PostRead(desc, 1000, local.data(), local.size(), 11).ok());
  ASSERT_TRUE(pair_.a->PostWrite(mine.data(), desc, 8000, mine.size(), 12).ok());  // apart from the read
  // Posted means posted: nothing is reported before the accesses are carried out.
  ASSERT_TRUE(pair_.a->Progress(sink_a_).ok());
  Pump([&] {
    pair_.a->RunAccesses();
    return sink_a_.accesses.size() == 2;
  });
  std::map<uint64_t, Status> done(sink_a_.accesses.begin(), sink_a_.accesses.end());
  ASSERT_EQ(done.size(), 2u);
  EXPECT_TRUE(done[11].ok()) << done[11].ToString();
  EXPECT_TRUE(done[12].ok()) << done[12].ToString();
  EXPECT_TRUE(local == remote.substr(1000, 4096));
  EXPECT_TRUE(remote.substr(8000, 4096) == mine);
  // Beyond the exposed region, or a descriptor that is not one: refused now, never a stray
  // access, and nothing is reported for it later.
  EXPECT_EQ(pair_.a->PostRead(desc, remote.size() - 100, local.data(), local.size(), 13).code(), Code::kProtocol);
  EXPECT_FALSE(pair_.a->PostRead(std::string(desc.size(), 'z'), 0, local.data(), 16, 14).ok());
  EXPECT_FALSE(pair_.a->RunAccesses());
  ASSERT_TRUE(pair_.a->Progress(sink_a_).ok());
  EXPECT_EQ(sink_a_.accesses.size(), 2u);
}

TEST_P(Transport, PostedAccessesRunBesideProgressAndEachIsReportedOnce) {
  std::string remote = Bytes(4 << 20, 5);
  std::shared_ptr<const ExposedRegion> region = pair_.b->Expose(remote.data(), remote.size());
  if (region == nullptr) GTEST_SKIP() << GetParam().name << " exposes no memory";
  // Reads of many sizes into separate buffers, carried out by two threads while the connection
  // keeps moving frames on a third: completions come in whatever order the copies end.
  std::mt19937 rng(11);
  const int n = 64;
  std::vector<std::string> dst(n);
  std::vector<size_t> offsets(n);
  for (int i = 0; i < n; ++i) {
    size_t len = 1 + rng() % (1 << 20);
    offsets[i] = rng() % (remote.size() - len);
    dst[i].assign(len, '\0');
    ASSERT_TRUE(pair_.a->PostRead(region->descriptor(), offsets[i], dst[i].data(), len, 100 + i).ok());
  }
  std::atomic<bool> stop{false};
  auto runner = [&] {
    while (!stop.load()) pair_.a->RunAccesses();
  };
  std::thread r1(runner), r2(runner);
  const std::string ping = Bytes(100, 1);
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(pair_.a->Enqueue(MakeHeader(TestFrame::kData, i, ping.size(), ping.size()), ping.data(), 0).ok());
  Pump([&] { return sink_a_.accesses.size() == static_cast<size_t>(n) && sink_b_.frames.size() == 20; });
  stop.store(true);
  r1.join();
  r2.join();
  std::set<uint64_t> seen;
  for (auto& [cookie, st] : sink_a_.accesses) {
    ASSERT_TRUE(seen.insert(cookie).second) << "access " << cookie << " reported twice";
    ASSERT_TRUE(cookie >= 100 && cookie < 100 + n) << cookie;
    EXPECT_TRUE(st.ok()) << st.ToString();
    const int i = static_cast<int>(cookie - 100);
    ASSERT_TRUE(dst[i] == remote.substr(offsets[i], dst[i].size())) << "read " << i;
  }
}

TEST_P(Transport, ReleasedBuffersAreNotAccessedByPostedCopies) {
  std::string remote = Bytes(1 << 20, 3);
  std::shared_ptr<const ExposedRegion> region = pair_.b->Expose(remote.data(), remote.size());
  if (region == nullptr) GTEST_SKIP() << GetParam().name << " exposes no memory";
  std::string local(1 << 20, 'x');
  const std::string theirs = remote;
  for (int i = 0; i < 8; ++i) {
    ASSERT_TRUE(pair_.a->PostRead(region->descriptor(), 0, local.data(), local.size(), 1 + i).ok());
    ASSERT_TRUE(pair_.a->PostWrite(local.data(), region->descriptor(), 0, local.size(), 100 + i).ok());
  }
  pair_.a->ReleaseBuffers();  // the owners may free both buffers now
  EXPECT_FALSE(pair_.a->RunAccesses());
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(pair_.a->Progress(sink_a_).ok());
  EXPECT_TRUE(local == std::string(1 << 20, 'x'));
  EXPECT_TRUE(remote == theirs);
  EXPECT_TRUE(sink_a_.accesses.empty());
}

TEST_P(Transport, AMalformedFrameIsAProtocolError) {
  ASSERT_TRUE(pair_.inject_garbage_to_a);
  pair_.inject_garbage_to_a();
  Status st;
  for (int i = 0; i < 1000000 && st.ok(); ++i) {
    auto r = pair_.a->Progress(sink_a_);
    if (!r.ok()) st = r.status();
  }
  EXPECT_EQ(st.code(), Code::kProtocol) << st.ToString();
  EXPECT_TRUE(sink_a_.frames.empty());
}

// After ReleaseBuffers the owners of queued payloads may reuse them at once: nothing is read
// from them again (a frame already partly on the wire may be finished with zeros), and frames
// queued afterwards still arrive, framed.
void ReleaseAndCheck(Connection& a, bool progress_first, RecordingSink& sink_a, RecordingSink& sink_b,
                     const std::function<void(const std::function<bool()>&)>& pump) {
  const size_t piece = std::min<size_t>(a.max_payload(), 64 << 10);
  const int n = 64;
  std::vector<std::string> bufs(n, std::string(piece, 'A'));
  for (int i = 0; i < n; ++i)
    ASSERT_TRUE(a.Enqueue(MakeHeader(TestFrame::kBulk, 1, i * piece, piece), bufs[i].data(), 0).ok());
  if (progress_first) ASSERT_TRUE(a.Progress(sink_a).ok());  // some on their way (a transport may
                                                             // also write in Enqueue)
  a.ReleaseBuffers();
  for (auto& b : bufs) std::fill(b.begin(), b.end(), 'P');
  const std::string after = "after release";
  ASSERT_TRUE(a.Enqueue(MakeHeader(TestFrame::kData, 2, after.size(), after.size()), after.data(), 0).ok());
  pump([&] {
    for (const auto& f : sink_b.frames)
      if (f.h.type == TestFrame::kData) return true;
    return false;
  });
  for (const auto& f : sink_b.frames) {
    if (f.h.type == TestFrame::kData) {
      EXPECT_EQ(f.payload, after);
      continue;
    }
    EXPECT_EQ(f.payload.find('P'), std::string::npos) << "a released buffer was read (piece at " << f.h.arg << ")";
  }
  EXPECT_LE(sink_b.frames.size(), static_cast<size_t>(n) + 1);
}

TEST_P(Transport, ReleasedBuffersAreNeverReadAgain) {
  ReleaseAndCheck(*pair_.a, false, sink_a_, sink_b_, [&](const std::function<bool()>& d) { Pump(d); });
}

TEST_P(Transport, ReleasedBuffersAreNeverReadAgainMidTransfer) {
  ReleaseAndCheck(*pair_.a, true, sink_a_, sink_b_, [&](const std::function<bool()>& d) { Pump(d); });
}

TEST_P(Transport, ACloseIsFinal) {
  pair_.a->Close();
  pair_.a->Close();
  const std::string x = "x";
  EXPECT_FALSE(pair_.a->Enqueue(MakeHeader(TestFrame::kData, 1, 1, 1), x.data(), 0).ok());
  auto r = pair_.a->Progress(sink_a_);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(*r);
}

// Records what a connection reports, in order.
class EventOrderSink : public RecordingSink {
 public:
  std::vector<std::string> events;
  Status OnFrame(int peer, const FrameHeader& h) override {
    events.push_back("type " + std::to_string(h.type));
    return RecordingSink::OnFrame(peer, h);
  }
  void OnSent(int peer, uint64_t cookie) override {
    events.push_back("sent " + std::to_string(cookie));
    RecordingSink::OnSent(peer, cookie);
  }
};

TEST_P(Transport, ASendIsReportedBeforeWhatArrivedAfterIt) {
  // The protocol completes a collective's eager send when it is reported sent; the peer may
  // take it, finish and close at once. Its CLOSE must not be heard before our send's report,
  // or the send fails although the peer has it.
  const std::string x(32, 'x');
  ASSERT_TRUE(pair_.a->Enqueue(MakeHeader(TestFrame::kPost, 1, 32, 32, -2), x.data(), 9).ok());
  Pump([&] { return sink_b_.frames.size() == 1; });  // (a reports the send here; reset below)
  EventOrderSink order;
  ASSERT_TRUE(pair_.a->Enqueue(MakeHeader(TestFrame::kPost, 2, 32, 32, -2), x.data(), 10).ok());
  ASSERT_TRUE(pair_.b->Enqueue(MakeHeader(TestFrame::kClose, 0, 0, 0), nullptr, 0).ok());
  for (int i = 0; i < 2000000 && order.events.size() < 2; ++i) {
    ASSERT_TRUE(pair_.b->Progress(sink_b_).ok());
    ASSERT_TRUE(pair_.a->Progress(order).ok());
  }
  EXPECT_EQ(order.events, (std::vector<std::string>{"sent 10", "type 7"}));
}

INSTANTIATE_TEST_SUITE_P(AllTransports, Transport, ::testing::ValuesIn(AllTransports()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace tutti::conformance
