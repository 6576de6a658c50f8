#include <gtest/gtest.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <set>
#include <thread>

#include "transport/tcp/tcp_bootstrap.h"
#include "transport/tcp/tcp_connection.h"
#include "transport/tcp/tcp_context.h"
#include "transport/test_sink.h"

namespace tutti {
namespace {

struct Pair {
  std::unique_ptr<TcpConnection> a, b;  // a is rank 0, b is rank 1
};

Pair Connect(int nsocks, TcpOptions opts = {}) {
  auto l = TcpListener::Open("");
  EXPECT_TRUE(l.ok()) << l.status().ToString();
  TcpHandshake h0{42, 0, "s3cret", nsocks}, h1{42, 1, "s3cret", nsocks};
  std::vector<int> fds1;
  std::thread t([&] {
    auto r = ConnectToPeer((*l)->local_address(), 0, h1, DeadlineIn(5));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    fds1 = *r;
  });
  auto got = (*l)->Accept(h0, {1}, DeadlineIn(5));
  t.join();
  EXPECT_TRUE(got.ok()) << got.status().ToString();
  Pair p;
  p.a = std::move(*TcpConnection::Make(1, (*got)[1], opts));
  p.b = std::move(*TcpConnection::Make(0, fds1, opts));
  return p;
}

void Pump(Pair& p, RecordingSink& sa, RecordingSink& sb, size_t want_b) {
  for (int i = 0; i < 200000 && sb.frames.size() < want_b; ++i) {
    ASSERT_TRUE(p.a->Progress(sa).ok());
    ASSERT_TRUE(p.b->Progress(sb).ok());
  }
}

TEST(Tcp, ControlFramesStayInOrderAndBulkSpreads) {
  Pair p = Connect(3);
  RecordingSink sa, sb;
  std::string big(5 << 20, 'q');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 7);
  const size_t piece = 1 << 20;
  std::vector<std::string> msgs;
  for (int i = 0; i < 20; ++i) msgs.push_back("msg" + std::to_string(i));
  for (int i = 0; i < 20; ++i) {
    const std::string& s = msgs[i];
    ASSERT_TRUE(p.a->Enqueue(MakeHeader(TestFrame::kData, i, s.size(), s.size()), s.data(), 0).ok());
  }
  for (size_t off = 0; off < big.size(); off += piece)
    ASSERT_TRUE(p.a->Enqueue(MakeHeader(TestFrame::kBulk, 99, off, piece), big.data() + off, off + 1).ok());
  Pump(p, sa, sb, 25);
  ASSERT_EQ(sb.frames.size(), 25u);
  int data_seen = 0;
  std::string rebuilt(big.size(), '\0');
  for (auto& f : sb.frames) {
    if (f.h.type == TestFrame::kData) {
      EXPECT_EQ(f.payload, "msg" + std::to_string(data_seen));
      ++data_seen;
    } else {
      memcpy(rebuilt.data() + f.h.arg, f.payload.data(), f.payload.size());
    }
  }
  EXPECT_EQ(data_seen, 20);
  EXPECT_EQ(rebuilt, big);
  EXPECT_EQ(sa.sent.size(), 5u);
}

// Reads ask for up to 16 KiB at once (a small frame comes in one system call, and frames that
// follow are read ahead): frames on both sides of that size, empty ones, many small ones back to
// back, and payloads that start inside a read-ahead and end after it all arrive whole, in order.
TEST(Tcp, FramesAroundTheReadAheadSizeArriveWhole) {
  Pair p = Connect(1);
  RecordingSink sa, sb;
  const size_t ahead = 16 << 10, hdr = kFrameHeaderSize;
  std::vector<size_t> sizes = {0, 1, 8, 0, ahead - hdr - 1, ahead - hdr, ahead - hdr + 1, ahead - 1, ahead,
                               ahead + 1, 3, 2 * ahead + 5, 0, 1 << 20, 7};
  for (int i = 0; i < 300; ++i) sizes.push_back(static_cast<size_t>(i % 37));
  std::vector<std::string> payloads;
  for (size_t i = 0; i < sizes.size(); ++i) {
    std::string s(sizes[i], '\0');
    for (size_t k = 0; k < s.size(); ++k) s[k] = static_cast<char>(k * 13 + i);
    payloads.push_back(std::move(s));
  }
  for (size_t i = 0; i < payloads.size(); ++i)
    ASSERT_TRUE(
        p.a->Enqueue(MakeHeader(TestFrame::kData, i, payloads[i].size(), payloads[i].size()), payloads[i].data(), 0)
            .ok());
  Pump(p, sa, sb, payloads.size());
  ASSERT_EQ(sb.frames.size(), payloads.size());
  for (size_t i = 0; i < payloads.size(); ++i) {
    EXPECT_EQ(sb.frames[i].h.id, i);
    EXPECT_EQ(sb.frames[i].payload, payloads[i]) << "frame " << i << " of " << sizes[i] << " bytes";
  }
}

// A pass whose read runs past the read budget still hands on every frame it read ahead: bytes
// left in the read-ahead show on no wait fd, so a progress context would not name the
// connection again (with the peer silent, never).
TEST(Tcp, APassThatSpendsItsBudgetLeavesNothingReadAhead) {
  TcpOptions tiny;
  tiny.read_budget = 1;
  Pair p = Connect(1, tiny), idle = Connect(1, tiny);
  TcpContext ctx;  // two connections: the context asks epoll which ones to read
  ctx.Attach(p.a.get());
  ctx.Attach(idle.a.get());
  RecordingSink sa, sb;
  for (uint64_t i = 0; i < 5; ++i) {
    const std::string s = "frame" + std::to_string(i);
    ASSERT_TRUE(p.b->Enqueue(MakeHeader(TestFrame::kData, i, s.size(), s.size()), s.data(), 0).ok());
  }
  for (int i = 0; i < 1000 && p.b->queued_bytes() > 0; ++i) ASSERT_TRUE(p.b->Progress(sb).ok());
  ASSERT_EQ(p.b->queued_bytes(), 0u);
  // Every pass the context asks for, until it names the connection no more.
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (sa.frames.size() < 5 && std::chrono::steady_clock::now() < until) {
    std::vector<Connection*> ready;
    ctx.Ready(&ready);
    for (Connection* c : ready) ASSERT_TRUE(c->Progress(sa).ok());
    if (ready.empty()) std::this_thread::yield();
  }
  ASSERT_EQ(sa.frames.size(), 5u);
  for (uint64_t i = 0; i < 5; ++i) EXPECT_EQ(sa.frames[i].payload, "frame" + std::to_string(i));
  EXPECT_FALSE(p.a->HasLocalWork());
}

// After ReleaseBuffers the queued frames' buffers may be freed: nothing more is read from them,
// a frame already partly written is finished with zeros, and later frames still arrive framed.
TEST(Tcp, ReleasedBuffersAreNeverReadAgain) {
  Pair p = Connect(1);
  RecordingSink sa, sb;
  const size_t len = 2 << 20;
  std::vector<std::unique_ptr<char[]>> bufs;
  for (int i = 0; i < 4; ++i) {
    bufs.emplace_back(new char[len]);
    memset(bufs.back().get(), 'a' + i, len);
    ASSERT_TRUE(p.a->Enqueue(MakeHeader(TestFrame::kBulk, 7, i * len, len), bufs.back().get(), i + 1).ok());
  }
  ASSERT_TRUE(p.a->Progress(sa).ok());  // the socket buffer takes part of it; b reads nothing yet
  ASSERT_GT(p.a->queued_bytes(), 0u);
  p.a->ReleaseBuffers();
  for (auto& b : bufs) memset(b.get(), 0xAB, len);
  bufs.clear();  // freed: AddressSanitizer reports any later read
  ASSERT_TRUE(p.a->Enqueue(MakeHeader(TestFrame::kPing, 0, 0, 0), nullptr, 0).ok());
  for (int i = 0; i < 200000 && (sb.frames.empty() || sb.frames.back().h.type != TestFrame::kPing); ++i) {
    ASSERT_TRUE(p.a->Progress(sa).ok());
    ASSERT_TRUE(p.b->Progress(sb).ok());
  }
  ASSERT_FALSE(sb.frames.empty());
  EXPECT_EQ(int{sb.frames.back().h.type}, int{TestFrame::kPing});
  ASSERT_LT(sb.frames.size(), 5u);  // some bulk frames were forgotten
  for (size_t f = 0; f + 1 < sb.frames.size(); ++f) {
    const std::string& got = sb.frames[f].payload;
    ASSERT_EQ(got.size(), len);
    size_t i = 0;
    while (i < len && got[i] == static_cast<char>('a' + f)) ++i;
    while (i < len && got[i] == 0) ++i;
    EXPECT_EQ(i, len) << "frame " << f << ": byte " << i << " is neither the data nor zero";
  }
  EXPECT_EQ(p.a->queued_bytes(), 0u);
}

// Writes one whole frame onto the sender's socket `index` behind its connection's back.
void WriteFrameOn(TcpConnection& from, size_t index, FrameHeader h, const std::string& payload) {
  std::vector<int> fds;
  from.AppendWaitFds(&fds);
  ASSERT_LT(index, fds.size());
  h.payload_len = payload.size();
  std::string bytes(reinterpret_cast<const char*>(&h), kFrameHeaderSize);
  bytes += payload;
  ASSERT_EQ(send(fds[index], bytes.data(), bytes.size(), MSG_NOSIGNAL), static_cast<ssize_t>(bytes.size()));
  usleep(20000);  // (loopback: the bytes are in the receiver's socket well before this returns)
}

// Passes of `c` until it delivered `want` frames (at most `limit`; limit + 1 if it did not).
int PassesUntil(TcpConnection& c, RecordingSink& sink, size_t want, int limit) {
  for (int i = 1; i <= limit; ++i) {
    EXPECT_TRUE(c.Progress(sink).ok());
    if (sink.frames.size() >= want) return i;
  }
  return limit + 1;
}

TEST(Tcp, AnIdleBulkSocketIsStillReadEverySixteenPasses) {
  Pair p = Connect(2);
  RecordingSink sb;
  // Idle runs of different lengths leave the back-off at different points of its cycle: the
  // frame must come within 16 passes from each of them.
  for (int k = 0; k < 12; ++k) {
    EXPECT_EQ(PassesUntil(*p.b, sb, 2 * k + 1, 40 + 11 * k), 41 + 11 * k);  // idle: it backs off
    WriteFrameOn(*p.a, 1, MakeHeader(TestFrame::kBulk, 5, k, 0), "late bulk " + std::to_string(k));
    EXPECT_LE(PassesUntil(*p.b, sb, 2 * k + 1, 16), 16) << "after " << 40 + 11 * k << " idle passes";
    ASSERT_EQ(sb.frames.size(), 2u * k + 1);
    EXPECT_EQ(sb.frames.back().payload, "late bulk " + std::to_string(k));
    // Once it has data it is read every pass again.
    WriteFrameOn(*p.a, 1, MakeHeader(TestFrame::kBulk, 5, 100 + k, 0), "next");
    EXPECT_EQ(PassesUntil(*p.b, sb, 2 * k + 2, 16), 1);
  }
}

TEST(Tcp, WhileBulkBytesAreOwedTheBulkSocketsAreReadEveryPass) {
  Pair p = Connect(3);
  RecordingSink sa, sb;
  EXPECT_EQ(PassesUntil(*p.b, sb, 1, 500), 501);
  // The protocol asks the peer for 20 bytes: 20 bulk bytes are owed.
  p.b->ExpectBulk(0);  // (nothing owed: the sockets stay idle)
  EXPECT_EQ(PassesUntil(*p.b, sb, 1, 40), 41);
  p.b->ExpectBulk(20);
  EXPECT_EQ(PassesUntil(*p.b, sb, 1, 100), 101);  // (idle, but owed: no back-off)
  const std::string part1 = "first 12 by", part2 = "tes+8 more";  // 11 + 9 = 20
  WriteFrameOn(*p.a, 2, MakeHeader(TestFrame::kBulk, 5, 0, 0), part1);
  EXPECT_EQ(PassesUntil(*p.b, sb, 1, 16), 1);
  EXPECT_EQ(PassesUntil(*p.b, sb, 2, 100), 101);  // 9 bytes still owed
  WriteFrameOn(*p.a, 1, MakeHeader(TestFrame::kBulk, 5, 11, 0), part2);
  EXPECT_EQ(PassesUntil(*p.b, sb, 2, 16), 1);
  ASSERT_EQ(sb.frames.size(), 2u);
  EXPECT_EQ(sb.frames[0].payload + sb.frames[1].payload, part1 + part2);
  // Nothing owed now: an idle bulk socket backs off again (and is still read).
  EXPECT_EQ(PassesUntil(*p.b, sb, 3, 40), 41);
  WriteFrameOn(*p.a, 1, MakeHeader(TestFrame::kBulk, 6, 0, 0), "after");
  EXPECT_LE(PassesUntil(*p.b, sb, 3, 16), 16);
}

TEST(TcpHello, AnotherProtocolVersionSaysSo) {
  TcpHandshake hs;
  hs.comm_id = 7;
  hs.secret = "s";
  const std::string bytes = EncodeTcpHello(hs, 1, 0);
  TcpHello h;
  ASSERT_GE(bytes.size(), sizeof(h));
  std::memcpy(&h, bytes.data(), sizeof(h));
  EXPECT_TRUE(CheckTcpHelloHeader(h).ok());
  h.version -= 1;  // an older build
  Status st = CheckTcpHelloHeader(h);
  EXPECT_EQ(st.code(), Code::kProtocol);
  EXPECT_NE(st.message().find("different builds"), std::string::npos) << st.ToString();
  h.magic = 0;
  EXPECT_EQ(CheckTcpHelloHeader(h).message().find("different builds"), std::string::npos);
}

TEST(Tcp, PeerCloseIsAnError) {
  Pair p = Connect(1);
  RecordingSink sa;
  p.b->Close();
  Status st;
  for (int i = 0; i < 1000 && st.ok(); ++i) {
    auto r = p.a->Progress(sa);
    st = r.status();
    usleep(1000);
  }
  EXPECT_EQ(st.code(), Code::kRemoteError);
  EXPECT_NE(st.message().find("rank 1"), std::string::npos);
}

TEST(Tcp, MalformedFrameIsAProtocolError) {
  Pair p = Connect(1);
  RecordingSink sa, sb;
  FrameHeader h = MakeHeader(TestFrame::kData, 1, 1ull << 40, 1ull << 40);  // 1 TiB "eager"
  std::vector<int> fds;
  p.a->AppendWaitFds(&fds);
  ASSERT_EQ(write(fds[0], &h, sizeof(h)), static_cast<ssize_t>(sizeof(h)));
  Status st;
  for (int i = 0; i < 1000 && st.ok(); ++i) st = p.b->Progress(sb).status();
  EXPECT_EQ(st.code(), Code::kProtocol);
}

TEST(Tcp, WrongSecretIsRefused) {
  auto l = TcpListener::Open("");
  ASSERT_TRUE(l.ok());
  TcpHandshake good{7, 1, "right", 1}, bad{7, 1, "wrong", 1}, me{7, 0, "right", 1};
  std::thread t([&] {
    auto stray = ConnectToPeer((*l)->local_address(), 0, bad, DeadlineIn(5));
    ASSERT_TRUE(stray.ok());
    char c;
    // The acceptor closes the stray connection: read sees EOF (or a reset).
    EXPECT_LE(read((*stray)[0], &c, 1), 0);
    close((*stray)[0]);
    auto ok = ConnectToPeer((*l)->local_address(), 0, good, DeadlineIn(5));
    ASSERT_TRUE(ok.ok());
    close((*ok)[0]);
  });
  int refused = 0;
  auto got = (*l)->Accept(me, {1}, DeadlineIn(5), &refused);
  t.join();
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(refused, 1);
  close((*got)[1][0]);
}

TEST(Tcp, AcceptTimesOutNamingMissingRanks) {
  auto l = TcpListener::Open("");
  ASSERT_TRUE(l.ok());
  TcpHandshake me{7, 0, "", 1};
  auto got = (*l)->Accept(me, {2, 3}, DeadlineIn(0.2));
  ASSERT_EQ(got.status().code(), Code::kTimeout);
  EXPECT_NE(got.status().message().find("2, 3"), std::string::npos);
}

// One epoll set finds the connections with work: data arrived, output queued, the peer gone.
TEST(TcpContext, ReadyNamesExactlyTheConnectionsWithWork) {
  std::vector<Pair> pairs;
  for (int i = 0; i < 6; ++i) pairs.push_back(Connect(i % 2 ? 2 : 1));
  TcpContext ctx;
  for (Pair& p : pairs) ctx.Attach(p.a.get());
  auto ready = [&] {
    std::vector<Connection*> r;
    ctx.Ready(&r);
    return std::set<Connection*>(r.begin(), r.end());
  };
  auto wait_ready = [&] {  // until something shows up (bounded: a loaded machine is slow)
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (ready().empty() && std::chrono::steady_clock::now() < until) std::this_thread::yield();
  };
  EXPECT_TRUE(ready().empty());
  // Data from peer 2.
  const std::string msg = "hello";
  ASSERT_TRUE(pairs[2].b->Enqueue(MakeHeader(TestFrame::kData, 1, msg.size(), msg.size()), msg.data(), 0).ok());
  RecordingSink sb, sa;
  for (int i = 0; i < 1000 && pairs[2].b->queued_bytes() > 0; ++i) ASSERT_TRUE(pairs[2].b->Progress(sb).ok());
  wait_ready();
  EXPECT_EQ(ready(), std::set<Connection*>{pairs[2].a.get()});
  // Output queued on connection 4: more than the socket takes at once (Enqueue writes what it can).
  const std::string big(pairs[4].a->max_payload(), 'x');
  for (uint64_t off = 0; off < (uint64_t{256} << 20) && pairs[4].a->queued_bytes() == 0; off += big.size())
    ASSERT_TRUE(pairs[4].a->Enqueue(MakeHeader(TestFrame::kBulk, 9, off, big.size()), big.data(), 0).ok());
  ASSERT_GT(pairs[4].a->queued_bytes(), 0u);
  EXPECT_EQ(ready(), (std::set<Connection*>{pairs[2].a.get(), pairs[4].a.get()}));
  // Reading the data and writing the output leaves nothing to do.
  for (int i = 0; i < 1000 && sa.frames.empty(); ++i) ASSERT_TRUE(pairs[2].a->Progress(sa).ok());
  ASSERT_EQ(sa.frames.size(), 1u);
  RecordingSink s4;
  for (int i = 0; i < 1000000 && pairs[4].a->queued_bytes() > 0; ++i) {
    ASSERT_TRUE(pairs[4].a->Progress(sa).ok());
    ASSERT_TRUE(pairs[4].b->Progress(s4).ok());  // the peer drains its socket
  }
  ASSERT_EQ(pairs[4].a->queued_bytes(), 0u);
  EXPECT_TRUE(ready().empty());
  // Peer 5 goes away: its end shows up, and Progress reports it.
  pairs[5].b->Close();
  wait_ready();
  EXPECT_EQ(ready(), std::set<Connection*>{pairs[5].a.get()});
  bool failed = false;
  for (int i = 0; i < 1000 && !failed; ++i) failed = !pairs[5].a->Progress(sa).ok();
  EXPECT_TRUE(failed);
}

TEST(TcpContext, AControlFrameLeftQueuedIsWork) {
  // A frame that is only a header (ACK, CTS) and finds the socket full stays queued: the
  // connection has output and must be named, or it waits for input that may never come (the
  // peer may be waiting for that very ACK).
  std::vector<Pair> pairs;
  for (int i = 0; i < 6; ++i) pairs.push_back(Connect(1));
  TcpContext ctx;
  for (Pair& p : pairs) ctx.Attach(p.a.get());
  std::vector<int> fds;
  pairs[3].a->AppendWaitFds(&fds);
  ASSERT_EQ(fds.size(), 1u);
  const std::string junk(1 << 16, 'j');  // fills the socket behind the connection's back
  for (int i = 0; i < 100000 && write(fds[0], junk.data(), junk.size()) > 0; ++i) {
  }
  ASSERT_TRUE(pairs[3].a->Enqueue(MakeHeader(TestFrame::kAck, 7, 0, 0), nullptr, 0).ok());
  EXPECT_EQ(pairs[3].a->queued_bytes(), kFrameHeaderSize);
  std::vector<Connection*> r;
  ctx.Ready(&r);
  EXPECT_EQ(r, std::vector<Connection*>{pairs[3].a.get()});
}

TEST(TcpContext, AFrameSentButNotReportedIsWork) {
  // A frame written whole at Enqueue leaves nothing queued, but its OnSent is still to be
  // reported (a collective's eager send completes by it): the connection must be named.
  std::vector<Pair> pairs;
  for (int i = 0; i < 6; ++i) pairs.push_back(Connect(1));
  TcpContext ctx;
  for (Pair& p : pairs) ctx.Attach(p.a.get());
  const std::string payload(64, 'p');
  ASSERT_TRUE(pairs[2].a->Enqueue(MakeHeader(TestFrame::kPost, 5, 64, 64, -3), payload.data(), 5).ok());
  EXPECT_EQ(pairs[2].a->queued_bytes(), 0u);
  std::vector<Connection*> r;
  ctx.Ready(&r);
  EXPECT_EQ(r, std::vector<Connection*>{pairs[2].a.get()});
  RecordingSink sink;
  ASSERT_TRUE(pairs[2].a->Progress(sink).ok());
  EXPECT_EQ(sink.sent, std::vector<uint64_t>{5});
  r.clear();
  ctx.Ready(&r);
  EXPECT_TRUE(r.empty());
}

TEST(TcpContext, FewConnectionsAreAllNamed) {
  std::vector<Pair> pairs;
  for (size_t i = 0; i < TcpContext::kPollEachUpTo; ++i) pairs.push_back(Connect(1));
  TcpContext ctx;
  for (Pair& p : pairs) ctx.Attach(p.a.get());
  std::vector<Connection*> r;
  ctx.Ready(&r);
  EXPECT_EQ(r.size(), TcpContext::kPollEachUpTo);
}

// Bytes waiting to be read on each of c's sockets, once `total` bytes arrived (bounded wait).
std::vector<int> WaitingBytes(TcpConnection& c, size_t total) {
  std::vector<int> fds;
  c.AppendWaitFds(&fds);
  std::vector<int> n(fds.size());
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < until) {
    size_t sum = 0;
    for (size_t i = 0; i < fds.size(); ++i) {
      n[i] = 0;
      ioctl(fds[i], FIONREAD, &n[i]);
      sum += static_cast<size_t>(n[i]);
    }
    if (sum >= total) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return n;
}

// Between hosts bulk pieces keep off the control socket (a piece there would hold up the small
// frames behind it for as long as the link takes to send it); on one host they go on every
// socket. The peer's address decides by default: a loopback pair is on one host.
TEST(Tcp, BulkPiecesKeepOffTheControlSocketBetweenHosts) {
  const size_t piece = 16 << 10, pieces = 4;  // all of it fits the peer's receive buffer
  const std::string data(piece, 'b');
  for (int on_control : {0, 1, -1}) {
    SCOPED_TRACE(on_control);
    TcpOptions o;
    o.bulk_on_control = on_control;
    Pair p = Connect(2, o);
    RecordingSink sa, sb;
    for (size_t k = 0; k < pieces; ++k)
      ASSERT_TRUE(p.a->Enqueue(MakeHeader(TestFrame::kBulk, 5, k * piece, piece), data.data(), k + 1).ok());
    for (int i = 0; i < 100000 && p.a->queued_bytes() > 0; ++i) ASSERT_TRUE(p.a->Progress(sa).ok());
    ASSERT_EQ(p.a->queued_bytes(), 0u);
    const std::vector<int> n = WaitingBytes(*p.b, pieces * (kFrameHeaderSize + piece));
    ASSERT_EQ(n.size(), 2u);
    EXPECT_EQ(static_cast<size_t>(n[0] + n[1]), pieces * (kFrameHeaderSize + piece));
    if (on_control == 0) {
      EXPECT_EQ(n[0], 0) << "a bulk piece went on the control socket";
    } else {  // (sockets the kernel took everything from tie: the first gets the piece)
      EXPECT_GT(n[0], 0) << "no bulk piece on the control socket";
    }
    Pump(p, sa, sb, pieces);
    EXPECT_EQ(sb.frames.size(), pieces);
  }
}

// Waits (bounded) until connection c's first socket has bytes to read.
bool ReadableSoon(TcpConnection& c) {
  std::vector<int> fds;
  c.AppendWaitFds(&fds);
  pollfd pfd{fds.at(0), POLLIN, 0};
  return poll(&pfd, 1, 10000) == 1;
}

// A peer that leaves says why (its last frame) and then its end goes away; a write of ours can
// meet the reset before we read that frame. The frame is handed on before the write's error, so
// the protocol learns the peer's reason (which rank died), not only that a send failed.
TEST(Tcp, WhatThePeerSaidBeforeItLeftComesBeforeTheWriteError) {
  Pair p = Connect(2);
  p.a->UseReadHints();  // named for its output only (no socket marked readable): no reads but on error
  RecordingSink sa, sb;
  const std::string bye = "rank 1 died";
  ASSERT_TRUE(p.b->Enqueue(MakeHeader(TestFrame::kClose, 0, bye.size(), bye.size()), bye.data(), 0).ok());
  for (int i = 0; i < 1000 && p.b->queued_bytes() > 0; ++i) ASSERT_TRUE(p.b->Progress(sb).ok());
  ASSERT_TRUE(ReadableSoon(*p.a));
  // Its end goes away with our next bytes unread: they get a reset, and later writes fail.
  std::vector<int> bfds;
  p.b->AppendWaitFds(&bfds);
  for (int fd : bfds) {
    linger l{1, 0};  // close with a reset
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
    shutdown(fd, SHUT_RDWR);
  }
  p.b.reset();
  const std::string big(1 << 20, 'x');
  Status failed;
  for (int k = 0; k < 256 && failed.ok(); ++k) {
    ASSERT_TRUE(p.a->Enqueue(MakeHeader(TestFrame::kData, 9 + k, big.size(), big.size()), big.data(), 0).ok());
    for (int i = 0; i < 50 && failed.ok() && p.a->queued_bytes() > 0; ++i) {
      Result<bool> r = p.a->Progress(sa);
      if (!r.ok()) failed = r.status();
    }
  }
  ASSERT_FALSE(failed.ok()) << "writing to a peer that reset its end kept succeeding";
  ASSERT_FALSE(sa.frames.empty()) << "the peer's last frame was not handed on: " << failed.ToString();
  EXPECT_EQ(sa.frames[0].payload, bye);
}

// With read hints a connection named for its output alone (a frame it sent, to report) makes no
// recv: what arrived meanwhile waits for the pass in which epoll names its socket.
TEST(TcpContext, AConnectionNamedForItsOutputAloneReadsNothing) {
  std::vector<Pair> pairs;
  for (size_t i = 0; i <= TcpContext::kPollEachUpTo; ++i) pairs.push_back(Connect(2));
  TcpContext ctx;
  for (Pair& p : pairs) ctx.Attach(p.a.get());
  TcpConnection& a = *pairs[0].a;
  const std::string out(32, 'o'), in = "from b";
  ASSERT_TRUE(a.Enqueue(MakeHeader(TestFrame::kPost, 1, out.size(), out.size(), -3), out.data(), 11).ok());
  std::vector<Connection*> r;
  ctx.Ready(&r);
  ASSERT_EQ(r, std::vector<Connection*>{&a});  // its output only: nothing came in yet
  RecordingSink sb, sa;
  ASSERT_TRUE(pairs[0].b->Enqueue(MakeHeader(TestFrame::kData, 2, in.size(), in.size()), in.data(), 0).ok());
  for (int i = 0; i < 1000 && pairs[0].b->queued_bytes() > 0; ++i) ASSERT_TRUE(pairs[0].b->Progress(sb).ok());
  ASSERT_TRUE(ReadableSoon(a));
  ASSERT_TRUE(a.Progress(sa).ok());
  EXPECT_EQ(sa.sent, std::vector<uint64_t>{11});
  EXPECT_TRUE(sa.frames.empty());  // not read: epoll had not named the socket
  // The next pass names it for its input, and the frame is read.
  r.clear();
  ctx.Ready(&r);
  ASSERT_EQ(r, std::vector<Connection*>{&a});
  ASSERT_TRUE(a.Progress(sa).ok());
  ASSERT_EQ(sa.frames.size(), 1u);
  EXPECT_EQ(sa.frames[0].payload, in);
  // A pass that asks no poll (one connection: every socket counts as readable) reads too.
  TcpContext one;
  Pair q = Connect(1);
  one.Attach(q.a.get());
  ASSERT_TRUE(q.b->Enqueue(MakeHeader(TestFrame::kData, 3, in.size(), in.size()), in.data(), 0).ok());
  for (int i = 0; i < 1000 && q.b->queued_bytes() > 0; ++i) ASSERT_TRUE(q.b->Progress(sb).ok());
  ASSERT_TRUE(ReadableSoon(*q.a));
  RecordingSink sq;
  r.clear();
  one.Ready(&r);
  ASSERT_EQ(r, std::vector<Connection*>{q.a.get()});
  ASSERT_TRUE(q.a->Progress(sq).ok());
  EXPECT_EQ(sq.frames.size(), 1u);
}

}  // namespace
}  // namespace tutti
