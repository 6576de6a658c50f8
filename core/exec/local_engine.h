// Local execution engines: where a collective's copies and reductions run. A caller posts a
// LocalTask and gets a ticket; the task completes later and the caller tests its ticket, so
// no thread blocks per step (the executor, core/coll/executor.h, polls tickets as it polls
// messages). Tasks posted to one engine run in the order they were posted, as on a CUDA
// stream, so a step's tasks may depend on each other and Test(first, last) needs only `last`
// to know they all finished.
//
// Engines: the CPU engine (cpu_engine.h; inline in Post, or on a worker thread) and the CUDA
// engine (cuda_engine.h; our kernels and copies on a stream, an event per ticket).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "core/exec/local_task.h"
#include "core/base/status.h"

namespace tutti::exec {

class LocalEngine {
 public:
  virtual ~LocalEngine() = default;
  // "cpu-inline", "cpu-worker", "cuda:0", ...
  virtual std::string name() const = 0;
  // Enqueues `task` and returns its ticket (1, 2, ...: larger than every earlier ticket of
  // this engine). A task that cannot run (bad arguments) still gets a ticket; its error is
  // reported by Test. An error here means the engine itself is unusable.
  virtual Result<uint64_t> Post(const LocalTask& task) = 0;
  // True once every task up to `last` has finished; then *status (if not null) is the first
  // failure among tickets [first, last], or OK. Never blocks. Tickets must be ones this caller
  // was given by Post.
  virtual bool Test(uint64_t first, uint64_t last, Status* status) = 0;
  // Blocks until Test(first, last) is true or `timeout_s` passes (kTimeout).
  virtual Status Wait(uint64_t first, uint64_t last, double timeout_s);
};

// The failures of tasks, by ticket, for engines to report in Test. Failures are rare (invalid
// arguments the caller did not check); the last kKept are remembered.
class TicketErrors {
 public:
  static constexpr size_t kKept = 1024;
  void Record(uint64_t ticket, Status st);
  // The first failure among [first, last], or OK. Lock-free while no failure was ever recorded.
  Status First(uint64_t first, uint64_t last) const;

 private:
  std::atomic<bool> any_{false};
  mutable std::mutex mu_;
  std::map<uint64_t, Status> errors_;
};

}  // namespace tutti::exec
