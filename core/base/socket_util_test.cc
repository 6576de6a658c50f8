#include "core/base/socket_util.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

namespace tutti {
namespace {

std::vector<Interface> Fake() {
  return {{"lo", "127.0.0.1", true}, {"eth0", "10.0.0.5", false}, {"eth1", "10.0.1.5", false},
          {"docker0", "172.17.0.1", false}, {"ib0", "10.1.0.5", false}};
}

std::vector<std::string> Names(const std::vector<Interface>& v) {
  std::vector<std::string> out;
  for (auto& i : v) out.push_back(i.name);
  return out;
}

TEST(SocketIfname, NcclSyntax) {
  using V = std::vector<std::string>;
  EXPECT_EQ(Names(SelectInterfaces(Fake(), "")), (V{"eth0", "eth1", "docker0", "ib0", "lo"}));
  EXPECT_EQ(Names(SelectInterfaces(Fake(), "eth")), (V{"eth0", "eth1"}));
  EXPECT_EQ(Names(SelectInterfaces(Fake(), "ib,eth1")), (V{"eth1", "ib0"}));
  EXPECT_EQ(Names(SelectInterfaces(Fake(), "^docker,lo")), (V{"eth0", "eth1", "ib0"}));
  EXPECT_EQ(Names(SelectInterfaces(Fake(), "=eth")), V{});
  EXPECT_EQ(Names(SelectInterfaces(Fake(), "=eth1")), (V{"eth1"}));
  EXPECT_EQ(Names(SelectInterfaces(Fake(), "^=eth1")), (V{"lo", "eth0", "docker0", "ib0"}));
}

TEST(SocketAddress, SplitAndJoin) {
  auto r = SplitHostPort("10.0.0.1:29500");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->first, "10.0.0.1");
  EXPECT_EQ(r->second, 29500);
  auto v6 = SplitHostPort(JoinHostPort("::1", 80));
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->first, "::1");
  EXPECT_FALSE(SplitHostPort("nohost").ok());
  EXPECT_FALSE(SplitHostPort("h:99999").ok());
  EXPECT_FALSE(SplitHostPort("h:12x").ok());
}

TEST(SocketConnect, RefusedPortTimesOut) {
  int port = 0;
  auto fd = ListenTcp("127.0.0.1", 0, &port);
  ASSERT_TRUE(fd.ok());
  close(*fd);  // nothing listens there now
  auto c = ConnectTcp("127.0.0.1", port, DeadlineIn(0.2));
  EXPECT_FALSE(c.ok());
}

TEST(SocketConnect, OnceGivesANonBlockingFdAndPeersSeeEachOther) {
  int port = 0;
  auto l = ListenTcp("127.0.0.1", 0, &port);
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(*LocalPort(*l), port);
  auto c = ConnectTcpOnce("127.0.0.1", port, DeadlineIn(2));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_NE(fcntl(*c, F_GETFL) & O_NONBLOCK, 0);
  ASSERT_TRUE(*WaitReadable(*l, DeadlineIn(2)));
  int s = accept(*l, nullptr, nullptr);
  ASSERT_GE(s, 0);
  EXPECT_EQ(PeerName(s), JoinHostPort("127.0.0.1", *LocalPort(*c)));
  EXPECT_TRUE(SetNoDelay(s).ok());
  EXPECT_FALSE(*WaitReadable(s, DeadlineIn(0.05)));
  ASSERT_TRUE(WriteFull(*c, "hi", 2, DeadlineIn(2)).ok());
  char buf[2];
  ASSERT_TRUE(ReadFull(s, buf, 2, DeadlineIn(2)).ok());
  EXPECT_EQ(std::string(buf, 2), "hi");
  EXPECT_EQ(ReadFull(s, buf, 1, DeadlineIn(0.05)).code(), Code::kTimeout);
  close(*c);
  EXPECT_EQ(ReadFull(s, buf, 1, DeadlineIn(2)).code(), Code::kRemoteError);
  // Writing into a connection the peer closed ends in a reset or a broken pipe: kRemoteError.
  Status st;
  std::string chunk(1 << 16, 'x');
  for (int i = 0; i < 100 && st.ok(); ++i) st = WriteFull(s, chunk.data(), chunk.size(), DeadlineIn(2));
  EXPECT_EQ(st.code(), Code::kRemoteError) << st.ToString();
  close(s);
  close(*l);
  EXPECT_EQ(ConnectTcpOnce("127.0.0.1", 70000, DeadlineIn(1)).status().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace tutti
