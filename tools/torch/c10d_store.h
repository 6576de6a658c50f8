// C10dStore: torch's rendezvous store (c10d::Store: TCPStore, FileStore, a PrefixStore per
// process group) seen as a tutti::Store, so a process group's ranks form their communicator
// through the store torch.distributed already made, with no address or port of our own.
#pragma once

#include <torch/csrc/distributed/c10d/Store.hpp>

#include "core/store/store.h"

namespace tutti::torch_backend {

class C10dStore : public Store {
 public:
  explicit C10dStore(c10::intrusive_ptr<::c10d::Store> store) : store_(std::move(store)) {}

  Status Set(const std::string& key, const std::string& value) override;
  Result<std::string> Get(const std::string& key, double timeout_s) override;
  Result<int64_t> Add(const std::string& key, int64_t delta) override;
  Status Wait(const std::vector<std::string>& keys, double timeout_s) override;
  Result<bool> Check(const std::vector<std::string>& keys) override;
  Status Delete(const std::string& key) override;

 private:
  c10::intrusive_ptr<::c10d::Store> store_;
};

}  // namespace tutti::torch_backend
