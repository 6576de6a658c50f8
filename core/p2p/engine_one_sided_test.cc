// A receiver that finds it cannot copy one-sidedly from a peer (kUnavailable: the kernel refuses
// cross-memory attach, as under a strict ptrace policy) asks for the data instead, and from then
// on asks at once instead of trying (and failing) for every message. Unless one_sided_all, only
// receives posted as copies read one-sidedly.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <vector>

#include "core/p2p/engine.h"
#include "transport/conformance/pairs.h"
#include "transport/forwarding_connection.h"

namespace tutti {
namespace {

// Counts the one-sided reads it passes on.
class CountingConnection : public ForwardingConnection {
 public:
  CountingConnection(std::unique_ptr<Connection> inner, int* reads)
      : ForwardingConnection(std::move(inner)), reads_(reads) {}
  Status PostRead(const std::string& desc, size_t offset, void* dst, size_t bytes, uint64_t cookie) override {
    ++*reads_;
    return ForwardingConnection::PostRead(desc, offset, dst, bytes, cookie);
  }

 private:
  int* reads_;
};

// Moves one message of `bytes` from `sender` (rank 0) to `receiver` (rank 1), the receive posted
// as a copy or not; checks the bytes.
void Move(P2PEngine& sender, P2PEngine& receiver, size_t bytes, bool copy, int m) {
  std::vector<char> out(bytes), in(out.size());
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<char>(i * 7 + m);
  auto send = sender.PostSend(out.data(), out.size(), 1, 9);
  auto recv = receiver.PostRecv(in.data(), in.size(), 0, 9, 0, copy);
  ASSERT_TRUE(send.ok() && recv.ok());
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!((*send)->done.load() && (*recv)->done.load()) && std::chrono::steady_clock::now() < end) {
    sender.Poll();
    receiver.Poll();
  }
  ASSERT_TRUE((*send)->done.load() && (*recv)->done.load()) << "message " << m;
  ASSERT_TRUE((*recv)->status.ok()) << (*recv)->status.ToString();
  EXPECT_EQ(in, out) << "message " << m;
}

// A sender (rank 0) and a receiver (rank 1) joined by a shm pair with cross-memory attach; the
// receiver's end is wrapped by `wrap` (to count or refuse its reads). Null engines if the pair
// could not be made.
struct Engines {
  std::unique_ptr<P2PEngine> sender, receiver;
  size_t eager_max = 0;  // the largest message that goes as one DATA frame between them
};
Engines MakeEngines(bool one_sided_all,
                    const std::function<std::unique_ptr<Connection>(std::unique_ptr<Connection>)>& wrap) {
  conformance::Pair pair;
  for (const auto& f : conformance::AllTransports())
    if (f.name == "shm_cma") pair = f.make();
  Engines e;
  if (!pair.a || !pair.b) return e;
  EngineOptions o;
  o.size = 2;
  o.timeout_s = 5;
  o.one_sided_all = one_sided_all;
  o.rank = 0;
  e.sender = std::make_unique<P2PEngine>(o);
  o.rank = 1;
  e.receiver = std::make_unique<P2PEngine>(o);
  e.eager_max = std::min(o.eager_limit, pair.a->max_payload());
  e.sender->SetConnection(1, std::move(pair.a));  // exposes its buffers: RTS carries a descriptor
  e.receiver->SetConnection(0, wrap(std::move(pair.b)));
  return e;
}

TEST(EngineOneSided, OnlyCopiesAreReadUnlessEveryReceiveMayBe) {
  for (bool all : {false, true}) {
    int reads = 0;
    Engines e = MakeEngines(all, [&](auto c) { return std::make_unique<CountingConnection>(std::move(c), &reads); });
    ASSERT_TRUE(e.sender && e.receiver);
    P2PEngine &sender = *e.sender, &receiver = *e.receiver;
    Move(sender, receiver, 256 << 10, /*copy=*/false, 0);  // staged for a reduction
    EXPECT_EQ(reads, all ? 1 : 0) << "all: " << all;
    Move(sender, receiver, 256 << 10, /*copy=*/true, 1);
    EXPECT_EQ(reads, all ? 2 : 1) << "all: " << all;
    Move(sender, receiver, 4 << 20, /*copy=*/false, 2);  // (large: the split copy when read)
    Move(sender, receiver, 4 << 20, /*copy=*/true, 3);
    EXPECT_EQ(reads, all ? 4 : 2) << "all: " << all;
    Move(sender, receiver, (4 << 20) + 4096, /*copy=*/true, 4);  // above kCopyReadMax
    EXPECT_EQ(reads, all ? 5 : 2) << "all: " << all;
  }
}

// One-sided reads are refused, as the kernel refuses them.
class RefusingConnection : public ForwardingConnection {
 public:
  RefusingConnection(std::unique_ptr<Connection> inner, int* reads)
      : ForwardingConnection(std::move(inner)), reads_(reads) {}
  Status PostRead(const std::string&, size_t, void*, size_t, uint64_t) override {
    ++*reads_;
    return UnavailableError("process_vm_readv: Operation not permitted (refused by the test)");
  }

 private:
  int* reads_;
};

TEST(EngineOneSided, AReceiverRefusedOnceAsksForTheDataFromThenOn) {
  int reads = 0;
  Engines e = MakeEngines(false, [&](auto c) { return std::make_unique<RefusingConnection>(std::move(c), &reads); });
  ASSERT_TRUE(e.sender && e.receiver);
  P2PEngine &sender = *e.sender, &receiver = *e.receiver;
  for (int m = 0; m < 3; ++m) {
    Move(sender, receiver, 256 << 10, /*copy=*/true, m);
    if (::testing::Test::HasFatalFailure()) return;
  }
  EXPECT_EQ(reads, 1) << "the receiver tried a one-sided read again after it was refused";
}

// A point-to-point send that waits for its receive anyway (above kBufferedSendMax) is read by the
// receiver even below the eager limit, until the receiver once asks for the data instead (its
// receive was no copy, or reading is refused): from then on such sends go eager.
TEST(EngineOneSided, MidSizeSendsAreReadUntilTheReceiverAsksForTheData) {
  int reads = 0;
  Engines e = MakeEngines(false, [&](auto c) { return std::make_unique<CountingConnection>(std::move(c), &reads); });
  ASSERT_TRUE(e.sender && e.receiver);
  P2PEngine &sender = *e.sender, &receiver = *e.receiver;
  const size_t eager_max = e.eager_max;
  ASSERT_LT(kBufferedSendMax + 1, eager_max);
  Move(sender, receiver, kBufferedSendMax, /*copy=*/true, 0);  // buffered (POST)
  EXPECT_EQ(reads, 0);
  Move(sender, receiver, kBufferedSendMax + 1, /*copy=*/true, 1);
  Move(sender, receiver, eager_max, /*copy=*/true, 2);
  EXPECT_EQ(reads, 2) << "sends above the buffered size were not read by the receiver";
  Move(sender, receiver, eager_max, /*copy=*/false, 3);  // the receiver asks for the data
  Move(sender, receiver, kBufferedSendMax + 1, /*copy=*/true, 4);
  Move(sender, receiver, eager_max + 1, /*copy=*/true, 5);  // above the eager limit: RTS
  EXPECT_EQ(reads, 3) << "a send below the eager limit was still offered for reading";
}

}  // namespace
}  // namespace tutti
