#include "core/mem/registration_cache.h"

#include <cstdint>

namespace tutti {

RegistrationCache::RegistrationCache(const MemoryProbe* probe) : probe_(probe) {}

const MemoryProbe& RegistrationCache::probe() {
  if (probe_ == nullptr) probe_ = &SystemMemoryProbe();
  return *probe_;
}

RegistrationCache::Map::iterator RegistrationCache::FindLocked(uintptr_t p, size_t n) {
  // Candidates start at or below p. Registrations are few (buffers a program registers), so a
  // walk down from the closest base is cheap; a covering range need not be the closest one
  // when ranges overlap.
  auto it = by_base_.upper_bound(Key{p, UINT64_MAX});
  while (it != by_base_.begin()) {
    --it;
    if (it->second.reg->Covers(p, n)) return it;
  }
  return by_base_.end();
}

Result<std::shared_ptr<const Registration>> RegistrationCache::Register(const void* ptr, size_t bytes) {
  const uintptr_t p = reinterpret_cast<uintptr_t>(ptr);
  if (ptr == nullptr || bytes == 0) return InvalidArgument("register: null pointer or 0 bytes");
  if (p + bytes < p) return InvalidArgument("register: range wraps around the address space");
  std::lock_guard<std::mutex> lock(mu_);
  auto it = FindLocked(p, bytes);
  if (it != by_base_.end()) {
    ++it->second.holders;
    return std::shared_ptr<const Registration>(it->second.reg);
  }
  auto reg = std::make_shared<Registration>();
  reg->base = p;
  reg->bytes = bytes;
  reg->mem = probe().Probe(ptr);
  reg->id = next_id_++;
  by_base_.emplace(Key{p, reg->id}, Entry{reg, 1});
  return std::shared_ptr<const Registration>(reg);
}

Status RegistrationCache::Deregister(const std::shared_ptr<const Registration>& reg) {
  if (!reg) return InvalidArgument("deregister: null handle");
  std::lock_guard<std::mutex> lock(mu_);
  auto it = by_base_.find(Key{reg->base, reg->id});
  if (it == by_base_.end() || it->second.reg.get() != reg.get())
    return InvalidArgument("deregister: handle " + std::to_string(reg->id) +
                           " is not registered with this communicator (deregistered twice?)");
  if (--it->second.holders == 0) by_base_.erase(it);
  return OkStatus();
}

std::shared_ptr<const Registration> RegistrationCache::Lookup(const void* ptr, size_t n, bool revalidate) {
  const uintptr_t p = reinterpret_cast<uintptr_t>(ptr);
  std::lock_guard<std::mutex> lock(mu_);
  if (by_base_.empty()) return nullptr;
  auto it = FindLocked(p, n);
  if (it == by_base_.end()) return nullptr;
  if (revalidate && probe().knows_devices()) {
    MemInfo now = probe().Probe(reinterpret_cast<const void*>(it->second.reg->base));
    if (!(now == it->second.reg->mem)) {  // freed and allocated again: the facts are stale
      by_base_.erase(it);
      return nullptr;
    }
  }
  return it->second.reg;
}

size_t RegistrationCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return by_base_.size();
}

size_t RegistrationCache::holders(uint64_t id) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [key, e] : by_base_)
    if (key.second == id) return e.holders;
  return 0;
}

void RegistrationCache::Clear() {
  std::lock_guard<std::mutex> lock(mu_);
  by_base_.clear();
}

}  // namespace tutti
