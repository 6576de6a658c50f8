// A collective in flight on one rank: the interface the registry of a communicator's collectives
// (core/coll/coll_registry.h) and its Work handles drive. Implementations: CollectiveRun (a
// schedule over point-to-point messages, core/coll/executor.h) and SlotRun (the shared-memory
// slots of a single-host communicator, core/coll/slot_run.h).
#pragma once

#include <cstdint>
#include <string>

#include "core/base/status.h"

namespace tutti {

class CollRun {
 public:
  virtual ~CollRun() = default;
  // Makes whatever progress is possible without blocking; true once finished. Thread-safe.
  virtual bool Advance() = 0;
  virtual bool done() const = 0;
  // Grows whenever the run moves (for waiters deciding whether to back off).
  virtual uint64_t steps_done() const = 0;
  virtual Status status() const = 0;
  // Stops the run with `why` (e.g. a timeout) unless it already finished.
  virtual void Fail(const Status& why) = 0;
  // Where it is, for timeouts: "stream 0 at step 2 of 6, receiving from rank 1".
  virtual std::string Progress() const = 0;
  // The call, "all_reduce (ring, count 2, float32, sum)".
  virtual std::string what() const = 0;
};

}  // namespace tutti
