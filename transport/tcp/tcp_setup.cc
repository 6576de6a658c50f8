#include "transport/tcp/tcp_setup.h"

#include "core/base/socket_util.h"
#include "transport/tcp/tcp_bootstrap.h"

namespace tutti {

Result<std::map<int, std::unique_ptr<Connection>>> TcpSetup::Connect(const std::vector<PeerInfo>& cards,
                                                                      const std::set<int>& peers,
                                                                      SetupExchange& ex) {
  std::map<int, std::unique_ptr<Connection>> out;
  if (peers.empty()) return out;
  const int me = ex.rank();
  TUTTI_ASSIGN_OR_RETURN(auto listener, TcpListener::Open(opts_.ifname));
  TUTTI_RETURN_IF_ERROR(ex.Put("tcp/address/" + std::to_string(me), listener->address() + " " + listener->local_address()));
  TUTTI_ASSIGN_OR_RETURN(uint64_t comm_id, ex.CommId());
  const TcpHandshake hs{comm_id, me, opts_.secret, opts_.nsocks};
  auto adopt = [&](int r, const std::vector<int>& fds) -> Status {
    for (int fd : fds) TuneSocket(fd, opts_.user_timeout_ms, opts_.bufsize);
    TUTTI_ASSIGN_OR_RETURN(auto conn, TcpConnection::Make(r, fds, opts_.connection));
    out[r] = std::move(conn);
    return OkStatus();
  };
  std::set<int> higher;
  for (int r : peers) {
    if (r > me) {
      higher.insert(r);
      continue;
    }
    TUTTI_ASSIGN_OR_RETURN(std::string addrs,
                           ex.Get(r, "tcp/address/" + std::to_string(r), "TCP address of rank " + std::to_string(r)));
    const size_t sp = addrs.find(' ');
    // A peer on this host is reached at its local address, others at the advertised one.
    const std::string addr = cards[r].host_id == cards[me].host_id && sp != std::string::npos ? addrs.substr(sp + 1)
                                                                                               : addrs.substr(0, sp);
    TUTTI_ASSIGN_OR_RETURN(auto fds, ConnectToPeer(addr, r, hs, ex.deadline()));
    TUTTI_RETURN_IF_ERROR(adopt(r, fds));
  }
  if (!higher.empty()) {
    auto got = listener->Accept(hs, higher, ex.deadline());
    if (!got.ok()) return got.status().WithContext("TCP connections");
    for (auto& [r, fds] : *got) TUTTI_RETURN_IF_ERROR(adopt(r, fds));
  }
  return out;
}

}  // namespace tutti
