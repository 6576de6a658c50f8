// When a communicator fails, the owners of its operations' buffers may reuse them as soon as the
// operations complete (with the error). So the engine first has every connection let go of them
// (Connection::ReleaseBuffers: nothing queued or posted touches them again, nor a peer's copy
// over shm) and only then completes the operations.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <vector>

#include "core/p2p/engine.h"
#include "core/p2p/frame_types.h"
#include "transport/conformance/pairs.h"
#include "transport/forwarding_connection.h"
#include "transport/test_sink.h"

namespace tutti {
namespace {

// Notes, when it is told to let go of the buffers, whether the watched operations were already
// complete.
class WatchingConnection : public ForwardingConnection {
 public:
  WatchingConnection(std::unique_ptr<Connection> inner, std::vector<std::shared_ptr<Op>>* watched,
                     int* done_at_release, int* releases)
      : ForwardingConnection(std::move(inner)), watched_(watched), done_at_release_(done_at_release),
        releases_(releases) {}
  void ReleaseBuffers() override {
    ++*releases_;
    for (const auto& op : *watched_) *done_at_release_ += op->done.load() ? 1 : 0;
    ForwardingConnection::ReleaseBuffers();
  }

 private:
  std::vector<std::shared_ptr<Op>>* watched_;
  int* done_at_release_;
  int* releases_;
};

class EngineRelease : public ::testing::TestWithParam<conformance::PairFactory> {
 protected:
  // An engine of rank 0 whose connection to rank 1 is watched; rank 1's end stays bare (peer_).
  // A receive and a large send (its buffer exposed where the transport can) wait for the idle
  // peer.
  void Start() {
    conformance::Pair pair = GetParam().make();
    ASSERT_TRUE(pair.a && pair.b);
    keep_ = pair.keep;
    peer_ = std::move(pair.b);
    EngineOptions o;
    o.rank = 0;
    o.size = 2;
    o.timeout_s = 5;
    engine_ = std::make_unique<P2PEngine>(o);
    engine_->SetConnection(1, std::make_unique<WatchingConnection>(std::move(pair.a), &watched_, &done_at_release_,
                                                                   &releases_));
    auto recv = engine_->PostRecv(in_.data(), in_.size(), 1, 3);
    auto send = engine_->PostSend(out_.data(), out_.size(), 1, 4);
    ASSERT_TRUE(recv.ok() && send.ok());
    watched_ = {*recv, *send};
    engine_->Poll();
  }
  void TearDown() override {
    engine_.reset();  // (before what its connection watches)
    if (peer_) peer_->Close();
  }

  // Declared before the engine, which lets go again when it ends.
  std::vector<std::shared_ptr<Op>> watched_;
  int done_at_release_ = 0, releases_ = 0;
  std::vector<char> in_ = std::vector<char>(64), out_ = std::vector<char>(8 << 20, 1);
  std::shared_ptr<void> keep_;
  std::unique_ptr<Connection> peer_;
  std::unique_ptr<P2PEngine> engine_;
};

TEST_P(EngineRelease, BuffersAreLetGoOfBeforeTheFailedOperationsComplete) {
  Start();
  engine_->Fail(AbortedError("the test fails the communicator"));
  EXPECT_GE(releases_, 1);
  EXPECT_EQ(done_at_release_, 0) << "an operation was complete (its buffer free to reuse) before the connection let go";
  for (const auto& op : watched_) {
    EXPECT_TRUE(op->done.load());
    EXPECT_EQ(op->status.code(), Code::kAborted) << op->status.ToString();
  }
}

TEST_P(EngineRelease, APeerThatClosesLeavesNoBufferInUse) {
  // The peer closes its communicator cleanly (a CLOSE without a reason): what was in flight with
  // it fails, and again the connection lets go first.
  Start();
  ASSERT_TRUE(peer_->Enqueue(FrameOf(FrameType::kClose), nullptr, 0).ok());
  RecordingSink sink;
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!(watched_[0]->done.load() && watched_[1]->done.load()) && std::chrono::steady_clock::now() < end) {
    (void)peer_->Progress(sink);
    engine_->Poll();
  }
  ASSERT_TRUE(watched_[0]->done.load() && watched_[1]->done.load());
  EXPECT_GE(releases_, 1);
  EXPECT_EQ(done_at_release_, 0) << "an operation was complete (its buffer free to reuse) before the connection let go";
  EXPECT_EQ(watched_[0]->status.code(), Code::kRemoteError) << watched_[0]->status.ToString();
  EXPECT_NE(watched_[0]->status.message().find("rank 1 closed its communicator"), std::string::npos)
      << watched_[0]->status.ToString();
}

INSTANTIATE_TEST_SUITE_P(AllTransports, EngineRelease, ::testing::ValuesIn(conformance::AllTransports()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace tutti
