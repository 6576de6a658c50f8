// The TCP store against a hostile or broken peer: malformed frames sent to the server with a raw
// socket, and malformed or late replies from a fake server to the client.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "core/store/store_wire.h"
#include "core/store/tcp_store.h"
#include "core/base/socket_util.h"

namespace tutti {
namespace {

using store_wire::Reply;
using store_wire::Request;
using store_wire::Type;

double SecondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

int RawConnect(int port) {
  Result<int> fd = ConnectTcpOnce("127.0.0.1", port, DeadlineIn(2));
  EXPECT_TRUE(fd.ok()) << fd.status().ToString();
  return fd.ok() ? *fd : -1;
}

void SendBytes(int fd, const std::string& bytes) {
  Status st = WriteFull(fd, bytes.data(), bytes.size(), DeadlineIn(2));
  EXPECT_TRUE(st.ok()) << st.ToString();
}

std::string Header(uint32_t magic, uint16_t type, uint64_t id, uint32_t body_len) {
  std::string h(store_wire::kHeaderBytes, '\0');
  std::memcpy(&h[0], &magic, 4);  // x86: little-endian, as the wire
  std::memcpy(&h[4], &type, 2);
  std::memcpy(&h[8], &id, 8);
  std::memcpy(&h[16], &body_len, 4);
  return h;
}

std::string Hello(const std::string& secret, uint32_t version = store_wire::kVersion) {
  Request r;
  r.type = Type::kHello;
  r.id = 1;
  r.version = version;
  r.secret = secret;
  return store_wire::EncodeRequest(r);
}

// Reads one reply frame (header validated); nullopt-like error if none within the deadline.
Result<Reply> ReadReplyFrame(int fd) {
  Clock::time_point d = DeadlineIn(2);
  char hdr[store_wire::kHeaderBytes];
  TUTTI_RETURN_IF_ERROR(ReadFull(fd, hdr, sizeof(hdr), d));
  TUTTI_ASSIGN_OR_RETURN(store_wire::Header h, store_wire::DecodeHeader(hdr, false));
  std::string body(h.body_len, '\0');
  TUTTI_RETURN_IF_ERROR(ReadFull(fd, body.data(), body.size(), d));
  return store_wire::DecodeReply(h, body);
}

// Handshakes a raw connection.
int RawClient(int port, const std::string& secret) {
  int fd = RawConnect(port);
  SendBytes(fd, Hello(secret));
  Result<Reply> r = ReadReplyFrame(fd);
  EXPECT_TRUE(r.ok() && r->type == Type::kHelloOk) << r.status().ToString();
  return fd;
}

// True if the peer closes the connection within 2 s (whatever it sends first is skipped).
bool ClosedByPeer(int fd) {
  auto t0 = Clock::now();
  char buf[4096];
  while (SecondsSince(t0) < 2) {
    Result<bool> readable = WaitReadable(fd, DeadlineIn(0.1));
    if (!readable.ok()) return false;
    if (!*readable) continue;
    ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n == 0 || (n < 0 && errno == ECONNRESET)) return true;
  }
  return false;
}

class HostileClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<std::unique_ptr<TcpStoreServer>> s = TcpStoreServer::Start("127.0.0.1", 0, "sec");
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    server_ = std::move(*s);
    Result<std::unique_ptr<TcpStoreClient>> c =
        TcpStoreClient::Connect("127.0.0.1", server_->port(), "sec", 5);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    good_ = std::move(*c);
    ASSERT_TRUE(good_->Set("before", "1").ok());
  }
  // The hostile connection was closed; the well-behaved client keeps working.
  void ExpectClosedAndOthersFine(int fd) {
    EXPECT_TRUE(ClosedByPeer(fd));
    ::close(fd);
    EXPECT_EQ(*good_->Add("counter", 1), ++adds_);
    EXPECT_EQ(*good_->Get("before", 1), "1");
    auto t0 = Clock::now();
    while (server_->num_connections() != 1 && SecondsSince(t0) < 2)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    EXPECT_EQ(server_->num_connections(), 1u);
  }

  std::unique_ptr<TcpStoreServer> server_;
  std::unique_ptr<TcpStoreClient> good_;
  int adds_ = 0;
};

