#include "transport/tcp/tcp_context.h"

#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>

#include "core/base/logging.h"

namespace tutti {

TcpContext::TcpContext() {
  epfd_ = epoll_create1(EPOLL_CLOEXEC);
  if (epfd_ < 0) TUTTI_LOG(Warn, Net, "epoll_create1 failed (%d): polling every TCP connection", errno);
}

TcpContext::~TcpContext() {
  if (epfd_ >= 0) close(epfd_);
}

void TcpContext::Attach(Connection* c) {
  conns_.push_back(c);
  if (epfd_ < 0) return;
  std::vector<int> fds;
  c->AppendWaitFds(&fds);
  for (int fd : fds) {
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLRDHUP;  // errors and hang-ups are always reported
    ev.data.ptr = c;
    events_.emplace_back();
    if (epoll_ctl(epfd_, EPOLL_CTL_ADD, fd, &ev) != 0) {
      TUTTI_LOG(Warn, Net, "epoll_ctl failed (%d): polling every TCP connection", errno);
      close(epfd_);
      epfd_ = -1;
      return;
    }
  }
}

void TcpContext::Ready(std::vector<Connection*>* out) {
  if (epfd_ < 0 || conns_.size() <= kPollEachUpTo) {
    out->insert(out->end(), conns_.begin(), conns_.end());
    return;
  }
  marks_.clear();
  for (Connection* c : conns_)
    if (c->HasLocalWork()) marks_.push_back(c);
  // Room for every socket: level-triggered, so asking again would only repeat the same ones.
  const int n = epoll_wait(epfd_, events_.data(), static_cast<int>(events_.size()), 0);
  for (int i = 0; i < n; ++i) marks_.push_back(static_cast<Connection*>(events_[i].data.ptr));
  if (n < 0 && errno != EINTR) {  // should not happen; be safe rather than miss data
    out->insert(out->end(), conns_.begin(), conns_.end());
    return;
  }
  std::sort(marks_.begin(), marks_.end());
  marks_.erase(std::unique(marks_.begin(), marks_.end()), marks_.end());
  out->insert(out->end(), marks_.begin(), marks_.end());
}

}  // namespace tutti
