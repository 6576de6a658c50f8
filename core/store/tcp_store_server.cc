#include "core/store/tcp_store_server.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/base/logging.h"
#include "core/store/store_server_state.h"
#include "core/store/store_wire.h"
#include "core/base/socket_util.h"

namespace tutti {

using store_wire::Request;
using store_wire::Type;

namespace {

constexpr uint64_t kWakeTag = 0;
constexpr uint64_t kListenTag = 1;
constexpr size_t kReadChunk = 256 << 10;
// A client that does not read its replies stops being read once this much is queued for it.
constexpr size_t kMaxPendingOut = 128 << 20;
constexpr int kMaxEvents = 256;
constexpr auto kAcceptPause = std::chrono::milliseconds(100);

struct Conn {
  int fd = -1;
  std::string peer;
  bool hello_done = false;
  Clock::time_point hello_deadline;  // closed if no Hello by then
  bool dead = false;     // closed at the end of the current loop iteration
  std::string in;        // received bytes not yet handled
  std::string out;       // replies not yet sent, from out_off on
  size_t out_off = 0;
  uint32_t events = 0;   // registered epoll interest
  size_t pending() const { return out.size() - out_off; }
};

}  // namespace

class TcpStoreServer::Impl {
 public:
  Impl(int listen_fd, int epoll_fd, int wake_fd, std::string secret, std::string where,
       const TcpStoreServerOptions& opts)
      : listen_fd_(listen_fd), epoll_fd_(epoll_fd), wake_fd_(wake_fd), secret_(std::move(secret)),
        where_(std::move(where)), opts_(opts), scratch_(kReadChunk) {}
  ~Impl() {
    for (auto& [id, c] : conns_) ::close(c.fd);
    ::close(listen_fd_);
    ::close(wake_fd_);
    ::close(epoll_fd_);
  }

  void Run();
  void Stop() {
    uint64_t one = 1;
    while (::write(wake_fd_, &one, sizeof(one)) < 0 && errno == EINTR) {
    }
  }

  std::atomic<size_t> num_conns{0};
  std::atomic<size_t> num_waiters{0};

 private:
  void Accept();
  void OnConnEvent(uint64_t id, uint32_t events);
  void ReadFrom(uint64_t id, Conn& c);
  void ParseFrames(uint64_t id, Conn& c);
  void HandleHello(uint64_t id, Conn& c, const Request& req);
  void Deliver(std::vector<StoreServerState::Outgoing>* out);
  void Flush(uint64_t id, Conn& c);
  void UpdateInterest(uint64_t id, Conn& c);
  // Logs a warning, sends an error reply (best effort) and closes the connection.
  void Reject(uint64_t id, Conn& c, uint64_t request_id, const Status& why);
  void SweepDead();
  // Closes connections whose Hello is overdue; returns the next Hello deadline, if any.
  std::optional<Clock::time_point> ExpireHellos(Clock::time_point now);
  int PollTimeoutMs() const;

  int listen_fd_, epoll_fd_, wake_fd_;
  std::string secret_;
  std::string where_;  // host:port, for logs
  TcpStoreServerOptions opts_;
  std::vector<char> scratch_;
  size_t unauthenticated_ = 0;  // connections without a completed Hello
  std::optional<Clock::time_point> next_hello_deadline_;
  std::unordered_map<uint64_t, Conn> conns_;  // by id (tags 0 and 1 are reserved)
  uint64_t next_conn_id_ = 2;
  StoreServerState state_;
  bool accept_paused_ = false;
  Clock::time_point accept_resume_{};
};

void TcpStoreServer::Impl::Run() {
  epoll_event evs[kMaxEvents];
  while (true) {
    int n = ::epoll_wait(epoll_fd_, evs, kMaxEvents, PollTimeoutMs());
    if (n < 0 && errno != EINTR) {
      TUTTI_LOG(Error, Store, "store %s: epoll_wait: %s; stopping", where_.c_str(),
                std::strerror(errno));
      return;
    }
    for (int i = 0; i < n; ++i) {
      uint64_t tag = evs[i].data.u64;
      if (tag == kWakeTag) return;
      if (tag == kListenTag) {
        Accept();
      } else {
        OnConnEvent(tag, evs[i].events);
      }
    }
    Clock::time_point now = Clock::now();
    std::vector<StoreServerState::Outgoing> out;
    state_.ExpireWaiters(now, &out);
    Deliver(&out);
    next_hello_deadline_ = ExpireHellos(now);
    SweepDead();
    if (accept_paused_ && now >= accept_resume_) {
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.u64 = kListenTag;
      ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, listen_fd_, &ev);
      accept_paused_ = false;
    }
    num_conns.store(conns_.size(), std::memory_order_relaxed);
    num_waiters.store(state_.num_waiters(), std::memory_order_relaxed);
  }
}

