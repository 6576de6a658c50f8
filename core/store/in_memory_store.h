// InMemoryStore: a thread-safe Store inside one process (threads-as-ranks tests).
#pragma once

#include <condition_variable>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/store/store.h"

namespace tutti {

class InMemoryStore : public Store {
 public:
  InMemoryStore() = default;
  InMemoryStore(const InMemoryStore&) = delete;
  InMemoryStore& operator=(const InMemoryStore&) = delete;

  Status Set(const std::string& key, const std::string& value) override;
  Result<std::string> Get(const std::string& key, double timeout_s) override;
  Result<int64_t> Add(const std::string& key, int64_t delta) override;
  Status Wait(const std::vector<std::string>& keys, double timeout_s) override;
  Result<bool> Check(const std::vector<std::string>& keys) override;
  Status Delete(const std::string& key) override;

 private:
  bool AllPresentLocked(const std::vector<std::string>& keys) const;
  // Blocks (mu_ held through lock) until all keys exist; kTimeout after timeout_s.
  Status WaitLocked(std::unique_lock<std::mutex>& lock, const std::vector<std::string>& keys,
                    double timeout_s);

  std::mutex mu_;
  std::condition_variable changed_;  // notified whenever a key is set or added
  std::unordered_map<std::string, std::string> data_;
};

}  // namespace tutti
