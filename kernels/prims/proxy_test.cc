#include "kernels/prims/proxy.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <memory>

#include "core/base/socket_util.h"

namespace tutti::prims {
namespace {

struct Conn {
  explicit Conn(const FifoGeom& g) {
    mem = static_cast<uint8_t*>(std::aligned_alloc(64, (ConnBytes(g) + 63) / 64 * 64));
    std::memset(mem, 0, ConnBytes(g));
  }
  ~Conn() { std::free(mem); }
  ConnCtl* ctl() { return reinterpret_cast<ConnCtl*>(mem); }
  uint8_t* mem;
};

// A proxy on one end of a socketpair; the test plays the other host on the other end.
struct Rig {
  explicit Rig(Proto proto) : geom{2, 64, proto}, out(geom), in(geom) {
    int fds[2];
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
    proxy = std::make_unique<FifoProxy>(fds[0], geom, "proxy host 0 <-> host 1");
    far = fds[1];
    proxy->AddOutbound(7, out.ctl());
    proxy->AddInbound(9, in.ctl());
  }
  ~Rig() { close(far); }
  void Write(uint32_t kind, uint32_t id, uint64_t seq, uint64_t value, const void* data = nullptr, size_t bytes = 0) {
    uint32_t h[8] = {0x74504659, kind, id, 0};
    std::memcpy(&h[4], &seq, 8);
    std::memcpy(&h[6], &value, 8);
    ASSERT_EQ(write(far, h, sizeof h), static_cast<ssize_t>(sizeof h));
    if (bytes > 0) ASSERT_EQ(write(far, data, bytes), static_cast<ssize_t>(bytes));
  }
  Status Poll() {
    bool moved = false;
    return proxy->Poll(&moved);
  }
  FifoGeom geom;
  Conn out, in;
  std::unique_ptr<FifoProxy> proxy;
  int far = -1;
};

TEST(FifoProxy, DeliversPiecesAndReturnsCredits) {
  for (Proto proto : {Proto::kSimple, Proto::kLL}) {
    Rig rig(proto);
    const char msg[] = "hello, proxy!";
    // A piece arrives in two parts: nothing is published until all of it is there.
    uint32_t h[8] = {0x74504659, 1, 9, 0xabcdef01u, 0, 0, sizeof msg, 0};
    ASSERT_EQ(write(rig.far, h, sizeof h), static_cast<ssize_t>(sizeof h));
    ASSERT_EQ(write(rig.far, msg, 5), 5);
    ASSERT_TRUE(rig.Poll().ok());
    EXPECT_EQ(LoadAcquire(&rig.in.ctl()->tail), 0u);
    ASSERT_EQ(write(rig.far, msg + 5, sizeof msg - 5), static_cast<ssize_t>(sizeof msg - 5));
    ASSERT_TRUE(rig.Poll().ok());
    char got[sizeof msg] = {};
    if (proto == Proto::kSimple) {
      EXPECT_EQ(LoadAcquire(&rig.in.ctl()->tail), 1u);
      EXPECT_EQ(SlotSizes(rig.in.ctl())[0], SizeWord(sizeof msg, 0xabcdef01u));  // the call tag too
      std::memcpy(got, Slot(rig.in.ctl(), rig.geom, 0), sizeof msg);
    } else {
      uint32_t bytes = 0, tag = 0;
      ASSERT_TRUE(LLHeader(rig.in.ctl(), rig.geom, 0, &bytes, &tag));
      EXPECT_EQ(bytes, sizeof msg);
      EXPECT_EQ(tag, 0xabcdef01u);
      ASSERT_TRUE(LLArrivedPart(Team{}, rig.in.ctl(), rig.geom, 0, sizeof msg));
      uint8_t words[64];
      LLUnpackPart(Team{}, rig.in.ctl(), rig.geom, 0, sizeof msg, words);
      std::memcpy(got, words, sizeof msg);
    }
    EXPECT_STREQ(got, msg);
    // The receiver consumes it: a credit of 1 goes back.
    StoreRelease(&rig.in.ctl()->head, 1);
    ASSERT_TRUE(rig.Poll().ok());
    uint32_t credit[8];
    ASSERT_EQ(read(rig.far, credit, sizeof credit), static_cast<ssize_t>(sizeof credit));
    EXPECT_EQ(credit[1], 2u);
    EXPECT_EQ(credit[2], 9u);
    EXPECT_EQ(credit[6], 1u);
  }
}

TEST(FifoProxy, ForwardsPublishedPiecesAndAppliesCredits) {
  Rig rig(Proto::kSimple);
  std::memcpy(Slot(rig.out.ctl(), rig.geom, 0), "abcd", 4);
  SlotSizes(rig.out.ctl())[0] = SizeWord(4, 0x5eed);
  StoreRelease(&rig.out.ctl()->tail, 1);
  ASSERT_TRUE(rig.Poll().ok());
  uint8_t buf[36];
  ASSERT_EQ(read(rig.far, buf, sizeof buf), static_cast<ssize_t>(sizeof buf));
  uint32_t kind, id, tag;
  uint64_t bytes;
  std::memcpy(&kind, buf + 4, 4);
  std::memcpy(&id, buf + 8, 4);
  std::memcpy(&tag, buf + 12, 4);
  std::memcpy(&bytes, buf + 24, 8);
  EXPECT_EQ(kind, 1u);
  EXPECT_EQ(id, 7u);
  EXPECT_EQ(tag, 0x5eedu);  // the call tag goes with the piece, apart from its size
  EXPECT_EQ(bytes, 4u);
  EXPECT_EQ(std::memcmp(buf + 32, "abcd", 4), 0);
  rig.Write(2, 7, 0, 1);
  ASSERT_TRUE(rig.Poll().ok());
  EXPECT_EQ(LoadAcquire(&rig.out.ctl()->head), 1u);
}

TEST(FifoProxy, MalformedMessagesAreProtocolErrors) {
  {
    Rig rig(Proto::kSimple);
    rig.Write(1, 8, 0, 4, "abcd", 4);  // unknown connection
    const Status st = rig.Poll();
    EXPECT_EQ(st.code(), Code::kProtocol);
    EXPECT_NE(st.message().find("proxy host 0 <-> host 1: a piece for unknown connection 8"), std::string::npos)
        << st.ToString();
  }
  {
    Rig rig(Proto::kSimple);
    rig.Write(1, 9, 1, 4, "abcd", 4);  // piece 1 before piece 0
    EXPECT_EQ(rig.Poll().code(), Code::kProtocol);
  }
  {
    Rig rig(Proto::kSimple);
    rig.Write(1, 9, 0, 65, nullptr, 0);  // larger than a slot
    EXPECT_EQ(rig.Poll().code(), Code::kProtocol);
  }
  {
    Rig rig(Proto::kSimple);  // two slots: a third piece before any was consumed
    for (uint64_t seq = 0; seq < 3; ++seq) rig.Write(1, 9, seq, 4, "abcd", 4);
    const Status st = rig.Poll();
    EXPECT_EQ(st.code(), Code::kProtocol);
    EXPECT_NE(st.message().find("piece 2 on connection 9 beyond the credits returned"), std::string::npos)
        << st.ToString();
  }
  {
    Rig rig(Proto::kSimple);
    rig.Write(2, 7, 0, 3);  // credit for pieces never sent
    EXPECT_EQ(rig.Poll().code(), Code::kProtocol);
  }
  {
    Rig rig(Proto::kSimple);
    const uint8_t junk[32] = {1, 2, 3};
    ASSERT_EQ(write(rig.far, junk, sizeof junk), 32);
    EXPECT_EQ(rig.Poll().code(), Code::kProtocol);
  }
}

// Two proxies over a real TCP connection on loopback: a piece out, its credit back.
TEST(FifoProxy, OverTcpLoopback) {
  const FifoGeom g{2, 64, Proto::kSimple};
  int port = 0;
  Result<int> listener = ListenTcp("127.0.0.1", 0, &port);
  ASSERT_TRUE(listener.ok()) << listener.status().ToString();
  Result<int> client = ConnectTcp("127.0.0.1", port, DeadlineIn(10));
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  const int server = accept(*listener, nullptr, nullptr);
  ASSERT_GE(server, 0);
  close(*listener);
  Conn send_side(g), recv_side(g);
  FifoProxy a(*client, g, "proxy host 0 <-> host 1"), b(server, g, "proxy host 1 <-> host 0");
  a.AddOutbound(3, send_side.ctl());
  b.AddInbound(3, recv_side.ctl());
  std::memcpy(Slot(send_side.ctl(), g, 0), "0123456789abcdef", 16);
  SlotSizes(send_side.ctl())[0] = 16;
  StoreRelease(&send_side.ctl()->tail, 1);
  const Clock::time_point deadline = DeadlineIn(10);
  bool m = false;
  while (LoadAcquire(&recv_side.ctl()->tail) < 1 && Clock::now() < deadline) {
    ASSERT_TRUE(a.Poll(&m).ok());
    ASSERT_TRUE(b.Poll(&m).ok());
  }
  ASSERT_EQ(LoadAcquire(&recv_side.ctl()->tail), 1u);
  EXPECT_EQ(std::memcmp(Slot(recv_side.ctl(), g, 0), "0123456789abcdef", 16), 0);
  StoreRelease(&recv_side.ctl()->head, 1);
  while (LoadAcquire(&send_side.ctl()->head) < 1 && Clock::now() < deadline) {
    ASSERT_TRUE(b.Poll(&m).ok());
    ASSERT_TRUE(a.Poll(&m).ok());
  }
  EXPECT_EQ(LoadAcquire(&send_side.ctl()->head), 1u);
}

TEST(FifoProxy, AClosedLinkIsARemoteError) {
  Rig rig(Proto::kSimple);
  close(rig.far);
  rig.far = -1;
  const Status st = rig.Poll();
  EXPECT_EQ(st.code(), Code::kRemoteError);
  EXPECT_NE(st.message().find("closed"), std::string::npos) << st.ToString();
}

}  // namespace
}  // namespace tutti::prims
