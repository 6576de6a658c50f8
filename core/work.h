// Work: the handle of an asynchronous operation (isend/irecv now; collectives later).
#pragma once

#include <memory>

#include "core/p2p/engine.h"
#include "core/status.h"

namespace tutti {

class Work {
 public:
  Work() = default;
  Work(std::shared_ptr<P2PEngine> engine, std::shared_ptr<Op> op)
      : engine_(std::move(engine)), op_(std::move(op)) {}

  // Blocks until the operation finishes or timeout_s passes (< 0: the communicator's timeout).
  Status Wait(double timeout_s = -1) {
    if (!op_) return InvalidUsage("Wait on an empty Work");
    return engine_->Wait(op_, timeout_s);
  }
  // Makes progress without blocking; true once finished (then status() tells how).
  bool Test() { return op_ && engine_->Test(op_); }
  bool IsCompleted() const { return op_ && op_->done.load(std::memory_order_acquire); }
  Status status() const {
    if (!IsCompleted()) return InvalidUsage("operation not complete");
    return op_->status;
  }

 private:
  std::shared_ptr<P2PEngine> engine_;
  std::shared_ptr<Op> op_;
};

}  // namespace tutti
