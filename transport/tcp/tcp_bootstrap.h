// Setting up TCP connections between the ranks of a communicator.
//
// Every rank listens; the higher rank of a pair connects `nsocks` sockets to the lower one and
// opens each with a hello (magic, version, communicator id, both ranks, socket index, the job
// secret). The acceptor refuses (closes) any connection whose hello is malformed, from another
// job or communicator, or carries the wrong secret, and keeps waiting for the right ones.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "core/base/socket_util.h"

namespace tutti {

struct TcpHandshake {
  uint64_t comm_id = 0;
  int my_rank = 0;
  std::string secret;
  int nsocks = 1;
};

// The fixed part of the hello that opens each connection (host byte order); secret_len bytes of
// the job secret follow it. The functions below are the whole hello protocol, free of sockets.
struct TcpHello {
  uint32_t magic;
  uint32_t version;
  uint64_t comm_id;
  int32_t from_rank;
  int32_t to_rank;
  uint32_t sock_index;
  uint32_t nsocks;
  uint32_t secret_len;
  uint32_t reserved;
};
// What the connecting rank sends on its socket `sock_index` to `peer`.
std::string EncodeTcpHello(const TcpHandshake& hs, int peer, int sock_index);
// Checks the fixed part as soon as it is read: magic, version and the secret's length.
Status CheckTcpHelloHeader(const TcpHello& h);
// Checks a whole hello against the acceptor's handshake and the sockets it already holds
// (`got`: fds by peer rank and socket index, -1 where none yet).
Status CheckTcpHello(const TcpHello& h, const std::string& secret, const TcpHandshake& hs,
                     const std::map<int, std::vector<int>>& got);

class TcpListener {
 public:
  // Listens on the interface chosen by `ifname_spec` (TUTTI_SOCKET_IFNAME syntax). With an
  // empty spec it listens on all addresses and advertises the first non-loopback one.
  static Result<std::unique_ptr<TcpListener>> Open(const std::string& ifname_spec);
  ~TcpListener();

  // Where peers on other hosts connect ("ip:port"), and peers on this host.
  const std::string& address() const { return address_; }
  const std::string& local_address() const { return local_address_; }

  // Accepts hs.nsocks sockets from each rank in `peers`; returns their fds by rank, ordered by
  // socket index. Refused connections are closed and counted in *refused (if given).
  Result<std::map<int, std::vector<int>>> Accept(const TcpHandshake& hs, const std::set<int>& peers,
                                                 Clock::time_point deadline, int* refused = nullptr);

 private:
  TcpListener() = default;
  int fd_ = -1;
  std::string address_, local_address_;
};

// Connects hs.nsocks sockets to `peer` at `address` and sends the hellos.
Result<std::vector<int>> ConnectToPeer(const std::string& address, int peer, const TcpHandshake& hs,
                                       Clock::time_point deadline);

}  // namespace tutti