TEST_F(HostileClientTest, GarbageBytes) {
  int fd = RawConnect(server_->port());
  SendBytes(fd, "GET / HTTP/1.1\r\nHost: store\r\n\r\n");
  Result<Reply> r = ReadReplyFrame(fd);  // an error reply before the close
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->type, Type::kError);
  EXPECT_EQ(r->error.code(), Code::kProtocol);
  ExpectClosedAndOthersFine(fd);
}

TEST_F(HostileClientTest, HeaderClaimingFourGigabytes) {
  int fd = RawClient(server_->port(), "sec");
  SendBytes(fd, Header(store_wire::kMagic, static_cast<uint16_t>(Type::kSet), 2, 0xFFFFFFFFu));
  ExpectClosedAndOthersFine(fd);
  // Before the handshake even a Set-sized body is refused.
  fd = RawConnect(server_->port());
  SendBytes(fd, Header(store_wire::kMagic, static_cast<uint16_t>(Type::kHello), 1, 1 << 20));
  ExpectClosedAndOthersFine(fd);
}

TEST_F(HostileClientTest, TruncatedFrameThenClose) {
  int fd = RawClient(server_->port(), "sec");
  std::string frame = Header(store_wire::kMagic, static_cast<uint16_t>(Type::kSet), 2, 100);
  frame += std::string(10, 'x');
  SendBytes(fd, frame);
  ::shutdown(fd, SHUT_WR);
  ExpectClosedAndOthersFine(fd);
}

TEST_F(HostileClientTest, WrongVersionIsRefusedWithAReason) {
  int fd = RawConnect(server_->port());
  SendBytes(fd, Hello("sec", 99));
  Result<Reply> r = ReadReplyFrame(fd);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->type, Type::kError);
  EXPECT_EQ(r->error.code(), Code::kInvalidUsage);
  EXPECT_NE(r->error.message().find("version"), std::string::npos) << r->error.message();
  ExpectClosedAndOthersFine(fd);
}

TEST_F(HostileClientTest, WrongMagic) {
  int fd = RawConnect(server_->port());
  std::string hello = Hello("sec");
  hello[0] ^= 0x20;
  SendBytes(fd, hello);
  ExpectClosedAndOthersFine(fd);
}

TEST_F(HostileClientTest, RequestBeforeHello) {
  Request r;
  r.type = Type::kSet;
  r.key = "k";
  r.value = "v";
  int fd = RawConnect(server_->port());
  SendBytes(fd, store_wire::EncodeRequest(r));
  ExpectClosedAndOthersFine(fd);
  EXPECT_FALSE(*good_->Check({"k"}));
}

TEST_F(HostileClientTest, HostileBodies) {
  std::vector<std::string> bodies;
  // Wait for 2^31 keys in a small body.
  std::string wait_body(8, '\0');
  wait_body += std::string("\x00\x00\x00\x80", 4);
  bodies.push_back(Header(store_wire::kMagic, static_cast<uint16_t>(Type::kWait), 2,
                          static_cast<uint32_t>(wait_body.size())) + wait_body);
  // A key whose length runs past the body.
  std::string del_body = std::string("\xff\xff\x00\x00", 4) + "abc";
  bodies.push_back(Header(store_wire::kMagic, static_cast<uint16_t>(Type::kDelete), 2,
                          static_cast<uint32_t>(del_body.size())) + del_body);
  // Trailing bytes after a valid Check.
  std::string check_body = std::string(4, '\0') + "zz";
  bodies.push_back(Header(store_wire::kMagic, static_cast<uint16_t>(Type::kCheck), 2,
                          static_cast<uint32_t>(check_body.size())) + check_body);
  // A reply type, nonzero flags, a second Hello.
  bodies.push_back(Header(store_wire::kMagic, static_cast<uint16_t>(Type::kOk), 2, 0));
  std::string flagged = Header(store_wire::kMagic, static_cast<uint16_t>(Type::kCheck), 2, 4) +
                        std::string(4, '\0');
  flagged[6] = 1;
  bodies.push_back(flagged);
  bodies.push_back(Hello("sec"));
  for (const std::string& frame : bodies) {
    int fd = RawClient(server_->port(), "sec");
    SendBytes(fd, frame);
    ExpectClosedAndOthersFine(fd);
  }
}

