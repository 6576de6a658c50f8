// TcpStoreServer: serves a store over TCP from one background thread (epoll over non-blocking
// sockets), for hundreds of clients. Get and Wait requests wait inside the server and are
// answered when their keys appear or their timeout passes, so no client can block another.
// Wire format: store_wire.h. Clients: TcpStoreClient (tcp_store_client.h).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <thread>

#include "core/base/status.h"

namespace tutti {

struct TcpStoreServerOptions {
  // A connection must complete its Hello (version + secret) within this time, or it is closed.
  double hello_timeout_s = 10;
  // At most this many connections may be waiting for their Hello at once; more are refused
  // at once (a flood of idle or hostile connections cannot exhaust descriptors or memory).
  size_t max_unauthenticated = 64;
};

class TcpStoreServer {
 public:
  // host "" or "0.0.0.0" = all interfaces, "127.0.0.1" loopback only (host names work too);
  // port 0 = any free port. Clients must present the same secret.
  static Result<std::unique_ptr<TcpStoreServer>> Start(const std::string& host, int port,
                                                       const std::string& secret,
                                                       const TcpStoreServerOptions& opts = {});
  TcpStoreServer(const TcpStoreServer&) = delete;
  TcpStoreServer& operator=(const TcpStoreServer&) = delete;
  // Stops the thread promptly and closes every connection; waiting clients see it closed.
  ~TcpStoreServer();

  int port() const { return port_; }
  // Diagnostics (as of the last loop iteration): open client connections, waiting requests.
  size_t num_connections() const;
  size_t num_waiters() const;

  class Impl;

 private:
  TcpStoreServer() = default;

  int port_ = 0;
  std::unique_ptr<Impl> impl_;
  std::thread thread_;
};

}  // namespace tutti