std::optional<Clock::time_point> TcpStoreServer::Impl::ExpireHellos(Clock::time_point now) {
  std::optional<Clock::time_point> next;
  if (unauthenticated_ == 0) return next;
  for (auto& [id, c] : conns_) {
    if (c.hello_done || c.dead) continue;
    if (now >= c.hello_deadline) {
      TUTTI_LOG(Warn, Store, "store %s: closing the connection from %s: no Hello within %.3g s",
                where_.c_str(), c.peer.c_str(), opts_.hello_timeout_s);
      c.dead = true;
    } else if (!next || c.hello_deadline < *next) {
      next = c.hello_deadline;
    }
  }
  return next;
}

int TcpStoreServer::Impl::PollTimeoutMs() const {
  std::optional<Clock::time_point> next = state_.NextDeadline();
  if (next_hello_deadline_ && (!next || *next_hello_deadline_ < *next)) next = next_hello_deadline_;
  if (accept_paused_ && (!next || accept_resume_ < *next)) next = accept_resume_;
  if (!next) return -1;
  auto left = std::chrono::ceil<std::chrono::milliseconds>(*next - Clock::now()).count();
  if (left <= 0) return 0;
  return left > 60000 ? 60000 : static_cast<int>(left);
}

void TcpStoreServer::Impl::Accept() {
  while (true) {
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      // Out of descriptors or memory: stop accepting for a moment instead of spinning.
      TUTTI_LOG(Warn, Store, "store %s: accept: %s; pausing accepts", where_.c_str(),
                std::strerror(errno));
      epoll_event ev{};
      ev.data.u64 = kListenTag;
      ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, listen_fd_, &ev);
      accept_paused_ = true;
      accept_resume_ = Clock::now() + kAcceptPause;
      return;
    }
    if (unauthenticated_ >= opts_.max_unauthenticated) {
      std::string who = PeerName(fd);
      ::close(fd);
      TUTTI_LOG(Warn, Store, "store %s: refused a connection from %s: %zu connections have not said Hello yet",
                where_.c_str(), who.c_str(), unauthenticated_);
      continue;
    }
    SetNoDelay(fd).IgnoreError();
    uint64_t id = next_conn_id_++;
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = id;
    if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0) {
      TUTTI_LOG(Warn, Store, "store %s: epoll_ctl: %s", where_.c_str(), std::strerror(errno));
      ::close(fd);
      continue;
    }
    Conn& c = conns_[id];
    c.fd = fd;
    c.peer = PeerName(fd);
    c.events = EPOLLIN;
    c.hello_deadline = DeadlineIn(opts_.hello_timeout_s);
    ++unauthenticated_;
    if (!next_hello_deadline_ || c.hello_deadline < *next_hello_deadline_) next_hello_deadline_ = c.hello_deadline;
    TUTTI_LOG(Trace, Store, "store %s: connection from %s", where_.c_str(), c.peer.c_str());
  }
}

void TcpStoreServer::Impl::OnConnEvent(uint64_t id, uint32_t events) {
  auto it = conns_.find(id);
  if (it == conns_.end() || it->second.dead) return;
  Conn& c = it->second;
  if (events & EPOLLIN) {
    ReadFrom(id, c);
  } else if (events & (EPOLLHUP | EPOLLERR)) {
    c.dead = true;  // hung up while we were not reading (backpressure)
    return;
  }
  if (!c.dead && (events & EPOLLOUT)) {
    Flush(id, c);
    if (!c.dead && !c.in.empty()) ParseFrames(id, c);  // resume after backpressure
  }
}

