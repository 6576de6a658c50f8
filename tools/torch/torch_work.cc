#include "tools/torch/torch_work.h"

#include <ATen/core/jit_type.h>
#include <c10/util/Exception.h>

namespace tutti::torch_backend {

std::exception_ptr ToException(const Status& st) {
  return std::make_exception_ptr(
      c10::DistBackendError({__func__, __FILE__, static_cast<uint32_t>(__LINE__)}, "tutti: " + st.ToString()));
}

void Throw(const Status& st) { std::rethrow_exception(ToException(st)); }

void CallState::Complete(std::exception_ptr e) {
  // Called by the one waiting thread, without mu_ held while copying.
  if (!e) {
    try {
      for (auto& [dst, src] : copy_back) dst.copy_(src);
      if (finish) finish();
    } catch (...) {
      e = std::current_exception();
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  error_ = e;
  done_ = true;
  waiting_ = false;
  cv_.notify_all();
}

std::exception_ptr CallState::Finish(double wait_s) {
  {
    std::unique_lock<std::mutex> lock(mu_);
    if (done_) return error_;
    if (waiting_) {
      // Another thread waits on the works; it finishes within the call's timeout.
      cv_.wait(lock, [&] { return done_; });
      return error_;
    }
    waiting_ = true;
  }
  Status first;
  for (Work& w : works) {
    Status st = w.Wait(wait_s < 0 ? timeout_s : wait_s);
    if (!st.ok() && first.ok()) first = st;
  }
  if (first.ok() && works.size() == 1) source.store(works[0].source());
  Complete(first.ok() ? nullptr : ToException(first));
  std::lock_guard<std::mutex> lock(mu_);
  return error_;
}

bool CallState::Poll() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (done_) return true;
    if (waiting_) return false;
  }
  for (Work& w : works)
    if (!w.Test()) return false;
  Finish(-1);  // everything completed: does not block
  return true;
}

bool CallState::done() const {
  std::lock_guard<std::mutex> lock(mu_);
  return done_;
}

std::exception_ptr CallState::error() const {
  std::lock_guard<std::mutex> lock(mu_);
  return error_;
}

namespace {

// Finishes `state` (its works have completed: this does not block) and completes `future`.
void FinishAndComplete(CallState& state, const c10::intrusive_ptr<c10::ivalue::Future>& future) {
  std::exception_ptr e = state.Finish(-1);
  if (!future) return;
  // The future's callbacks run here, with no lock of ours held.
  if (e)
    future->setError(e);
  else
    future->markCompleted(c10::IValue(state.outputs));
}

}  // namespace

void Completer::Adopt(std::shared_ptr<CallState> state, c10::intrusive_ptr<c10::ivalue::Future> future) {
  struct Pending {
    std::shared_ptr<CallState> state;
    c10::intrusive_ptr<c10::ivalue::Future> future;
    std::atomic<size_t> left;
  };
  auto p = std::make_shared<Pending>();
  p->state = std::move(state);
  p->future = std::move(future);
  p->left = p->state->works.size() + 1;  // + 1 until every function is set
  auto one_done = [p] {
    if (p->left.fetch_sub(1, std::memory_order_acq_rel) == 1) FinishAndComplete(*p->state, p->future);
  };
  for (Work& w : p->state->works) {
    // Refused only once the communicator is destroyed, which has completed its works: the
    // state then finishes without waiting.
    if (!comm_->OnComplete(w, [one_done](const Status&) { one_done(); }).ok()) one_done();
  }
  one_done();
}

TuttiWork::TuttiWork(int rank, c10d::OpType type, std::shared_ptr<CallState> state, std::shared_ptr<Completer> completer)
    : c10d::Work(rank, type), state_(std::move(state)), completer_(std::move(completer)) {}

TuttiWork::~TuttiWork() {
  // The call may still be reading or writing the buffers it keeps: the completer keeps them until
  // it ends.
  if (!state_->done()) completer_->Adopt(state_, nullptr);
}

bool TuttiWork::isCompleted() { return state_->Poll(); }

bool TuttiWork::isSuccess() const { return state_->done() && !state_->error(); }

std::exception_ptr TuttiWork::exception() const { return state_->error(); }

int TuttiWork::sourceRank() const { return state_->source.load(); }

std::vector<at::Tensor> TuttiWork::result() { return state_->outputs; }

bool TuttiWork::wait(std::chrono::milliseconds timeout) {
  double wait_s = timeout == kNoTimeout ? -1 : static_cast<double>(timeout.count()) / 1000.0;
  if (std::exception_ptr e = state_->Finish(wait_s)) std::rethrow_exception(e);
  return true;
}

c10::intrusive_ptr<c10::ivalue::Future> TuttiWork::getFuture() {
  std::lock_guard<std::mutex> lock(future_mu_);
  if (future_) return future_;
  future_ = c10::make_intrusive<c10::ivalue::Future>(c10::ListType::create(c10::TensorType::get()));
  if (state_->done()) {
    if (std::exception_ptr e = state_->error())
      future_->setError(e);
    else
      future_->markCompleted(c10::IValue(state_->outputs));
  } else {
    completer_->Adopt(state_, future_);
  }
  return future_;
}

}  // namespace tutti::torch_backend
