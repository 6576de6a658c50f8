// The collective executor: runs one rank's Schedule (algorithms/schedule.h) over the
// point-to-point engine, with the reduction kernels for local operations.
//
// A CollectiveRun is a non-blocking state machine: Advance() posts a stream's step, checks its
// messages and, once they are all done, runs the step's local operations and moves on. Streams
// advance independently. Every message of a collective carries a negative tag derived from the
// collective's sequence number and stream, and the call's signature, so a mismatched call on
// another rank is reported instead of being silently matched.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "algorithms/schedule.h"
#include "core/p2p/engine.h"
#include "kernels/dtype.h"

namespace tutti {

struct CollBuffers {
  const char* input = nullptr;
  char* output = nullptr;
  uint64_t input_count = 0;   // elements, for bounds checks
  uint64_t output_count = 0;
};

class CollectiveRun {
 public:
  // `op` is what local reductions apply (sum for avg/premul_sum, which `finalize` completes).
  // `scratch` holds at least schedule.scratch_count elements.
  CollectiveRun(std::shared_ptr<P2PEngine> engine, algo::Schedule schedule, CollBuffers bufs,
                std::shared_ptr<char> scratch, DataType type, RedOp op, uint32_t sig, uint64_t seq,
                std::string what, std::function<Status()> finalize);

  // Validates every region of the schedule against the buffers (once, before running).
  Status Validate() const;
  // Makes whatever progress is possible without blocking; true once finished. Thread-safe.
  bool Advance();
  bool done() const { return done_.load(std::memory_order_acquire); }
  // Grows whenever a step of some stream completes (for waiters deciding whether to back off).
  uint64_t steps_done() const { return steps_done_.load(std::memory_order_relaxed); }
  Status status() const;
  // Stops the run with `why` (e.g. a timeout) unless it already finished.
  void Fail(const Status& why);
  // "all_reduce #3 (...): stream 0 at step 2 of 6, waiting for rank 1" — for timeouts.
  std::string Progress() const;
  const std::string& what() const { return what_; }
  const std::shared_ptr<P2PEngine>& engine() const { return engine_; }

  static constexpr int kMaxStreams = 1024;

 private:
  struct StreamState {
    size_t step = 0;
    bool posted = false;
    std::vector<std::shared_ptr<Op>> ops;
  };
  char* Ptr(const algo::Region& r) const;
  Status PostStep(size_t s);
  Status RunLocals(const algo::Step& step);
  void Finish(Status st);
  int Tag(size_t stream) const;

  std::shared_ptr<P2PEngine> engine_;
  algo::Schedule schedule_;
  CollBuffers bufs_;
  std::shared_ptr<char> scratch_;
  DataType type_;
  RedOp op_;
  size_t elem_;
  uint32_t sig_;
  uint64_t seq_;
  std::string what_;
  std::function<Status()> finalize_;

  mutable std::mutex mu_;
  std::vector<StreamState> streams_;
  Status status_;
  std::atomic<bool> done_{false};
  std::atomic<uint64_t> steps_done_{0};
};

}  // namespace tutti
