// The CUDA engine: LocalTasks on device-accessible memory (device, managed or mapped pinned
// host memory) as our kernels (kernels/cuda) and copies on one CUDA stream. Each ticket is an
// event recorded after its task; Test queries the events in order, so it never blocks and a
// caller (the executor) keeps progressing messages while the device works. The header needs no
// CUDA headers: streams are passed as void* (a cudaStream_t).
#pragma once

#include <atomic>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "core/exec/local_engine.h"

namespace tutti::exec {

class CudaEngine : public LocalEngine {
 public:
  // Runs on `device`, on `stream` (not owned; it must outlive the engine) or, when null, on a
  // stream of its own that orders after the legacy default stream (cudaStreamDefault flags). kUnavailable (naming the runtime's reason) without a usable
  // device.
  static Result<std::unique_ptr<CudaEngine>> Create(int device, void* stream = nullptr);
  ~CudaEngine() override;  // waits for everything posted
  CudaEngine(const CudaEngine&) = delete;
  CudaEngine& operator=(const CudaEngine&) = delete;

  std::string name() const override;  // "cuda:<device>"
  Result<uint64_t> Post(const LocalTask& task) override;
  bool Test(uint64_t first, uint64_t last, Status* status) override;
  void* stream() const { return stream_; }
  int device() const { return device_; }

 private:
  CudaEngine(int device, void* stream, bool owns_stream) : device_(device), stream_(stream), owns_stream_(owns_stream) {}
  Status Enqueue(const LocalTask& task);
  void CompleteLocked(uint64_t ticket, void* event);

  const int device_;
  void* const stream_;
  const bool owns_stream_;
  std::mutex mu_;
  uint64_t posted_ = 0;
  std::atomic<uint64_t> completed_{0};
  std::deque<std::pair<uint64_t, void*>> pending_;  // (ticket, cudaEvent_t), in ticket order
  std::vector<void*> spare_events_;
  TicketErrors errors_;
};

}  // namespace tutti::exec
