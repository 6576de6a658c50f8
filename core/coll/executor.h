// The collective executor: runs one rank's Schedule (algorithms/schedule.h) over the
// point-to-point engine, with its local operations posted to a local execution engine
// (core/exec/local_engine.h: CPU inline or worker, CUDA stream).
//
// A CollectiveRun is a non-blocking state machine; no thread blocks on any of its steps.
// Advance() first posts the call's `before` tasks (a private copy of the input, premul_sum's
// scaling) and, once they completed, lets the streams go: each posts a step's messages, checks
// them and, once they are all done, posts the step's local operations and checks their tickets
// before moving on; after the last step of every stream it posts the `after` tasks (avg's
// division) and finishes when they complete. Streams advance independently. A run that fails
// waits for the local tasks it posted (bounded work) before it reports, so the caller may free
// its buffers as soon as the run is done. Every message of a collective carries a negative tag derived from the
// collective's sequence number and stream, and the call's signature, so a mismatched call on
// another rank is reported instead of being silently matched.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "algorithms/schedule.h"
#include "core/exec/local_engine.h"
#include "core/p2p/engine.h"
#include "core/base/dtype.h"
#include "core/coll/run.h"

namespace tutti {

struct CollBuffers {
  const char* input = nullptr;
  char* output = nullptr;
  uint64_t input_count = 0;   // elements, for bounds checks
  uint64_t output_count = 0;
};

// Names a call in messages, "all_reduce (ring, count 2, float32, sum)"; formatted only when a
// message needs it.
struct CollLabel {
  const char* name = nullptr;  // null: desc is the whole text
  std::shared_ptr<const std::string> desc;
  // Or the text made on demand from `arg` (which must outlive the label).
  std::string (*describe)(const void* arg) = nullptr;
  const void* arg = nullptr;
  static CollLabel Of(std::string text) { return {nullptr, std::make_shared<const std::string>(std::move(text))}; }
  std::string Text() const {
    if (describe != nullptr) return describe(arg);
    const std::string d = desc ? *desc : std::string();
    if (name == nullptr) return d;
    return desc ? std::string(name) + " (" + d + ")" : std::string(name);
  }
};

// Local tasks of a call around its schedule, and what keeps their buffers alive.
struct CollLocalWork {
  std::vector<exec::LocalTask> before;  // before any message (they prepare the input)
  std::vector<exec::LocalTask> after;   // after every stream finished (they finish the output)
  std::shared_ptr<void> keep;           // released when the run is destroyed
};

// Page-locked host mirrors of a call's device buffers (CUDA path, staged through the host).
// When enabled, every message goes through the mirror at the same offset: a copy from the
// device buffer into the mirror before a send, and from the mirror into the device buffer after
// a receive, both posted to the local engine; local operations run on the device buffers.
struct CollStaging {
  bool enabled = false;
  char* input = nullptr;
  char* output = nullptr;
  char* scratch = nullptr;
};

class CollectiveRun : public CollRun {
 public:
  // `op` is what local reductions apply (sum for avg/premul_sum, which `extra` completes).
  // `scratch` holds at least schedule.scratch_count elements.
  CollectiveRun(std::shared_ptr<P2PEngine> engine, std::shared_ptr<exec::LocalEngine> local,
                std::shared_ptr<const algo::Schedule> schedule, CollBuffers bufs, std::shared_ptr<char> scratch,
                DataType type, RedOp op, uint32_t sig, uint64_t seq, CollLabel label, CollLocalWork extra,
                CollStaging staging = {});
  ~CollectiveRun() override;

  // Validates every region of the schedule against the buffers (once, before running).
  Status Validate() const;
  // Receives are posted as copies (P2PEngine::PostRecv's `copy`), which a connection with
  // one-sided access serves by reading: the collective combines nothing into what it receives
  // (all_gather, gather, scatter, all_to_all; a block parked in scratch is only copied on), or
  // reading measured faster (see the callers). Before the first Advance.
  void SetCopyReceives(bool on) { copy_recvs_ = on; }
  // Makes whatever progress is possible without blocking; true once finished. Thread-safe.
  bool Advance() override;
  bool done() const override { return done_.load(std::memory_order_acquire); }
  // Grows whenever a step of some stream completes (for waiters deciding whether to back off).
  uint64_t steps_done() const override { return steps_done_.load(std::memory_order_relaxed); }
  Status status() const override;
  // Stops the run with `why` (e.g. a timeout) unless it already finished.
  void Fail(const Status& why) override;
  // "stream 0 at step 2 of 6, receiving from rank 1" — for timeouts.
  std::string Progress() const override;
  std::string what() const override;
  const std::shared_ptr<P2PEngine>& engine() const { return engine_; }

  static constexpr int kMaxStreams = 1024;

 private:
  // Tickets [first, last] of posted local tasks; empty when first > last.
  struct Tickets {
    uint64_t first = 1, last = 0;
    bool empty() const { return first > last; }
  };
  // A step: (staging) copies of what it sends into the mirrors; its messages; (staging) copies
  // of what it received out of the mirrors, and its local operations.
  enum class StepPhase { kStart, kStageOut, kMessages, kLocals };
  struct StreamState {
    size_t step = 0;
    StepPhase phase = StepPhase::kStart;
    Tickets tickets;  // local tasks of the phase
    std::vector<std::shared_ptr<Op>> ops;
  };
  enum class Phase { kStart, kBefore, kStreams, kAfter };
  char* Ptr(const algo::Region& r) const;
  char* MsgPtr(const algo::Region& r) const;  // the mirror when staging, else Ptr
  Status PostStaging(const std::vector<algo::Transfer>& transfers, bool to_mirror, Tickets* t);
  Status PostStep(size_t s);
  Status Post(const exec::LocalTask& task, Tickets* t);
  Status PostLocals(const algo::Step& step, Tickets* t);
  // True when `t` completed (or is empty); a failure goes to *st.
  bool LocalsDone(const Tickets& t, Status* st);
  bool AdvanceStreams(Status* st);
  void Finish(Status st);
  void DrainLocals();
  int Tag(size_t stream) const;

  std::shared_ptr<P2PEngine> engine_;
  std::shared_ptr<exec::LocalEngine> local_;
  std::shared_ptr<const algo::Schedule> schedule_;
  CollBuffers bufs_;
  std::shared_ptr<char> scratch_;
  DataType type_;
  RedOp op_;
  size_t elem_;
  uint32_t sig_;
  uint64_t seq_;
  CollLabel label_;
  CollLocalWork extra_;
  CollStaging staging_;
  bool copy_recvs_ = false;

  mutable std::mutex mu_;
  Phase phase_ = Phase::kStart;
  Tickets extra_tickets_;  // of the `before` or `after` tasks, by phase
  bool local_failure_ = false;  // the failure came from a local task, not from a message
  std::vector<StreamState> streams_;
  Status status_;
  std::atomic<bool> done_{false};
  std::atomic<uint64_t> steps_done_{0};
};

}  // namespace tutti
