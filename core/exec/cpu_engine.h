// The CPU engine: LocalTasks on host memory with the vectorised CPU kernels (kernels/cpu).
//
//   kInline: the task runs inside Post, on the posting thread (no hand-off; the default, and
//            what small messages want).
//   kWorker: tasks run on a worker thread of the engine, in order, while the posting thread goes
//            on progressing messages (large reductions overlap communication).
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

#include "core/exec/local_engine.h"

namespace tutti::exec {

// Runs one task now on the calling thread (what every CPU path shares).
Status RunCpuTask(const LocalTask& task);

class CpuEngine : public LocalEngine {
 public:
  enum class Mode { kInline, kWorker };
  // `before_task` (optional) runs on the worker before each task; tests delay completions with it.
  explicit CpuEngine(Mode mode = Mode::kInline, std::function<void(const LocalTask&)> before_task = nullptr);
  ~CpuEngine() override;  // runs what is queued, then stops the worker
  CpuEngine(const CpuEngine&) = delete;
  CpuEngine& operator=(const CpuEngine&) = delete;

  std::string name() const override;
  Result<uint64_t> Post(const LocalTask& task) override;
  bool Test(uint64_t first, uint64_t last, Status* status) override;
  Mode mode() const { return mode_; }

 private:
  void WorkerLoop();

  const Mode mode_;
  const std::function<void(const LocalTask&)> before_task_;
  std::atomic<uint64_t> posted_{0};
  std::atomic<uint64_t> completed_{0};  // worker: every ticket <= completed_ has run
  TicketErrors errors_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::pair<uint64_t, LocalTask>> queue_;
  bool stop_ = false;
  std::thread worker_;
};

// "inline" or "worker" (TUTTI_LOCAL_ENGINE); anything else is kInvalidArgument.
Result<CpuEngine::Mode> ParseCpuEngineMode(const std::string& s);

}  // namespace tutti::exec
