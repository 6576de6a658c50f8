// TCP transport setup: any two ranks. Every rank that has TCP peers listens and publishes its
// addresses (one for other hosts, one for its own); of each pair the higher rank connects
// (nsocks sockets, each opened by a hello carrying the communicator id and the job secret) and
// the lower rank accepts, refusing anything else.
#pragma once

#include "transport/setup.h"
#include "transport/tcp/tcp_context.h"
#include "transport/tcp/tcp_connection.h"

namespace tutti {

struct TcpSetupOptions {
  std::string secret;     // the job secret, checked in every hello
  int nsocks = 1;         // sockets per pair
  int bufsize = 0;        // socket buffer bytes (0: the kernel's)
  int user_timeout_ms = 0;
  std::string ifname;     // TUTTI_SOCKET_IFNAME syntax
  TcpOptions connection;
};

class TcpSetup : public TransportSetup {
 public:
  explicit TcpSetup(TcpSetupOptions opts) : opts_(std::move(opts)) {}
  const char* name() const override { return "tcp"; }
  bool CanConnect(const PeerInfo&, const PeerInfo&) const override { return true; }
  std::unique_ptr<TransportContext> MakeContext() const override { return std::make_unique<TcpContext>(); }
  Result<std::map<int, std::unique_ptr<Connection>>> Connect(const std::vector<PeerInfo>& cards,
                                                              const std::set<int>& peers,
                                                              SetupExchange& ex) override;

 private:
  TcpSetupOptions opts_;
};

}  // namespace tutti
