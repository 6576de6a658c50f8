// TcpStoreClient: a Store served by a TcpStoreServer over one TCP connection.
//
// Thread-safe: one request at a time goes over the socket (a mutex). Requests carry ids, so a
// reply that arrives after its Get/Wait timed out is recognised and skipped. If the server goes
// away, every operation fails with kRemoteError ("store at host:port closed the connection").
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "core/store/store.h"
#include "core/store/store_wire.h"

namespace tutti {

class TcpStoreClient : public Store {
 public:
  // Retries connecting until timeout_s (the server may start later than the clients), then
  // kTimeout naming host:port. A server that refuses the handshake (wrong secret or protocol
  // version: another job's store) is kInvalidUsage at once.
  static Result<std::unique_ptr<TcpStoreClient>> Connect(const std::string& host, int port,
                                                         const std::string& secret,
                                                         double timeout_s);
  TcpStoreClient(const TcpStoreClient&) = delete;
  TcpStoreClient& operator=(const TcpStoreClient&) = delete;
  ~TcpStoreClient() override;

  Status Set(const std::string& key, const std::string& value) override;
  Result<std::string> Get(const std::string& key, double timeout_s) override;
  Result<int64_t> Add(const std::string& key, int64_t delta) override;
  Status Wait(const std::vector<std::string>& keys, double timeout_s) override;
  Result<bool> Check(const std::vector<std::string>& keys) override;
  Status Delete(const std::string& key) override;

  // How long Set, Add, Check and Delete may take (default: TUTTI_STORE_TIMEOUT).
  void set_op_timeout(double seconds);
  // "host:port" of the server.
  const std::string& address() const { return where_; }

 private:
  using Deadline = std::chrono::steady_clock::time_point;

  TcpStoreClient(std::string where, int fd, double op_timeout_s);

  Status Handshake(const std::string& secret, Deadline d);
  // Sends req and returns its reply of type expect (an Error reply becomes its Status). If no
  // reply has started by d: kTimeout with timeout_msg, and the connection stays usable.
  Result<store_wire::Reply> Call(store_wire::Request req, store_wire::Type expect,
                                 Deadline d, const std::string& timeout_msg);
  Result<store_wire::Reply> ReadReply(uint64_t id, Deadline d,
                                      const std::string& timeout_msg);
  // Closes the connection for good: every later call fails with kRemoteError.
  Status Break(const Status& why);
  // The deadline of a Get/Wait: the server answers kTimeout at timeout_s; this is the backstop.
  static Deadline WaitDeadline(double timeout_s);

  const std::string where_;
  std::mutex mu_;
  int fd_ = -1;            // guarded by mu_; -1 once broken
  uint64_t next_id_ = 1;   // guarded by mu_
  Status broken_;          // guarded by mu_
  double op_timeout_s_;    // guarded by mu_
};

}  // namespace tutti
