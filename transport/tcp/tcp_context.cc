#include "transport/tcp/tcp_context.h"

#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>

#include "core/base/logging.h"
#include "transport/tcp/tcp_connection.h"

namespace tutti {

TcpContext::TcpContext() {
  epfd_ = epoll_create1(EPOLL_CLOEXEC);
  if (epfd_ < 0) TUTTI_LOG(Warn, Net, "epoll_create1 failed (%d): polling every TCP connection", errno);
}

TcpContext::~TcpContext() {
  if (epfd_ >= 0) close(epfd_);
}

void TcpContext::Attach(Connection* c) {
  // (Read hints only for our own connections; another kind is read on every pass it is named.)
  auto* tcp = dynamic_cast<TcpConnection*>(c);
  conns_.push_back(c);
  tcp_.push_back(tcp);
  if (epfd_ < 0) return;
  std::vector<int> fds;
  c->AppendWaitFds(&fds);
  if (tcp != nullptr) tcp->UseReadHints();
  for (size_t i = 0; i < fds.size(); ++i) {
    const int fd = fds[i];
    sockets_.push_back(Socket{c, tcp, i});
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLRDHUP;  // errors and hang-ups are always reported
    ev.data.ptr = &sockets_.back();
    events_.emplace_back();
    if (epoll_ctl(epfd_, EPOLL_CTL_ADD, fd, &ev) != 0) {
      TUTTI_LOG(Warn, Net, "epoll_ctl failed (%d): polling every TCP connection", errno);
      close(epfd_);
      epfd_ = -1;
      return;
    }
  }
}

void TcpContext::NameAll(std::vector<Connection*>* out) {
  for (size_t i = 0; i < conns_.size(); ++i) {
    if (tcp_[i] != nullptr) tcp_[i]->MarkAllReadable();
    out->push_back(conns_[i]);
  }
}

void TcpContext::Ready(std::vector<Connection*>* out) {
  if (epfd_ < 0 || conns_.size() <= kPollEachUpTo) {
    NameAll(out);
    return;
  }
  marks_.clear();
  for (Connection* c : conns_)
    if (c->HasLocalWork()) marks_.push_back(c);
  // Room for every socket: level-triggered, so asking again would only repeat the same ones.
  const int n = epoll_wait(epfd_, events_.data(), static_cast<int>(events_.size()), 0);
  if (n < 0 && errno != EINTR) {  // should not happen; be safe rather than miss data
    NameAll(out);
    return;
  }
  for (int i = 0; i < n; ++i) {
    const Socket* s = static_cast<const Socket*>(events_[i].data.ptr);
    if (s->tcp != nullptr) s->tcp->MarkReadable(s->index);
    marks_.push_back(s->conn);
  }
  std::sort(marks_.begin(), marks_.end());
  marks_.erase(std::unique(marks_.begin(), marks_.end()), marks_.end());
  out->insert(out->end(), marks_.begin(), marks_.end());
}

}  // namespace tutti
