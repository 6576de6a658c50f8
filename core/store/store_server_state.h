// StoreServerState: the keys, values and waiting requests of a TcpStoreServer, without sockets.
// Single-threaded: only the server's loop touches it. Requests come in decoded; replies go out
// as encoded frames addressed to connection ids, so a Set can answer Gets of other connections.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/store/store_wire.h"

namespace tutti {

class StoreServerState {
 public:
  using Clock = std::chrono::steady_clock;
  struct Outgoing {
    uint64_t conn;
    std::string frame;
  };

  // Handles one request other than Hello from connection conn; appends the replies it causes
  // to out (its own reply, unless it must wait, and those of waiters it completes).
  void Handle(uint64_t conn, const store_wire::Request& req, Clock::time_point now,
              std::vector<Outgoing>* out);
  // Forgets the waiting requests of a connection that closed.
  void DropConnection(uint64_t conn);
  // Answers kTimeout to every waiter whose deadline is not after now.
  void ExpireWaiters(Clock::time_point now, std::vector<Outgoing>* out);
  // The earliest waiter deadline, if any.
  std::optional<Clock::time_point> NextDeadline() const;

  size_t num_waiters() const { return waiters_.size(); }
  size_t num_keys() const { return data_.size(); }

 private:
  struct Waiter {
    uint64_t conn = 0;
    uint64_t request_id = 0;
    store_wire::Type type = store_wire::Type::kGet;  // kGet or kWait
    std::vector<std::string> keys;                   // distinct
    uint64_t timeout_ms = 0;
    std::optional<Clock::time_point> deadline;
  };

  void Register(uint64_t conn, const store_wire::Request& req, std::vector<std::string> keys,
                Clock::time_point now);
  // Completes the waiters on key whose keys all exist now.
  void KeyChanged(const std::string& key, std::vector<Outgoing>* out);
  bool AllPresent(const std::vector<std::string>& keys) const;
  std::string CompletionFrame(const Waiter& w) const;
  void Remove(uint64_t waiter_id);

  std::unordered_map<std::string, std::string> data_;
  std::unordered_map<uint64_t, Waiter> waiters_;
  std::unordered_map<std::string, std::vector<uint64_t>> by_key_;
  std::unordered_map<uint64_t, std::vector<uint64_t>> by_conn_;
  std::set<std::pair<Clock::time_point, uint64_t>> deadlines_;
  uint64_t next_waiter_id_ = 1;
};

}  // namespace tutti
