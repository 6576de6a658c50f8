#include "core/coll/plan_cache.h"

#include <functional>

namespace tutti {

size_t CollPlanKeyHash::operator()(const CollPlanKey& k) const {
  uint64_t h = k.count * 0x9E3779B97F4A7C15ull;
  h ^= (static_cast<uint64_t>(k.coll) << 48) ^ (static_cast<uint64_t>(k.type) << 40) ^
       (static_cast<uint64_t>(k.op) << 32) ^ (static_cast<uint64_t>(static_cast<uint32_t>(k.root)) << 8) ^
       static_cast<uint64_t>(static_cast<uint32_t>(k.nchannels));
  h *= 0xBF58476D1CE4E5B9ull;
  if (!k.algorithm.empty()) h ^= std::hash<std::string>()(k.algorithm);
  if (k.fused) h = ~h;
  if (k.distinct) h ^= 0x5bd1e995u;
  return static_cast<size_t>(h ^ (h >> 31));
}

std::shared_ptr<const CollPlan> PlanCache::Find(const CollPlanKey& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = plans_.find(key);
  return it == plans_.end() ? nullptr : it->second;
}

void PlanCache::Insert(const CollPlanKey& key, std::shared_ptr<const CollPlan> plan) {
  std::lock_guard<std::mutex> lock(mu_);
  if (plans_.size() >= kMaxPlans) plans_.clear();
  plans_[key] = std::move(plan);
}

size_t PlanCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return plans_.size();
}

}  // namespace tutti
