// Work: the handle of an asynchronous operation (isend/irecv, or a collective).
#pragma once

#include <memory>

#include "core/p2p/engine.h"
#include "core/base/status.h"

namespace tutti {

// What a Work waits on; implemented for point-to-point operations and collectives.
class WorkImpl {
 public:
  virtual ~WorkImpl() = default;
  virtual Status Wait(double timeout_s) = 0;
  virtual bool Test() = 0;
  virtual bool IsCompleted() const = 0;
  virtual Status status() const = 0;
  // The rank a completed receive's message came from; -1 for anything else.
  virtual int source() const { return -1; }
};

class Work {
 public:
  Work() = default;
  explicit Work(std::shared_ptr<WorkImpl> impl) : impl_(std::move(impl)) {}
  // A point-to-point operation of `engine`.
  Work(std::shared_ptr<P2PEngine> engine, std::shared_ptr<Op> op);

  // Blocks until the operation finishes or timeout_s passes (< 0: the communicator's timeout).
  Status Wait(double timeout_s = -1) {
    if (!impl_) return InvalidUsage("Wait on an empty Work");
    return impl_->Wait(timeout_s);
  }
  // Makes progress without blocking; true once finished (then status() tells how).
  bool Test() { return impl_ && impl_->Test(); }
  bool IsCompleted() const { return impl_ && impl_->IsCompleted(); }
  // False for a default-constructed Work (one no call made).
  bool valid() const { return impl_ != nullptr; }
  Status status() const {
    if (!IsCompleted()) return InvalidUsage("operation not complete");
    return impl_->status();
  }
  // Who sent the message a completed receive got (what an any-source receive, kAnySource,
  // reports); -1 before completion and for sends and collectives.
  int source() const { return IsCompleted() ? impl_->source() : -1; }

 private:
  std::shared_ptr<WorkImpl> impl_;
};

namespace internal {
class P2PWork : public WorkImpl {
 public:
  P2PWork(std::shared_ptr<P2PEngine> engine, std::shared_ptr<Op> op) : engine_(std::move(engine)), op_(std::move(op)) {}
  Status Wait(double timeout_s) override { return engine_->Wait(op_, timeout_s); }
  bool Test() override { return engine_->Test(op_); }
  bool IsCompleted() const override { return op_->done.load(std::memory_order_acquire); }
  Status status() const override { return op_->status; }
  int source() const override { return op_->kind == Op::Kind::kRecv && op_->status.ok() ? op_->peer : -1; }

 private:
  std::shared_ptr<P2PEngine> engine_;
  std::shared_ptr<Op> op_;
};
}  // namespace internal

inline Work::Work(std::shared_ptr<P2PEngine> engine, std::shared_ptr<Op> op)
    : impl_(std::make_shared<internal::P2PWork>(std::move(engine), std::move(op))) {}

}  // namespace tutti
