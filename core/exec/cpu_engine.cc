#include "core/exec/cpu_engine.h"

#include <cstring>

#include "kernels/cpu/reduce.h"

namespace tutti::exec {

Status RunCpuTask(const LocalTask& t) {
  switch (t.kind) {
    case LocalTask::Kind::kCopy: {
      size_t bytes = 0;
      TUTTI_RETURN_IF_ERROR(CopyBytes(t, &bytes));
      if (bytes > 0) std::memmove(t.dst, t.srcs[0], bytes);
      return OkStatus();
    }
    case LocalTask::Kind::kReduce:
      if (t.nsrc > LocalTask::kMaxSrcs)
        return InvalidArgument("reduce: more than " + std::to_string(LocalTask::kMaxSrcs) + " sources");
      return kernels::ReduceN(t.dst, t.srcs, t.nsrc, t.count, t.type, t.op);
    case LocalTask::Kind::kScale:
      return kernels::ScaleBy(t.dst, t.srcs[0], t.count, t.type, t.scalar);
    case LocalTask::Kind::kDivide:
      return kernels::DivideBy(t.dst, t.count, t.type, t.divisor);
  }
  return InvalidArgument("unknown local task kind " + std::to_string(static_cast<int>(t.kind)));
}

CpuEngine::CpuEngine(Mode mode, std::function<void(const LocalTask&)> before_task)
    : mode_(mode), before_task_(std::move(before_task)) {
  if (mode_ == Mode::kWorker) worker_ = std::thread([this] { WorkerLoop(); });
}

CpuEngine::~CpuEngine() {
  if (!worker_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  worker_.join();
}

std::string CpuEngine::name() const { return mode_ == Mode::kInline ? "cpu-inline" : "cpu-worker"; }

Result<uint64_t> CpuEngine::Post(const LocalTask& task) {
  if (mode_ == Mode::kInline) {
    const uint64_t ticket = posted_.fetch_add(1, std::memory_order_relaxed) + 1;
    errors_.Record(ticket, RunCpuTask(task));
    return ticket;
  }
  uint64_t ticket;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_) return InvalidUsage(name() + ": task posted to a stopped engine");
    ticket = posted_.fetch_add(1, std::memory_order_relaxed) + 1;
    queue_.emplace_back(ticket, task);
  }
  cv_.notify_one();
  return ticket;
}

bool CpuEngine::Test(uint64_t first, uint64_t last, Status* status) {
  // Inline: a ticket exists only once its task ran.
  if (mode_ == Mode::kWorker && completed_.load(std::memory_order_acquire) < last) return false;
  if (status != nullptr) *status = errors_.First(first, last);
  return true;
}

void CpuEngine::WorkerLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and everything posted has run
    auto [ticket, task] = queue_.front();
    queue_.pop_front();
    lock.unlock();
    if (before_task_) before_task_(task);
    errors_.Record(ticket, RunCpuTask(task));
    completed_.store(ticket, std::memory_order_release);
    lock.lock();
  }
}

Result<CpuEngine::Mode> ParseCpuEngineMode(const std::string& s) {
  if (s.empty() || s == "inline") return CpuEngine::Mode::kInline;
  if (s == "worker") return CpuEngine::Mode::kWorker;
  return InvalidArgument("TUTTI_LOCAL_ENGINE: \"" + s + "\" is not inline or worker");
}

}  // namespace tutti::exec
