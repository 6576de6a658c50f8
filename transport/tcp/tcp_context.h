// Progress for every TCP connection of a communicator with one epoll set: Ready asks the kernel
// once which sockets have data (or an end, or an error) instead of a recv on each, and adds the
// connections with output queued. With few connections a poll of each is as cheap, so up to
// kPollEachUpTo connections are all named.
#pragma once

#include <sys/epoll.h>

#include <vector>

#include "transport/context.h"

namespace tutti {

class TcpContext : public TransportContext {
 public:
  static constexpr size_t kPollEachUpTo = 4;
  TcpContext();
  ~TcpContext() override;
  TcpContext(const TcpContext&) = delete;
  TcpContext& operator=(const TcpContext&) = delete;

  void Attach(Connection* c) override;
  void Ready(std::vector<Connection*>* out) override;

 private:
  int epfd_ = -1;  // -1 if epoll could not be had: every connection is named
  std::vector<Connection*> conns_;
  std::vector<Connection*> marks_;  // scratch for Ready
  std::vector<epoll_event> events_;  // one per socket
};

}  // namespace tutti
