// TuttiWork: torch's Work for a call the tutti backend started, and the Completer that finishes
// calls nobody waits for.
//
// A torch call becomes one or more asynchronous tutti calls (CallState::works) on buffers the
// call keeps alive (CallState::keep), followed on success by copies into the caller's tensors
// (CallState::copy_back, CallState::finish). Work::wait() waits on the calling thread. A future
// (Work::getFuture, as DDP's communication hooks use) and a Work dropped before its call ended are
// handed to the Completer, which asks the communicator to run a function when the call's works
// complete (Communicator::OnComplete): that function finishes the call and completes the future,
// as soon as the call ends, whatever the order calls end in. The function keeps the call's
// buffers, so they outlive the call even when the caller forgets the Work.
#pragma once

#include <ATen/core/ivalue.h>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <atomic>
#include <condition_variable>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "core/base/status.h"
#include "core/communicator.h"
#include "core/work.h"

namespace tutti::torch_backend {

// A tutti failure as the exception torch raises for backend errors (c10::DistBackendError,
// torch.distributed.DistBackendError in Python), with tutti's message.
std::exception_ptr ToException(const Status& st);
[[noreturn]] void Throw(const Status& st);

struct CallState {
  std::vector<Work> works;
  std::vector<at::Tensor> keep;                               // buffers the works read or write
  std::vector<std::pair<at::Tensor, at::Tensor>> copy_back;  // (caller's tensor, buffer) on success
  std::function<void()> finish;                               // more copies on success, after copy_back
  std::vector<at::Tensor> outputs;                            // Work::result(), the future's value
  double timeout_s = -1;                                      // < 0: the communicator's
  std::atomic<int> source{-1};                                // a receive's sender, once finished

  // Waits for every work (timeout_s < 0: this call's timeout) and finishes once: copies on
  // success, or the first failure. Several threads may call it; one waits on tutti's works, the
  // others for it. Returns the failure (nullptr on success).
  std::exception_ptr Finish(double timeout_s);
  // True when finished; finishes without blocking when every work has completed.
  bool Poll();
  bool done() const;
  std::exception_ptr error() const;

 private:
  void Complete(std::exception_ptr e);
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  bool waiting_ = false;  // a thread is waiting on the works
  std::exception_ptr error_;
};

class Completer {
 public:
  explicit Completer(std::shared_ptr<Communicator> comm) : comm_(std::move(comm)) {}
  // Finishes `state` once all its works have completed (on the communicator's completion thread,
  // or at once when they already have), then completes `future` (if any) with the state's outputs
  // or its failure. Destroying the communicator completes what is pending, with its error.
  void Adopt(std::shared_ptr<CallState> state, c10::intrusive_ptr<c10::ivalue::Future> future);

 private:
  std::shared_ptr<Communicator> comm_;
};

class TuttiWork : public c10d::Work {
 public:
  TuttiWork(int rank, c10d::OpType type, std::shared_ptr<CallState> state, std::shared_ptr<Completer> completer);
  ~TuttiWork() override;

  bool isCompleted() override;
  bool isSuccess() const override;
  std::exception_ptr exception() const override;
  // The sender of a finished receive (recv from any source), else -1.
  int sourceRank() const override;
  std::vector<at::Tensor> result() override;
  void synchronize() override {}
  // Waits for the call (kNoTimeout: the call's timeout); a call that does not end in time fails
  // (tutti's timeout semantics). Throws the call's failure.
  bool wait(std::chrono::milliseconds timeout = kNoTimeout) override;
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override;

 private:
  std::shared_ptr<CallState> state_;
  std::shared_ptr<Completer> completer_;
  c10::intrusive_ptr<c10::ivalue::Future> future_;
  std::mutex future_mu_;
};

}  // namespace tutti::torch_backend
