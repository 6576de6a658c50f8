// Progress for every TCP connection of a communicator with one epoll set: Ready asks the kernel
// once which sockets have data (or an end, or an error) instead of a recv on each, and adds the
// connections with output queued. A recv on an idle socket is not only a system call: it takes
// the socket's lock, which the peer's delivery of new data (over loopback, on the sender's core)
// takes too, so ranks that spin on recvs slow their peers' sends; epoll_wait takes no socket's
// lock. (4 ranks on 2 cores, tcp, 8 B-2 KiB back to back: broadcast 36-50 -> 24-29 us,
// all_reduce 105-123 -> 94-102 us, all_gather 120-128 -> 91-94 us; tools/ab_perf.sh, medians of 7.) A single
// connection is read directly: epoll and then a recv would be two calls for every message.
// The context tells its connections which sockets epoll named (TcpConnection's read hints), so a
// connection named for its output alone reads nothing.
#pragma once

#include <sys/epoll.h>

#include <deque>
#include <vector>

#include "transport/context.h"

namespace tutti {

class TcpConnection;

class TcpContext : public TransportContext {
 public:
  static constexpr size_t kPollEachUpTo = 1;
  TcpContext();
  ~TcpContext() override;
  TcpContext(const TcpContext&) = delete;
  TcpContext& operator=(const TcpContext&) = delete;

  void Attach(Connection* c) override;
  void Ready(std::vector<Connection*>* out) override;

 private:
  // What an epoll event names: a socket of a connection (its index in AppendWaitFds' order).
  struct Socket {
    Connection* conn;
    TcpConnection* tcp;  // conn, if it is one of ours (it takes read hints); else null
    size_t index;
  };
  // Names every connection, each with every socket marked readable.
  void NameAll(std::vector<Connection*>* out);

  int epfd_ = -1;  // -1 if epoll could not be had: every connection is named
  std::vector<Connection*> conns_;
  std::vector<TcpConnection*> tcp_;  // per conns_ entry: what Socket::tcp says
  std::deque<Socket> sockets_;  // epoll's data.ptr points here (a deque: entries stay put)
  std::vector<Connection*> marks_;  // scratch for Ready
  std::vector<epoll_event> events_;  // one per socket
};

}  // namespace tutti