TEST_F(HostileClientTest, DisconnectMidWaitIsCleanedUp) {
  int fd = RawClient(server_->port(), "sec");
  Request r;
  r.type = Type::kWait;
  r.id = 2;
  r.keys = {"never1", "never2"};
  r.timeout_ms = store_wire::kNoTimeout;
  SendBytes(fd, store_wire::EncodeRequest(r));
  auto t0 = Clock::now();
  while (server_->num_waiters() != 1 && SecondsSince(t0) < 2)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_EQ(server_->num_waiters(), 1u);
  ::close(fd);
  t0 = Clock::now();
  while (server_->num_waiters() != 0 && SecondsSince(t0) < 2)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(server_->num_waiters(), 0u);
  ASSERT_TRUE(good_->Set("never1", "x").ok());  // completing nobody is fine
  ASSERT_TRUE(good_->Set("never2", "x").ok());
  EXPECT_EQ(server_->num_connections(), 1u);
}

// A fake server: accepts one client, answers its Hello, then runs script on the connection.
class FakeServer {
 public:
  explicit FakeServer(std::function<void(int fd)> script) {
    Result<int> l = ListenTcp("127.0.0.1", 0, &port_, 4);
    EXPECT_TRUE(l.ok());
    listen_fd_ = *l;
    thread_ = std::thread([this, script] {
      if (!*WaitReadable(listen_fd_, DeadlineIn(5))) return;
      int fd = ::accept(listen_fd_, nullptr, nullptr);
      Request hello;
      if (ReadRequest(fd, &hello)) {
        Reply ok;
        ok.type = Type::kHelloOk;
        ok.id = hello.id;
        ok.version = store_wire::kVersion;
        SendBytes(fd, store_wire::EncodeReply(ok));
        script(fd);
      }
      ::close(fd);
    });
  }
  ~FakeServer() {
    thread_.join();
    ::close(listen_fd_);
  }
  int port() const { return port_; }

  static bool ReadRequest(int fd, Request* out) {
    Clock::time_point d = DeadlineIn(5);
    char hdr[store_wire::kHeaderBytes];
    if (!ReadFull(fd, hdr, sizeof(hdr), d).ok()) return false;
    Result<store_wire::Header> h = store_wire::DecodeHeader(hdr, true);
    if (!h.ok()) return false;
    std::string body(h->body_len, '\0');
    if (!ReadFull(fd, body.data(), body.size(), d).ok()) return false;
    Result<Request> r = store_wire::DecodeRequest(*h, body);
    if (!r.ok()) return false;
    *out = *r;
    return true;
  }

 private:
  int listen_fd_ = -1;
  int port_ = 0;
  std::thread thread_;
};

TEST(HostileServer, MalformedRepliesAreProtocolErrors) {
  std::vector<std::string> bad_replies = {
      "this is not a frame at all!",
      Header(store_wire::kMagic, static_cast<uint16_t>(Type::kValue), 2, 0xFFFFFFF0u),
      Header(store_wire::kMagic, static_cast<uint16_t>(Type::kSet), 2, 0),  // a request type
      Header(store_wire::kMagic, static_cast<uint16_t>(Type::kBool), 2, 1) + "\x07",
      Header(store_wire::kMagic, static_cast<uint16_t>(Type::kError), 2, 8) +
          std::string("\x63\x00\x00\x00\x00\x00\x00\x00", 8),  // code 99
      Header(store_wire::kMagic, static_cast<uint16_t>(Type::kInt), 2, 0),  // Int for Set
      Header(store_wire::kMagic, static_cast<uint16_t>(Type::kOk), 7, 0),   // a future id
  };
  for (const std::string& reply : bad_replies) {
    FakeServer fake([&](int fd) {
      Request req;
      if (FakeServer::ReadRequest(fd, &req)) SendBytes(fd, reply);
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    });
    Result<std::unique_ptr<TcpStoreClient>> c =
        TcpStoreClient::Connect("127.0.0.1", fake.port(), "", 5);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    Status st = (*c)->Set("k", "v");
    EXPECT_EQ(st.code(), Code::kProtocol) << st.ToString();
    // The connection is not trusted any more.
    EXPECT_EQ((*c)->Set("k", "v").code(), Code::kRemoteError);
  }
}

