// When a communicator fails, the owners of its operations' buffers may reuse them as soon as the
// operations complete (with the error). So the engine first has every connection let go of them
// (Connection::ReleaseBuffers: nothing queued or posted touches them again, nor a peer's copy
// over shm) and only then completes the operations.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "core/p2p/engine.h"
#include "transport/conformance/pairs.h"
#include "transport/forwarding_connection.h"

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

class EngineRelease : public ::testing::TestWithParam<conformance::PairFactory> {};

TEST_P(EngineRelease, BuffersAreLetGoOfBeforeTheFailedOperationsComplete) {
  conformance::Pair pair = GetParam().make();
  ASSERT_TRUE(pair.a && pair.b);
  EngineOptions o;
  o.rank = 0;
  o.size = 2;
  o.timeout_s = 5;
  std::vector<std::shared_ptr<Op>> watched;  // (outlives the engine, whose end lets go again)
  int done_at_release = 0, releases = 0;
  P2PEngine engine(o);
  engine.SetConnection(1, std::make_unique<WatchingConnection>(std::move(pair.a), &watched, &done_at_release,
                                                               &releases));
  // A receive and a large send (its buffer exposed where the transport can) that the idle peer
  // never answers.
  std::vector<char> in(64), out(8 << 20, 1);
  auto recv = engine.PostRecv(in.data(), in.size(), 1, 3);
  auto send = engine.PostSend(out.data(), out.size(), 1, 4);
  ASSERT_TRUE(recv.ok() && send.ok());
  watched = {*recv, *send};
  engine.Poll();
  engine.Fail(AbortedError("the test fails the communicator"));
  EXPECT_GE(releases, 1);
  EXPECT_EQ(done_at_release, 0) << "an operation was complete (its buffer free to reuse) before the connection let go";
  EXPECT_TRUE((*recv)->done.load() && (*send)->done.load());
  EXPECT_EQ((*recv)->status.code(), Code::kAborted);
}

INSTANTIATE_TEST_SUITE_P(AllTransports, EngineRelease, ::testing::ValuesIn(conformance::AllTransports()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace tutti
