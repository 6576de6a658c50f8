// TCP connection to one peer over several sockets.
//
// Socket 0 carries every frame except bulk pieces, so frames that the protocol orders stay in
// order; bulk pieces (which name their message and offset) go to whichever socket has the least
// queued, so a large message is spread over all sockets. Sockets are non-blocking; payloads are
// written from and read into the protocol's buffers directly.
#pragma once

#include <deque>
#include <memory>
#include <vector>

#include "transport/transport.h"

namespace tutti {

struct TcpOptions {
  size_t max_payload = 2 << 20;  // bulk piece / eager limit the transport accepts
  // Bytes read from one socket per Progress, for fairness between peers (a read that passes it
  // still has what it read ahead handed on in the same pass).
  size_t read_budget = 8 << 20;
  // Whether bulk pieces may go on the control socket (socket 0) too: -1 decides by the peer's
  // address (yes when it is this host's: see TcpConnection::BulkSocket), 0 no, 1 yes.
  int bulk_on_control = -1;
};

class TcpConnection : public Connection {
 public:
  // Takes ownership of connected sockets (handshake done); fds[0] is the control socket.
  static Result<std::unique_ptr<TcpConnection>> Make(int peer, std::vector<int> fds,
                                                     const TcpOptions& opts);
  ~TcpConnection() override { Close(); }

  const char* name() const override { return "tcp"; }
  Status Enqueue(const FrameHeader& h, const void* payload, uint64_t cookie) override;
  Result<bool> Progress(FrameSink& sink) override;
  size_t max_payload() const override { return opts_.max_payload; }
  void ExpectBulk(uint64_t bytes) override;
  size_t queued_bytes() const override { return queued_bytes_; }
  // Also bytes kept in a read-ahead, which no wait fd shows (a pass normally leaves none).
  bool HasLocalWork() const override {
    for (const Sock& s : socks_)
      if (s.rpos < s.rlen) return true;
    return Connection::HasLocalWork();
  }
  void AppendWaitFds(std::vector<int>* fds) const override;
  // Read hints, from a context that asks epoll which sockets have something (TcpContext): once
  // UseReadHints was called, a Progress reads a socket (a system call) only when the context
  // marked it readable since the last Progress (MarkReadable, by its index in AppendWaitFds'
  // order) or marked every socket (MarkAllReadable, for a pass that asked no poll); otherwise it
  // only hands on what it read ahead earlier. A connection named for its output alone (a send to
  // a peer that sends nothing back: the root of a broadcast) so makes no recv that finds nothing.
  void UseReadHints() { hinted_ = true; }
  void MarkReadable(size_t sock) {
    if (sock < socks_.size()) socks_[sock].readable = true;
  }
  void MarkAllReadable() { all_readable_ = true; }
  void ReleaseBuffers() override;
  void Close() override;

 private:
  struct Out {
    FrameHeader h;
    const void* payload;
    uint64_t cookie;
    size_t sent;  // of header + payload
  };
  struct Sock {
    int fd = -1;
    std::deque<Out> out;
    size_t queued = 0;  // payload bytes in out
    // Incoming frame state.
    FrameHeader h;
    size_t hdr_got = 0;
    bool in_payload = false;
    char* dst = nullptr;  // nullptr: discard
    size_t got = 0;
    // Bytes read ahead of the frame state: a read asks for up to kReadAhead bytes at once, so a
    // small frame (header and payload) arrives in one system call, and a read that returns
    // fewer bytes than it asked for says the socket is drained (no second call to learn it).
    // [rpos, rlen) of rbuf not consumed yet; allocated on first use.
    std::unique_ptr<char[]> rbuf;
    size_t rpos = 0, rlen = 0;
    // A bulk socket (all but the first) that found nothing is read only every 2^idle_exp-th
    // pass (skip: passes left to leave it alone): see Progress.
    uint32_t idle_exp = 0, skip = 0;
    bool readable = false;  // MarkReadable since the last Progress
  };
  TcpConnection(int peer, const TcpOptions& opts) : Connection(peer), opts_(opts) {}
  // Bulk pieces of at least this many bytes go by the kernel's unsent bytes too (BulkSocket).
  static constexpr size_t kAskKernelFrom = 256 << 10;
  // The socket a bulk piece of `bytes` goes to.
  size_t BulkSocket(size_t bytes) const;
  // Whether the control socket's two ends have one address (or a loopback one): the peer is on
  // this host.
  static bool SameHost(int fd);
  Result<bool> WriteSome(Sock& s);
  // may_recv false: only what was read ahead is handed on.
  Result<bool> ReadSome(Sock& s, FrameSink& sink, bool may_recv = true);
  // Feeds n bytes of the socket's stream to its frame state (a header, then its payload);
  // returns how many it took (at most the rest of the current header or payload).
  Result<size_t> Take(Sock& s, const char* p, size_t n, FrameSink& sink);
  // Hands the frame on where the header or the payload is complete (else nothing to do).
  Status EndOfPart(Sock& s, FrameSink& sink);
  std::string Who() const;

  TcpOptions opts_;
  std::vector<Sock> socks_;
  std::vector<char> zeros_;  // stands in for released payloads (ReleaseBuffers)
  std::vector<char> discard_;
  // Header and payload bytes of queued frames not yet written whole (a frame that is only a
  // header counts: an ACK left behind by a full socket is output that needs progress).
  size_t queued_bytes_ = 0;
  // Bulk bytes the peer still owes (ExpectBulk, less the bulk frames that came since): while some
  // are owed the bulk sockets are read every pass. (Only a hint: a wrong count costs time, never
  // data.)
  uint64_t bulk_owed_ = 0;
  bool closed_ = false;
  bool bulk_on_control_ = true;  // TcpOptions::bulk_on_control, decided
  bool hinted_ = false;        // UseReadHints
  bool all_readable_ = false;  // MarkAllReadable since the last Progress
};

}  // namespace tutti
