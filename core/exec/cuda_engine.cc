#include "core/exec/cuda_engine.h"

#include <cuda_runtime.h>

#include "kernels/cuda/reduce.h"
#include "kernels/cuda/scale.h"

namespace tutti::exec {

namespace {

Status CudaStatus(const std::string& what, cudaError_t err) {
  return UnavailableError(what + ": " + cudaGetErrorString(err));
}

}  // namespace

Result<std::unique_ptr<CudaEngine>> CudaEngine::Create(int device, void* stream) {
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) return CudaStatus("CUDA engine: no usable device", err);
  if (device < 0 || device >= count)
    return InvalidArgument("CUDA engine: device " + std::to_string(device) + " outside 0.." + std::to_string(count - 1));
  if ((err = cudaSetDevice(device)) != cudaSuccess) return CudaStatus("CUDA engine: cudaSetDevice", err);
  bool owns = false;
  if (stream == nullptr) {
    cudaStream_t s;
    // A blocking stream: it runs after work queued earlier on the legacy default stream, so a
    // blocking collective sees what kernels there wrote before the call.
    if ((err = cudaStreamCreate(&s)) != cudaSuccess)
      return CudaStatus("CUDA engine: cudaStreamCreate", err);
    stream = s;
    owns = true;
  }
  return std::unique_ptr<CudaEngine>(new CudaEngine(device, stream, owns));
}

CudaEngine::~CudaEngine() {
  cudaSetDevice(device_);
  cudaStreamSynchronize(static_cast<cudaStream_t>(stream_));
  for (auto& [ticket, ev] : pending_) cudaEventDestroy(static_cast<cudaEvent_t>(ev));
  for (void* ev : spare_events_) cudaEventDestroy(static_cast<cudaEvent_t>(ev));
  if (owns_stream_) cudaStreamDestroy(static_cast<cudaStream_t>(stream_));
}

std::string CudaEngine::name() const { return "cuda:" + std::to_string(device_); }

Status CudaEngine::Enqueue(const LocalTask& t) {
  switch (t.kind) {
    case LocalTask::Kind::kCopy: {
      size_t bytes = 0;
      TUTTI_RETURN_IF_ERROR(CopyBytes(t, &bytes));
      if (bytes == 0) return OkStatus();
      const cudaError_t err =
          cudaMemcpyAsync(t.dst, t.srcs[0], bytes, cudaMemcpyDefault, static_cast<cudaStream_t>(stream_));
      return err == cudaSuccess ? OkStatus() : CudaStatus(t.Describe(), err);
    }
    case LocalTask::Kind::kReduce:
      if (t.nsrc > LocalTask::kMaxSrcs)
        return InvalidArgument("reduce: more than " + std::to_string(LocalTask::kMaxSrcs) + " sources");
      return cuda::ReduceNAsync(t.dst, t.srcs, t.nsrc, t.count, t.type, t.op, stream_);
    case LocalTask::Kind::kScale:
      return cuda::ScaleByAsync(t.dst, t.srcs[0], t.count, t.type, t.scalar, stream_);
    case LocalTask::Kind::kDivide:
      return cuda::DivideByAsync(t.dst, t.count, t.type, t.divisor, stream_);
  }
  return InvalidArgument("unknown local task kind " + std::to_string(static_cast<int>(t.kind)));
}

Result<uint64_t> CudaEngine::Post(const LocalTask& task) {
  std::lock_guard<std::mutex> lock(mu_);
  cudaError_t err = cudaSetDevice(device_);  // the device is per thread; posters may be any thread
  if (err != cudaSuccess) return CudaStatus(name() + ": cudaSetDevice", err);
  const uint64_t ticket = ++posted_;
  errors_.Record(ticket, Enqueue(task));
  cudaEvent_t ev = nullptr;
  if (!spare_events_.empty()) {
    ev = static_cast<cudaEvent_t>(spare_events_.back());
    spare_events_.pop_back();
  } else if ((err = cudaEventCreateWithFlags(&ev, cudaEventDisableTiming)) != cudaSuccess) {
    ev = nullptr;
  }
  if (ev != nullptr) err = cudaEventRecord(ev, static_cast<cudaStream_t>(stream_));
  if (ev == nullptr || err != cudaSuccess) {
    // No event to watch: finish the ticket the blocking way, so order and completion still hold.
    errors_.Record(ticket, CudaStatus(name() + ": event for " + task.Describe(), err));
    const cudaError_t sync = cudaStreamSynchronize(static_cast<cudaStream_t>(stream_));
    if (sync != cudaSuccess) errors_.Record(ticket, CudaStatus(name() + ": " + task.Describe(), sync));
    if (ev != nullptr) spare_events_.push_back(ev);
    // Earlier tickets are done too (the stream is in order).
    for (auto& [t, e] : pending_) spare_events_.push_back(e);
    pending_.clear();
    completed_.store(ticket, std::memory_order_release);
    return ticket;
  }
  pending_.emplace_back(ticket, ev);
  return ticket;
}

void CudaEngine::CompleteLocked(uint64_t ticket, void* event) {
  spare_events_.push_back(event);
  completed_.store(ticket, std::memory_order_release);
}

bool CudaEngine::Test(uint64_t first, uint64_t last, Status* status) {
  if (completed_.load(std::memory_order_acquire) < last) {
    std::lock_guard<std::mutex> lock(mu_);
    while (!pending_.empty()) {
      auto [ticket, ev] = pending_.front();
      const cudaError_t err = cudaEventQuery(static_cast<cudaEvent_t>(ev));
      if (err == cudaErrorNotReady) break;
      // An error here is the device's (a fault in a kernel is sticky): this ticket carries it.
      if (err != cudaSuccess) errors_.Record(ticket, CudaStatus(name() + ": local task " + std::to_string(ticket), err));
      pending_.pop_front();
      CompleteLocked(ticket, ev);
    }
    if (completed_.load(std::memory_order_acquire) < last) return false;
  }
  if (status != nullptr) *status = errors_.First(first, last);
  return true;
}

}  // namespace tutti::exec
