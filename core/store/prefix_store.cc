#include "core/store/prefix_store.h"

#include <utility>

namespace tutti {

PrefixStore::PrefixStore(std::string prefix, std::shared_ptr<Store> base)
    : prefix_(std::move(prefix)), base_(std::move(base)) {}

PrefixStore::PrefixStore(std::string prefix, Store* base)
    : prefix_(std::move(prefix)), base_(std::shared_ptr<Store>(), base) {}  // aliasing: no owner

std::vector<std::string> PrefixStore::Full(const std::vector<std::string>& keys) const {
  std::vector<std::string> out;
  out.reserve(keys.size());
  for (const std::string& k : keys) out.push_back(Full(k));
  return out;
}

Status PrefixStore::Set(const std::string& key, const std::string& value) {
  return base_->Set(Full(key), value);
}

Result<std::string> PrefixStore::Get(const std::string& key, double timeout_s) {
  return base_->Get(Full(key), timeout_s);
}

Result<int64_t> PrefixStore::Add(const std::string& key, int64_t delta) {
  return base_->Add(Full(key), delta);
}

Status PrefixStore::Wait(const std::vector<std::string>& keys, double timeout_s) {
  return base_->Wait(Full(keys), timeout_s);
}

Result<bool> PrefixStore::Check(const std::vector<std::string>& keys) {
  return base_->Check(Full(keys));
}

Status PrefixStore::Delete(const std::string& key) { return base_->Delete(Full(key)); }

}  // namespace tutti
