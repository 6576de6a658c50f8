#include "transport/tcp/tcp_bootstrap.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <memory>

#include "core/base/logging.h"

namespace tutti {

namespace {
constexpr uint32_t kHelloMagic = 0x54544348;  // "TTCH"
// 2: frames carry the bulk flag (transport/frame.h); ranks of different versions cannot talk.
constexpr uint32_t kHelloVersion = 2;
constexpr size_t kMaxSecret = 256;

bool SecretEquals(const std::string& a, const std::string& b) {
  unsigned diff = a.size() != b.size();
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}
}  // namespace

std::string EncodeTcpHello(const TcpHandshake& hs, int peer, int sock_index) {
  TcpHello h{kHelloMagic, kHelloVersion, hs.comm_id, hs.my_rank, peer, static_cast<uint32_t>(sock_index),
             static_cast<uint32_t>(hs.nsocks), static_cast<uint32_t>(hs.secret.size()), 0};
  std::string msg(reinterpret_cast<const char*>(&h), sizeof(h));
  msg += hs.secret;
  return msg;
}

Status CheckTcpHelloHeader(const TcpHello& h) {
  if (h.magic == kHelloMagic && h.version != kHelloVersion)
    return ProtocolError("hello of protocol version " + std::to_string(h.version) + " (this rank speaks " +
                         std::to_string(kHelloVersion) + "): the ranks run different builds of tutti");
  if (h.magic != kHelloMagic || h.secret_len > kMaxSecret) return ProtocolError("malformed hello");
  return OkStatus();
}

Status CheckTcpHello(const TcpHello& h, const std::string& secret, const TcpHandshake& hs,
                     const std::map<int, std::vector<int>>& got) {
  if (!SecretEquals(secret, hs.secret) || h.comm_id != hs.comm_id)
    return InvalidUsage("wrong job secret or communicator");
  auto from = got.find(h.from_rank);
  if (h.to_rank != hs.my_rank || from == got.end() || h.sock_index >= static_cast<uint32_t>(hs.nsocks) ||
      h.nsocks != static_cast<uint32_t>(hs.nsocks) || from->second[h.sock_index] >= 0)
    return ProtocolError("unexpected hello (rank " + std::to_string(h.from_rank) + ", socket " +
                         std::to_string(h.sock_index) + ")");
  return OkStatus();
}

Result<std::unique_ptr<TcpListener>> TcpListener::Open(const std::string& ifname_spec) {
  auto l = std::unique_ptr<TcpListener>(new TcpListener);
  int port = 0;
  std::string advertised;
  if (ifname_spec.empty()) {
    TUTTI_ASSIGN_OR_RETURN(l->fd_, ListenTcp("0.0.0.0", 0, &port));
    TUTTI_ASSIGN_OR_RETURN(auto all, ListInterfaces());
    auto chosen = SelectInterfaces(all, "");
    advertised = chosen.empty() ? "127.0.0.1" : chosen[0].address;
    l->local_address_ = JoinHostPort("127.0.0.1", port);
  } else {
    TUTTI_ASSIGN_OR_RETURN(auto all, ListInterfaces());
    auto chosen = SelectInterfaces(all, ifname_spec);
    if (chosen.empty())
      return InvalidArgument("TUTTI_SOCKET_IFNAME=\"" + ifname_spec + "\" matches no interface that is up");
    advertised = chosen[0].address;
    TUTTI_ASSIGN_OR_RETURN(l->fd_, ListenTcp(advertised, 0, &port));
    l->local_address_ = JoinHostPort(advertised, port);
    TUTTI_LOG(Info, Net, "TCP listening on %s (%s)", chosen[0].name.c_str(), advertised.c_str());
  }
  l->address_ = JoinHostPort(advertised, port);
  return l;
}

TcpListener::~TcpListener() {
  if (fd_ >= 0) close(fd_);
}

Result<std::map<int, std::vector<int>>> TcpListener::Accept(const TcpHandshake& hs,
                                                            const std::set<int>& peers,
                                                            Clock::time_point deadline, int* refused) {
  std::map<int, std::vector<int>> got;
  for (int p : peers) got[p].assign(hs.nsocks, -1);
  size_t missing = peers.size() * static_cast<size_t>(hs.nsocks);
  auto cleanup = [&]() {
    for (auto& [p, fds] : got)
      for (int fd : fds)
        if (fd >= 0) close(fd);
  };
  while (missing > 0) {
    pollfd pf{fd_, POLLIN, 0};
    int pr = poll(&pf, 1, MsLeft(deadline, 1000));
    if (pr <= 0) {
      if (Clock::now() >= deadline) {
        std::string who;
        for (auto& [p, fds] : got)
          for (int fd : fds)
            if (fd < 0) {
              who += (who.empty() ? "" : ", ") + std::to_string(p);
              break;
            }
        cleanup();
        return TimeoutError("rank " + std::to_string(hs.my_rank) +
                            ": timed out waiting for TCP connections from rank(s) " + who);
      }
      continue;
    }
    int fd = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    TcpHello h{};
    std::string secret;
    Status st = ReadFull(fd, &h, sizeof(h), DeadlineIn(5));
    if (st.ok()) st = CheckTcpHelloHeader(h);
    if (st.ok()) {
      secret.resize(h.secret_len);
      st = ReadFull(fd, secret.data(), secret.size(), DeadlineIn(5));
    }
    if (st.ok()) st = CheckTcpHello(h, secret, hs, got);
    if (!st.ok()) {
      TUTTI_LOG(Warn, Net, "rank %d: refused a TCP connection: %s", hs.my_rank, st.message().c_str());
      if (refused) ++*refused;
      close(fd);
      continue;
    }
    got[h.from_rank][h.sock_index] = fd;
    --missing;
  }
  return got;
}

Result<std::vector<int>> ConnectToPeer(const std::string& address, int peer, const TcpHandshake& hs,
                                       Clock::time_point deadline) {
  if (hs.secret.size() > kMaxSecret) return InvalidArgument("job secret longer than 256 bytes");
  TUTTI_ASSIGN_OR_RETURN(auto hp, SplitHostPort(address));
  std::vector<int> fds;
  for (int i = 0; i < hs.nsocks; ++i) {
    auto fd = ConnectTcp(hp.first, hp.second, deadline);
    if (!fd.ok()) {
      for (int f : fds) close(f);
      return fd.status().WithContext("rank " + std::to_string(hs.my_rank) + ": connect to rank " +
                                     std::to_string(peer) + " at " + address);
    }
    fds.push_back(*fd);
    std::string msg = EncodeTcpHello(hs, peer, i);
    Status st = WriteFull(*fd, msg.data(), msg.size(), deadline);
    if (!st.ok()) {
      for (int f : fds) close(f);
      return st.WithContext("hello to rank " + std::to_string(peer));
    }
  }
  return fds;
}

}  // namespace tutti