void TcpStoreServer::Impl::ReadFrom(uint64_t id, Conn& c) {
  ssize_t n = ::recv(c.fd, scratch_.data(), scratch_.size(), 0);
  if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) return;
  if (n <= 0) {
    if (!c.in.empty()) {
      TUTTI_LOG(Warn, Store, "store %s: %s closed the connection in the middle of a frame",
                where_.c_str(), c.peer.c_str());
    } else {
      TUTTI_LOG(Trace, Store, "store %s: %s disconnected%s%s", where_.c_str(), c.peer.c_str(),
                n < 0 ? ": " : "", n < 0 ? std::strerror(errno) : "");
    }
    c.dead = true;
    return;
  }
  c.in.append(scratch_.data(), static_cast<size_t>(n));
  ParseFrames(id, c);
}

void TcpStoreServer::Impl::ParseFrames(uint64_t id, Conn& c) {
  size_t pos = 0;
  size_t need = 0;  // size of an incomplete frame whose header was validated
  std::vector<StoreServerState::Outgoing> out;
  while (!c.dead && c.pending() < kMaxPendingOut) {
    size_t avail = c.in.size() - pos;
    if (avail < store_wire::kHeaderBytes) break;
    // The header is checked as soon as it arrives, before its body is buffered.
    Result<store_wire::Header> h = store_wire::DecodeHeader(c.in.data() + pos, true);
    if (!h.ok()) return Reject(id, c, 0, h.status());
    if (!c.hello_done && h->type != Type::kHello)
      return Reject(id, c, h->id,
                    ProtocolError(std::string("the first frame must be Hello, got ") +
                                  store_wire::TypeName(h->type)));
    if (c.hello_done && h->type == Type::kHello)
      return Reject(id, c, h->id, ProtocolError("a second Hello on one connection"));
    size_t total = store_wire::kHeaderBytes + h->body_len;
    if (avail < total) {
      need = total;
      break;
    }
    Result<Request> req = store_wire::DecodeRequest(
        *h, std::string_view(c.in.data() + pos + store_wire::kHeaderBytes, h->body_len));
    pos += total;
    if (!req.ok()) return Reject(id, c, h->id, req.status());
    if (req->type == Type::kHello) {
      HandleHello(id, c, *req);
      continue;
    }
    state_.Handle(id, *req, Clock::now(), &out);
    Deliver(&out);
    out.clear();
  }
  c.in.erase(0, pos);
  if (need > 0) c.in.reserve(need);
}

void TcpStoreServer::Impl::HandleHello(uint64_t id, Conn& c, const Request& req) {
  if (req.version != store_wire::kVersion)
    return Reject(id, c, req.id,
                  InvalidUsage("protocol version mismatch: the client speaks version " +
                               std::to_string(req.version) + ", this store version " +
                               std::to_string(store_wire::kVersion) +
                               " (wrong job, or mixed tutti versions?)"));
  if (!store_wire::ConstantTimeEquals(req.secret, secret_))
    return Reject(id, c, req.id,
                  InvalidUsage("secret mismatch: the client's secret is not this store's "
                               "(wrong job? compare TUTTI_SECRET)"));
  c.hello_done = true;
  --unauthenticated_;
  store_wire::Reply r;
  r.type = Type::kHelloOk;
  r.id = req.id;
  r.version = store_wire::kVersion;
  c.out += store_wire::EncodeReply(r);
  Flush(id, c);
}

void TcpStoreServer::Impl::Deliver(std::vector<StoreServerState::Outgoing>* out) {
  for (StoreServerState::Outgoing& o : *out) {
    auto it = conns_.find(o.conn);
    if (it == conns_.end() || it->second.dead) continue;
    Conn& c = it->second;
    if (c.pending() == 0) {
      c.out = std::move(o.frame);
      c.out_off = 0;
    } else {
      c.out += o.frame;
    }
    Flush(o.conn, c);
  }
}

