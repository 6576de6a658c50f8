// Store: the rendezvous key-value store ranks use to find each other (like c10d's Store).
//
// Keys and values are byte strings. Get and Wait block until the keys exist or the timeout runs
// out (Code::kTimeout naming the keys). Add treats the value as a decimal integer.
//
// Implementations: InMemoryStore (threads of one process), PrefixStore (a namespace inside
// another store), TcpStoreClient (a TcpStoreServer reached over TCP; see tcp_store.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/base/status.h"

namespace tutti {

// Limits every store enforces (the TCP wire protocol relies on them).
inline constexpr size_t kStoreMaxKeyBytes = 4096;
inline constexpr size_t kStoreMaxValueBytes = size_t{64} << 20;
inline constexpr size_t kStoreMaxWaitKeys = 1024;

class Store {
 public:
  virtual ~Store() = default;
  virtual Status Set(const std::string& key, const std::string& value) = 0;
  // Waits until key exists (up to timeout_s seconds; infinity = forever), then returns its
  // value. Timeout -> Code::kTimeout naming the key.
  virtual Result<std::string> Get(const std::string& key, double timeout_s) = 0;
  // Atomically adds delta to the integer stored at key (missing = 0) and returns the new value.
  virtual Result<int64_t> Add(const std::string& key, int64_t delta) = 0;
  // Waits until all keys exist.
  virtual Status Wait(const std::vector<std::string>& keys, double timeout_s) = 0;
  // true if all keys exist now.
  virtual Result<bool> Check(const std::vector<std::string>& keys) = 0;
  // Removes key; deleting a missing key is not an error.
  virtual Status Delete(const std::string& key) = 0;
};

// Shared argument checks and semantics of all stores (store.cc).
namespace store_internal {
Status ValidateKey(const std::string& key);
Status ValidateValue(const std::string& key, const std::string& value);
Status ValidateKeys(const std::vector<std::string>& keys);
// timeout_s must be >= 0 (infinity allowed; NaN is not).
Status ValidateTimeout(double timeout_s);
// Adds delta to the integer in *stored (nullptr = missing = 0); returns the new value.
// A stored value that is not a decimal integer, or an overflow, is kInvalidArgument.
Result<int64_t> AddToValue(const std::string& key, const std::string* stored, int64_t delta);
// "\"a\", \"b\" and 3 more": keys quoted (and shortened) for error messages.
std::string DescribeKeys(const std::vector<std::string>& keys);
// "1.5s"
std::string DescribeSeconds(double s);
}  // namespace store_internal

}  // namespace tutti