TEST(HostileServer, LateReplyToATimedOutGetIsSkipped) {
  FakeServer fake([](int fd) {
    Request first, second;
    if (!FakeServer::ReadRequest(fd, &first)) return;   // Get "slow": no answer in time
    if (!FakeServer::ReadRequest(fd, &second)) return;  // Get "fast"
    Reply late;
    late.type = Type::kValue;
    late.id = first.id;
    late.value = "stale";
    Reply fresh = late;
    fresh.id = second.id;
    fresh.value = "fresh";
    SendBytes(fd, store_wire::EncodeReply(late) + store_wire::EncodeReply(fresh));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  });
  Result<std::unique_ptr<TcpStoreClient>> c = TcpStoreClient::Connect("127.0.0.1", fake.port(), "", 5);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  auto t0 = Clock::now();
  Result<std::string> slow = (*c)->Get("slow", 0.1);
  EXPECT_EQ(slow.status().code(), Code::kTimeout) << slow.status().ToString();
  EXPECT_LT(SecondsSince(t0), 10.0);
  Result<std::string> fast = (*c)->Get("fast", 2);
  ASSERT_TRUE(fast.ok()) << fast.status().ToString();
  EXPECT_EQ(*fast, "fresh");
}

// Connections that never say Hello are closed after the Hello timeout, and at most
// max_unauthenticated of them are held at once; clients that did say Hello are unaffected.
TEST(IdleConnections, AreCappedAndTimedOut) {
  TcpStoreServerOptions opts;
  opts.hello_timeout_s = 0.5;
  opts.max_unauthenticated = 8;
  Result<std::unique_ptr<TcpStoreServer>> s = TcpStoreServer::Start("127.0.0.1", 0, "sec", opts);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  TcpStoreServer& server = **s;
  Result<std::unique_ptr<TcpStoreClient>> good = TcpStoreClient::Connect("127.0.0.1", server.port(), "sec", 5);
  ASSERT_TRUE(good.ok()) << good.status().ToString();
  std::vector<int> idle;
  for (int i = 0; i < 40; ++i) idle.push_back(RawConnect(server.port()));
  // The server holds at most 8 idle connections besides the good client.
  auto t0 = Clock::now();
  while (server.num_connections() > 9 && SecondsSince(t0) < 20)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_LE(server.num_connections(), 9u);
  int closed_at_once = 0;
  for (int fd : idle) {
    Result<bool> readable = WaitReadable(fd, DeadlineIn(0));
    char b;
    if (readable.ok() && *readable && ::recv(fd, &b, 1, MSG_DONTWAIT) <= 0) ++closed_at_once;
  }
  EXPECT_GE(closed_at_once, 32);
  // After the Hello timeout the rest are gone too, and the good client still works.
  t0 = Clock::now();
  while (server.num_connections() != 1 && SecondsSince(t0) < 30)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(server.num_connections(), 1u);
  EXPECT_LT(SecondsSince(t0), 20.0);
  ASSERT_TRUE((*good)->Set("k", "v").ok());
  EXPECT_EQ(*(*good)->Get("k", 1), "v");
  // A fresh client can still connect once the idle ones are gone.
  Result<std::unique_ptr<TcpStoreClient>> late = TcpStoreClient::Connect("127.0.0.1", server.port(), "sec", 5);
  EXPECT_TRUE(late.ok()) << late.status().ToString();
  for (int fd : idle) ::close(fd);
}

TEST(HostileServer, SilentPeerTimesOutTheHandshake) {
  int port = 0;
  Result<int> l = ListenTcp("127.0.0.1", 0, &port, 4);  // accepts (in the kernel), never answers
  ASSERT_TRUE(l.ok());
  auto t0 = Clock::now();
  Result<std::unique_ptr<TcpStoreClient>> c = TcpStoreClient::Connect("127.0.0.1", port, "", 0.3);
  EXPECT_EQ(c.status().code(), Code::kTimeout) << c.status().ToString();
  EXPECT_LT(SecondsSince(t0), 10.0);
  ::close(*l);
}

}  // namespace
}  // namespace tutti
