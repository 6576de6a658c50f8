// The setup half of the transport contract: every transport connects every pair of a few ranks
// (threads here) through a SetupExchange, the connections carry frames both ways, CanConnect
// follows the cards, and a peer that never shows up ends the setup at the deadline, named.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

#include "transport/setup.h"
#include "transport/shm/shm_setup.h"
#include "transport/tcp/tcp_setup.h"
#include "transport/test_sink.h"

namespace tutti {
namespace {

using Clock = std::chrono::steady_clock;

// Blobs in memory, shared by the ranks' exchanges.
struct Board {
  std::mutex mu;
  std::condition_variable cv;
  std::map<std::string, std::string> blobs;
};

class MemoryExchange : public SetupExchange {
 public:
  MemoryExchange(Board& b, int rank, int size, double timeout_s)
      : b_(b), rank_(rank), size_(size), deadline_(Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s))) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  Status Put(const std::string& key, const std::string& blob) override {
    std::lock_guard<std::mutex> lock(b_.mu);
    b_.blobs[key] = blob;
    b_.cv.notify_all();
    return OkStatus();
  }
  Result<std::string> Get(int from, const std::string& key, const std::string& what) override {
    std::unique_lock<std::mutex> lock(b_.mu);
    if (!b_.cv.wait_until(lock, deadline_, [&] { return b_.blobs.count(key) > 0; }))
      return TimeoutError(what + " (rank " + std::to_string(from) + " never published " + key + ")");
    return b_.blobs[key];
  }
  Clock::time_point deadline() const override { return deadline_; }
  Result<uint64_t> CommId() override { return uint64_t{77}; }

 private:
  Board& b_;
  const int rank_, size_;
  const Clock::time_point deadline_;
};

std::unique_ptr<TransportSetup> Make(const std::string& name) {
  if (name == "shm") {
    ShmOptions o;
    o.fifo_bytes = 64 << 10;
    o.piece_bytes = 16 << 10;
    return std::make_unique<ShmSetup>(o);
  }
  TcpSetupOptions o;
  o.secret = "setup-test";
  o.nsocks = 2;
  return std::make_unique<TcpSetup>(o);
}

class Setup : public ::testing::TestWithParam<std::string> {};

TEST_P(Setup, EveryPairConnectsAndCarriesFrames) {
  const int n = 4;
  Board board;
  std::vector<PeerInfo> cards(n, PeerInfo{"host-a", getpid(), ""});
  std::vector<std::map<int, std::unique_ptr<Connection>>> conns(n);
  std::vector<Status> errors(n);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      MemoryExchange ex(board, r, n, 20);
      std::set<int> peers;
      for (int p = 0; p < n; ++p)
        if (p != r) peers.insert(p);
      auto got = Make(GetParam())->Connect(cards, peers, ex);
      if (!got.ok()) errors[r] = got.status();
      else conns[r] = std::move(*got);
    });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < n; ++r) {
    ASSERT_TRUE(errors[r].ok()) << "rank " << r << ": " << errors[r].ToString();
    ASSERT_EQ(conns[r].size(), static_cast<size_t>(n - 1));
    for (auto& [p, c] : conns[r]) EXPECT_EQ(c->peer(), p);
  }
  // Each ordered pair sends one frame naming itself.
  std::vector<RecordingSink> sinks(n);
  std::vector<std::string> texts;
  for (int r = 0; r < n; ++r)
    for (int p = 0; p < n; ++p) texts.push_back(std::to_string(r) + "->" + std::to_string(p));
  for (int r = 0; r < n; ++r)
    for (auto& [p, c] : conns[r]) {
      const std::string& t = texts[r * n + p];
      ASSERT_TRUE(c->Enqueue(MakeHeader(TestFrame::kData, r, t.size(), t.size()), t.data(), 0).ok());
    }
  for (int round = 0; round < 1000000; ++round) {
    bool all = true;
    for (int r = 0; r < n; ++r) {
      for (auto& [p, c] : conns[r]) ASSERT_TRUE(c->Progress(sinks[r]).ok());
      all &= sinks[r].frames.size() == static_cast<size_t>(n - 1);
    }
    if (all) break;
  }
  for (int r = 0; r < n; ++r) {
    ASSERT_EQ(sinks[r].frames.size(), static_cast<size_t>(n - 1)) << "rank " << r;
    for (const auto& f : sinks[r].frames)
      EXPECT_EQ(f.payload, std::to_string(f.h.id) + "->" + std::to_string(r));
  }
}

TEST_P(Setup, AMissingPeerEndsSetupAtTheDeadlineNamed) {
  Board board;
  std::vector<PeerInfo> cards(2, PeerInfo{"host-a", getpid(), ""});
  // Rank 1 waits for rank 0, which never comes (for tcp: rank 1 connects to 0's address).
  MemoryExchange ex(board, 1, 2, 0.3);
  const auto start = Clock::now();
  auto got = Make(GetParam())->Connect(cards, {0}, ex);
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.status().message().find("rank 0"), std::string::npos) << got.status().ToString();
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - start).count(), 10.0);
}

TEST(SetupRules, CanConnectFollowsTheCards) {
  PeerInfo a{"host-a", 1, ""}, b{"host-b", 2, ""}, a2{"host-a", 3, ""};
  EXPECT_TRUE(Make("shm")->CanConnect(a, a2));
  EXPECT_FALSE(Make("shm")->CanConnect(a, b));
  EXPECT_TRUE(Make("tcp")->CanConnect(a, b));
}

INSTANTIATE_TEST_SUITE_P(Transports, Setup, ::testing::Values("shm", "tcp"));

}  // namespace
}  // namespace tutti
