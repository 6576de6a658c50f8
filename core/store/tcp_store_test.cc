// TcpStoreServer + TcpStoreClient: the Store semantics over TCP, many clients, handshakes,
// connecting and the server going away.
#include "core/store/tcp_store.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "core/store/prefix_store.h"
#include "core/store/store_conformance.h"
#include "core/base/socket_util.h"

namespace tutti {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

std::unique_ptr<TcpStoreServer> StartServer(const std::string& secret = "s3cret") {
  Result<std::unique_ptr<TcpStoreServer>> server = TcpStoreServer::Start("127.0.0.1", 0, secret);
  EXPECT_TRUE(server.ok()) << server.status().ToString();
  return server.ok() ? std::move(*server) : nullptr;
}

std::unique_ptr<TcpStoreClient> ConnectTo(int port, const std::string& secret = "s3cret") {
  Result<std::unique_ptr<TcpStoreClient>> c = TcpStoreClient::Connect("127.0.0.1", port, secret, 5);
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? std::move(*c) : nullptr;
}

// Each handle is its own client connection to one server.
class TcpEnv : public StoreTestEnv {
 public:
  explicit TcpEnv(bool prefixed) : prefixed_(prefixed), server_(StartServer()) {}
  Store* handle(int i) override {
    if (!clients_[i]) {
      clients_[i] = ConnectTo(server_->port());
      if (prefixed_) prefixed_handles_[i] = std::make_unique<PrefixStore>("job", clients_[i].get());
    }
    return prefixed_ ? static_cast<Store*>(prefixed_handles_[i].get()) : clients_[i].get();
  }

 private:
  bool prefixed_;
  std::unique_ptr<TcpStoreServer> server_;
  std::unique_ptr<TcpStoreClient> clients_[32];
  std::unique_ptr<PrefixStore> prefixed_handles_[32];
};

INSTANTIATE_TEST_SUITE_P(
    Tcp, StoreConformanceTest,
    ::testing::Values(
        StoreFactory{"Tcp", [] { return std::unique_ptr<StoreTestEnv>(new TcpEnv(false)); }},
        StoreFactory{"TcpPrefix", [] { return std::unique_ptr<StoreTestEnv>(new TcpEnv(true)); }}),
    StoreFactoryName);

TEST(TcpStore, GetBeforeSetFromAnotherClientAndHostNames) {
  auto server = StartServer();
  Result<std::unique_ptr<TcpStoreClient>> by_name =
      TcpStoreClient::Connect("localhost", server->port(), "s3cret", 5);
  ASSERT_TRUE(by_name.ok()) << by_name.status().ToString();
  auto setter = ConnectTo(server->port());
  std::thread t([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_TRUE(setter->Set("addr/0", "10.0.0.1:1234").ok());
  });
  Result<std::string> v = (*by_name)->Get("addr/0", 5);
  t.join();
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(*v, "10.0.0.1:1234");
}

TEST(TcpStore, ManyClientsEachWithItsOwnConnection) {
  auto server = StartServer();
  constexpr int kClients = 200;
  std::vector<std::unique_ptr<TcpStoreClient>> clients;
  for (int i = 0; i < kClients; ++i) clients.push_back(ConnectTo(server->port()));
  ASSERT_EQ(clients.size(), size_t{kClients});
  // Half of them wait for a key the last one sets; the server answers all waiters.
  std::vector<std::thread> waiters;
  std::atomic<int> answered{0};
  for (int i = 0; i < kClients / 2; ++i)
    waiters.emplace_back([&, i] {
      if (clients[i]->Get("go", 5).ok()) ++answered;
    });
  for (int i = kClients / 2; i < kClients; ++i) ASSERT_EQ(*clients[i]->Add("joined", 1) > 0, true);
  ASSERT_TRUE(clients.back()->Set("go", "1").ok());
  for (std::thread& t : waiters) t.join();
  EXPECT_EQ(answered.load(), kClients / 2);
  EXPECT_EQ(*clients[0]->Get("joined", 1), std::to_string(kClients / 2));
  EXPECT_EQ(server->num_connections(), size_t{kClients});
}

TEST(TcpStore, WrongSecretIsRefused) {
  auto server = StartServer("right");
  auto t0 = Clock::now();
  Result<std::unique_ptr<TcpStoreClient>> c =
      TcpStoreClient::Connect("127.0.0.1", server->port(), "wrong", 60);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), Code::kInvalidUsage) << c.status().ToString();
  EXPECT_NE(c.status().message().find("secret mismatch"), std::string::npos)
      << c.status().ToString();
  EXPECT_LT(SecondsSince(t0), 20);  // refused, not retried until the timeout
  // A secret that is a prefix of the right one is wrong too.
  EXPECT_EQ(TcpStoreClient::Connect("127.0.0.1", server->port(), "righ", 5).status().code(),
            Code::kInvalidUsage);
  EXPECT_TRUE(TcpStoreClient::Connect("127.0.0.1", server->port(), "right", 5).ok());
}

