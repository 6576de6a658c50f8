// PrefixStore: a namespace inside another store. Every key becomes prefix + "/" + key, so each
// communicator (or test) can use the same key names without colliding.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/store/store.h"

namespace tutti {

class PrefixStore : public Store {
 public:
  // Shares ownership of base.
  PrefixStore(std::string prefix, std::shared_ptr<Store> base);
  // Does not own base; it must outlive this store.
  PrefixStore(std::string prefix, Store* base);

  const std::string& prefix() const { return prefix_; }
  Store* base() const { return base_.get(); }

  Status Set(const std::string& key, const std::string& value) override;
  Result<std::string> Get(const std::string& key, double timeout_s) override;
  Result<int64_t> Add(const std::string& key, int64_t delta) override;
  Status Wait(const std::vector<std::string>& keys, double timeout_s) override;
  Result<bool> Check(const std::vector<std::string>& keys) override;
  Status Delete(const std::string& key) override;

 private:
  std::string Full(const std::string& key) const { return prefix_ + "/" + key; }
  std::vector<std::string> Full(const std::vector<std::string>& keys) const;

  std::string prefix_;
  std::shared_ptr<Store> base_;
};

}  // namespace tutti
