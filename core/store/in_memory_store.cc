#include "core/store/in_memory_store.h"

#include <chrono>
#include <cmath>

namespace tutti {

using store_internal::DescribeKeys;
using store_internal::DescribeSeconds;

Status InMemoryStore::Set(const std::string& key, const std::string& value) {
  TUTTI_RETURN_IF_ERROR(store_internal::ValidateValue(key, value));
  {
    std::lock_guard<std::mutex> lock(mu_);
    data_[key] = value;
  }
  changed_.notify_all();
  return OkStatus();
}

Result<std::string> InMemoryStore::Get(const std::string& key, double timeout_s) {
  TUTTI_RETURN_IF_ERROR(store_internal::ValidateKey(key));
  std::unique_lock<std::mutex> lock(mu_);
  TUTTI_RETURN_IF_ERROR(WaitLocked(lock, {key}, timeout_s));
  return data_.at(key);
}

Result<int64_t> InMemoryStore::Add(const std::string& key, int64_t delta) {
  TUTTI_RETURN_IF_ERROR(store_internal::ValidateKey(key));
  int64_t sum = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = data_.find(key);
    TUTTI_ASSIGN_OR_RETURN(
        sum, store_internal::AddToValue(key, it == data_.end() ? nullptr : &it->second, delta));
    data_[key] = std::to_string(sum);
  }
  changed_.notify_all();
  return sum;
}

Status InMemoryStore::Wait(const std::vector<std::string>& keys, double timeout_s) {
  TUTTI_RETURN_IF_ERROR(store_internal::ValidateKeys(keys));
  std::unique_lock<std::mutex> lock(mu_);
  return WaitLocked(lock, keys, timeout_s);
}

Result<bool> InMemoryStore::Check(const std::vector<std::string>& keys) {
  TUTTI_RETURN_IF_ERROR(store_internal::ValidateKeys(keys));
  std::lock_guard<std::mutex> lock(mu_);
  return AllPresentLocked(keys);
}

Status InMemoryStore::Delete(const std::string& key) {
  TUTTI_RETURN_IF_ERROR(store_internal::ValidateKey(key));
  std::lock_guard<std::mutex> lock(mu_);
  data_.erase(key);
  return OkStatus();
}

bool InMemoryStore::AllPresentLocked(const std::vector<std::string>& keys) const {
  for (const std::string& k : keys)
    if (data_.count(k) == 0) return false;
  return true;
}

Status InMemoryStore::WaitLocked(std::unique_lock<std::mutex>& lock,
                                 const std::vector<std::string>& keys, double timeout_s) {
  TUTTI_RETURN_IF_ERROR(store_internal::ValidateTimeout(timeout_s));
  auto ready = [&] { return AllPresentLocked(keys); };
  // Beyond ~a century a deadline would overflow the clock; treat it as forever.
  if (std::isinf(timeout_s) || timeout_s > 3e9) {
    changed_.wait(lock, ready);
    return OkStatus();
  }
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                      std::chrono::duration<double>(timeout_s));
  if (changed_.wait_until(lock, deadline, ready)) return OkStatus();
  std::vector<std::string> missing;
  for (const std::string& k : keys)
    if (data_.count(k) == 0) missing.push_back(k);
  return TimeoutError("timed out after " + DescribeSeconds(timeout_s) +
                      " waiting for store key" + (missing.size() == 1 ? " " : "s ") +
                      DescribeKeys(missing));
}

}  // namespace tutti
