// Registered memory of one communicator: register once, reuse for every message in the range.
//
// Register(p, n) returns a handle to a registration covering [p, p+n): an existing one that
// covers the range (its count of holders goes up) or a new one, for which the memory kind is
// probed once. Deregister drops a holder; the last one removes the registration. Lookup(p, n)
// is the per-message question "is this range registered, and what is it?" (a map lookup, no
// driver call). A registration carries the memory's kind and, per transport, what that transport
// made of it (an IPC handle, a memory region, ...), released with the registration.
//
// Freed memory: the owner deregisters before freeing (as with ncclCommDeregister). Where the
// probe knows allocations (CUDA), Lookup(..., revalidate) also checks that the allocation is
// still the one that was registered and drops a stale registration instead of using it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "core/mem/mem_kind.h"
#include "core/base/status.h"

namespace tutti {

struct Registration {
  uintptr_t base = 0;
  size_t bytes = 0;
  MemInfo mem;
  uint64_t id = 0;  // unique within the cache
  // What each transport made of this memory, keyed by transport name; released (by the
  // shared_ptr's deleter) when the registration goes.
  std::map<std::string, std::shared_ptr<void>> transport_state;
  bool Covers(uintptr_t p, size_t n) const { return p >= base && n <= bytes && p - base <= bytes - n; }
};

class RegistrationCache {
 public:
  // probe: nullptr = SystemMemoryProbe(), looked up on the first registration (so a cache that
  // is never used never loads the CUDA driver). Not owned; must outlive the cache.
  explicit RegistrationCache(const MemoryProbe* probe = nullptr);
  RegistrationCache(const RegistrationCache&) = delete;
  RegistrationCache& operator=(const RegistrationCache&) = delete;

  // kInvalidArgument for a null pointer or 0 bytes or a range that wraps around.
  Result<std::shared_ptr<const Registration>> Register(const void* p, size_t bytes);
  // kInvalidArgument if `reg` is not (or no longer) registered here.
  Status Deregister(const std::shared_ptr<const Registration>& reg);
  // The registration covering [p, p+n), or nullptr. With revalidate (and a probe that knows
  // devices) a registration whose allocation changed is dropped and nullptr returned.
  std::shared_ptr<const Registration> Lookup(const void* p, size_t n, bool revalidate = false);

  size_t size() const;          // registrations held
  size_t holders(uint64_t id) const;  // holders of registration `id` (0 if gone)
  // Removes every registration (communicator destroyed).
  void Clear();

 private:
  struct Entry {
    std::shared_ptr<Registration> reg;
    size_t holders = 0;
  };
  using Key = std::pair<uintptr_t, uint64_t>;  // base address, registration id
  using Map = std::map<Key, Entry>;
  // An entry whose range covers [p, p+n), or end(); mu_ held.
  Map::iterator FindLocked(uintptr_t p, size_t n);

  const MemoryProbe& probe();  // mu_ held
  const MemoryProbe* probe_;
  mutable std::mutex mu_;
  Map by_base_;  // ranges may overlap, several may share a base
  uint64_t next_id_ = 1;
};

}  // namespace tutti
