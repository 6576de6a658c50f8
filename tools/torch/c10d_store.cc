#include "tools/torch/c10d_store.h"

#include <chrono>
#include <cmath>
#include <exception>
#include <limits>
#include <thread>

#include "core/base/deadline.h"

namespace tutti::torch_backend {
namespace {

// torch's stores report failures by throwing; tutti's return a Status. A wait that ran out of
// time (DistStoreError whose text says so) becomes kTimeout, anything else kRemoteError.
Status FromException(const std::string& what, const std::exception& e) {
  std::string msg = "torch store: " + what + ": " + e.what();
  if (msg.find("imeout") != std::string::npos || msg.find("timed out") != std::string::npos)
    return TimeoutError(msg);
  return RemoteError(msg);
}

std::chrono::milliseconds ToMillis(double timeout_s) {
  // c10d treats 0 as "no timeout" in wait(keys, timeout); infinity means the same here.
  if (std::isinf(timeout_s)) return std::chrono::milliseconds(0);
  double ms = std::ceil(timeout_s * 1000.0);
  if (ms < 1) ms = 1;
  if (ms > 1e12) ms = 1e12;
  return std::chrono::milliseconds(static_cast<int64_t>(ms));
}

// torch's TCPStore logs a warning ("waitForInput ... timed out") for every wait that runs out of
// time, and tutti waits in short slices while it watches for failed or dead ranks (at init, in
// new_group): a rank that arrives a second late would fill the log with dozens of warnings about
// nothing. Waits up to this long therefore poll check(), which logs nothing; longer ones wait.
constexpr double kPollingWaitS = 2.0;

}  // namespace

Status C10dStore::Set(const std::string& key, const std::string& value) {
  TUTTI_RETURN_IF_ERROR(store_internal::ValidateKey(key));
  TUTTI_RETURN_IF_ERROR(store_internal::ValidateValue(key, value));
  try {
    store_->set(key, std::vector<uint8_t>(value.begin(), value.end()));
  } catch (const std::exception& e) {
    return FromException("set \"" + key + "\"", e);
  }
  return OkStatus();
}

Result<std::string> C10dStore::Get(const std::string& key, double timeout_s) {
  TUTTI_RETURN_IF_ERROR(Wait({key}, timeout_s));
  try {
    std::vector<uint8_t> v = store_->get(key);
    return std::string(v.begin(), v.end());
  } catch (const std::exception& e) {
    return FromException("get \"" + key + "\"", e);
  }
}

Result<int64_t> C10dStore::Add(const std::string& key, int64_t delta) {
  TUTTI_RETURN_IF_ERROR(store_internal::ValidateKey(key));
  try {
    return static_cast<int64_t>(store_->add(key, delta));
  } catch (const std::exception& e) {
    return FromException("add to \"" + key + "\"", e);
  }
}

Status C10dStore::Wait(const std::vector<std::string>& keys, double timeout_s) {
  TUTTI_RETURN_IF_ERROR(store_internal::ValidateKeys(keys));
  TUTTI_RETURN_IF_ERROR(store_internal::ValidateTimeout(timeout_s));
  try {
    if (timeout_s <= kPollingWaitS) {
      const auto deadline = std::chrono::steady_clock::now() + WaitDuration(timeout_s);
      auto nap = std::chrono::microseconds(50);
      while (!store_->check(keys)) {
        const auto now = std::chrono::steady_clock::now();
        if (now >= deadline)
          return TimeoutError("torch store: wait for " + store_internal::DescribeKeys(keys) + " (" +
                              store_internal::DescribeSeconds(timeout_s) + ") timed out");
        std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(nap, deadline - now));
        nap = std::min(nap * 2, std::chrono::microseconds(2000));
      }
    } else {
      store_->wait(keys, ToMillis(timeout_s));
    }
  } catch (const std::exception& e) {
    return FromException("wait for " + store_internal::DescribeKeys(keys) + " (" +
                             store_internal::DescribeSeconds(timeout_s) + ")",
                         e);
  }
  return OkStatus();
}

Result<bool> C10dStore::Check(const std::vector<std::string>& keys) {
  TUTTI_RETURN_IF_ERROR(store_internal::ValidateKeys(keys));
  try {
    return store_->check(keys);
  } catch (const std::exception& e) {
    return FromException("check " + store_internal::DescribeKeys(keys), e);
  }
}

Status C10dStore::Delete(const std::string& key) {
  TUTTI_RETURN_IF_ERROR(store_internal::ValidateKey(key));
  try {
    store_->deleteKey(key);
  } catch (const std::exception& e) {
    return FromException("delete \"" + key + "\"", e);
  }
  return OkStatus();
}

}  // namespace tutti::torch_backend