TEST(TcpStore, ConnectWithNoServerTimesOutQuickly) {
  // Find a port nobody listens on: bind one, then close it.
  int port = 0;
  Result<int> fd = ListenTcp("127.0.0.1", 0, &port, 1);
  ASSERT_TRUE(fd.ok());
  ::close(*fd);
  auto t0 = Clock::now();
  Result<std::unique_ptr<TcpStoreClient>> c = TcpStoreClient::Connect("127.0.0.1", port, "", 0.3);
  double took = SecondsSince(t0);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), Code::kTimeout) << c.status().ToString();
  EXPECT_NE(c.status().message().find("127.0.0.1:" + std::to_string(port)), std::string::npos)
      << c.status().ToString();
  EXPECT_GE(took, 0.25);
  EXPECT_LT(took, 10.0);
}

TEST(TcpStore, ConnectRetriesUntilTheServerStarts) {
  int port = 0;
  Result<int> fd = ListenTcp("127.0.0.1", 0, &port, 1);
  ASSERT_TRUE(fd.ok());
  ::close(*fd);
  std::unique_ptr<TcpStoreServer> server;
  std::thread starter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    Result<std::unique_ptr<TcpStoreServer>> s = TcpStoreServer::Start("127.0.0.1", port, "x");
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    server = std::move(*s);
  });
  Result<std::unique_ptr<TcpStoreClient>> c = TcpStoreClient::Connect("127.0.0.1", port, "x", 5);
  starter.join();
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(*(*c)->Add("k", 4), 4);
}

TEST(TcpStore, ServerDestroyedWhileAClientWaits) {
  auto server = StartServer();
  auto waiter = ConnectTo(server->port());
  auto other = ConnectTo(server->port());
  std::thread killer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    auto t0 = Clock::now();
    server.reset();
    EXPECT_LT(SecondsSince(t0), 10.0);  // stopping is prompt
  });
  auto t0 = Clock::now();
  Result<std::string> v = waiter->Get("never", 60);
  killer.join();
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), Code::kRemoteError) << v.status().ToString();
  EXPECT_NE(v.status().message().find("closed the connection"), std::string::npos);
  EXPECT_LT(SecondsSince(t0), 20);
  // Later operations fail too, at once.
  EXPECT_EQ(waiter->Set("k", "v").code(), Code::kRemoteError);
  EXPECT_EQ(other->Add("k", 1).status().code(), Code::kRemoteError);
  EXPECT_EQ(other->Wait({"k"}, 30).code(), Code::kRemoteError);
}

TEST(TcpStore, TimedOutWaitLeavesTheConnectionUsable) {
  auto server = StartServer();
  auto c = ConnectTo(server->port());
  EXPECT_EQ(c->Wait({"a", "b"}, 0.1).code(), Code::kTimeout);
  EXPECT_EQ(c->Get("a", 0.05).status().code(), Code::kTimeout);
  ASSERT_TRUE(c->Set("a", "1").ok());
  EXPECT_EQ(*c->Get("a", 1), "1");
  EXPECT_EQ(*c->Add("n", 1), 1);
  // The server forgot the expired waiters.
  auto t0 = Clock::now();
  while (server->num_waiters() != 0 && SecondsSince(t0) < 2)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(server->num_waiters(), 0u);
}

TEST(TcpStore, ThreadsShareOneClient) {
  auto server = StartServer();
  auto c = ConnectTo(server->port());
  std::vector<std::thread> threads;
  for (int t = 0; t < 16; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i) EXPECT_TRUE(c->Add("n", 1).ok());
    });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(*c->Get("n", 0), "800");
}

}  // namespace
}  // namespace tutti