void TcpStoreServer::Impl::Flush(uint64_t id, Conn& c) {
  while (c.pending() > 0) {
    ssize_t n = ::send(c.fd, c.out.data() + c.out_off, c.pending(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      c.out_off += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    TUTTI_LOG(Trace, Store, "store %s: send to %s: %s", where_.c_str(), c.peer.c_str(),
              std::strerror(errno));
    c.dead = true;
    return;
  }
  if (c.pending() == 0) {
    c.out.clear();
    c.out_off = 0;
  } else if (c.out_off > (size_t{1} << 20) && c.out_off > c.out.size() / 2) {
    c.out.erase(0, c.out_off);
    c.out_off = 0;
  }
  UpdateInterest(id, c);
}

void TcpStoreServer::Impl::UpdateInterest(uint64_t id, Conn& c) {
  uint32_t want = 0;
  if (c.pending() < kMaxPendingOut) want |= EPOLLIN;
  if (c.pending() > 0) want |= EPOLLOUT;
  if (want == c.events) return;
  epoll_event ev{};
  ev.events = want;
  ev.data.u64 = id;
  if (::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, c.fd, &ev) != 0) {
    c.dead = true;
    return;
  }
  c.events = want;
}

void TcpStoreServer::Impl::Reject(uint64_t id, Conn& c, uint64_t request_id, const Status& why) {
  TUTTI_LOG(Warn, Store, "store %s: closing the connection from %s: %s", where_.c_str(),
            c.peer.c_str(), why.ToString().c_str());
  c.out += store_wire::EncodeReply(store_wire::ErrorReply(request_id, why));
  Flush(id, c);
  c.dead = true;
}

void TcpStoreServer::Impl::SweepDead() {
  for (auto it = conns_.begin(); it != conns_.end();) {
    if (!it->second.dead) {
      ++it;
      continue;
    }
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, it->second.fd, nullptr);
    ::close(it->second.fd);
    if (!it->second.hello_done) --unauthenticated_;
    state_.DropConnection(it->first);
    it = conns_.erase(it);
  }
}

Result<std::unique_ptr<TcpStoreServer>> TcpStoreServer::Start(const std::string& host, int port,
                                                              const std::string& secret,
                                                              const TcpStoreServerOptions& opts) {
  if (secret.size() > store_wire::kMaxSecretBytes)
    return InvalidArgument("store secret longer than " +
                           std::to_string(store_wire::kMaxSecretBytes) + " bytes");
  const std::string listen_host = host.empty() ? "0.0.0.0" : host;
  int bound = 0;
  Result<int> listened = ListenTcp(listen_host, port, &bound, SOMAXCONN);
  if (!listened.ok()) {
    // A host that does not resolve or has no address to listen on is the caller's mistake.
    if (listened.status().code() == Code::kUnavailable)
      return InvalidArgument(listened.status().message());
    return listened.status();
  }
  int listen_fd = *listened;
  int epoll_fd = ::epoll_create1(EPOLL_CLOEXEC);
  int wake_fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  Status st = SetNonBlocking(listen_fd, true);  // accepted until EAGAIN
  if (st.ok() && epoll_fd < 0) st = SystemError("epoll_create1");
  if (st.ok() && wake_fd < 0) st = SystemError("eventfd");
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = kWakeTag;
  if (st.ok() && ::epoll_ctl(epoll_fd, EPOLL_CTL_ADD, wake_fd, &ev) != 0) st = SystemError("epoll_ctl");
  ev.data.u64 = kListenTag;
  if (st.ok() && ::epoll_ctl(epoll_fd, EPOLL_CTL_ADD, listen_fd, &ev) != 0) st = SystemError("epoll_ctl");
  if (!st.ok()) {
    ::close(listen_fd);
    if (epoll_fd >= 0) ::close(epoll_fd);
    if (wake_fd >= 0) ::close(wake_fd);
    return st.WithContext("starting the store server on " + JoinHostPort(host, port));
  }
  std::unique_ptr<TcpStoreServer> server(new TcpStoreServer());
  server->port_ = bound;
  std::string where = JoinHostPort(listen_host, bound);
  server->impl_ = std::make_unique<Impl>(listen_fd, epoll_fd, wake_fd, secret, where, opts);
  Impl* impl = server->impl_.get();
  server->thread_ = std::thread([impl] { impl->Run(); });
  TUTTI_LOG(Info, Store, "store server listening on %s", where.c_str());
  return server;
}

TcpStoreServer::~TcpStoreServer() {
  if (impl_) impl_->Stop();
  if (thread_.joinable()) thread_.join();
  impl_.reset();  // closes every connection
}

size_t TcpStoreServer::num_connections() const {
  return impl_->num_conns.load(std::memory_order_relaxed);
}

size_t TcpStoreServer::num_waiters() const {
  return impl_->num_waiters.load(std::memory_order_relaxed);
}

}  // namespace tutti
