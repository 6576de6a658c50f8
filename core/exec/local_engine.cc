#include "core/exec/local_engine.h"

#include <chrono>
#include <thread>

#include "core/base/deadline.h"

namespace tutti::exec {

Status LocalEngine::Wait(uint64_t first, uint64_t last, double timeout_s) {
  Status st;
  const auto deadline = std::chrono::steady_clock::now() + WaitDuration(timeout_s);
  for (int spins = 0;; ++spins) {
    if (Test(first, last, &st)) return st;
    if (std::chrono::steady_clock::now() >= deadline)
      return TimeoutError(name() + ": local tasks " + std::to_string(first) + ".." + std::to_string(last) +
                              " not finished after " + std::to_string(timeout_s) + " s");
    if (spins < 64)
      std::this_thread::yield();
    else
      std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

void TicketErrors::Record(uint64_t ticket, Status st) {
  if (st.ok()) return;
  std::lock_guard<std::mutex> lock(mu_);
  errors_.emplace(ticket, std::move(st));
  if (errors_.size() > kKept) errors_.erase(errors_.begin());
  any_.store(true, std::memory_order_release);
}

Status TicketErrors::First(uint64_t first, uint64_t last) const {
  if (!any_.load(std::memory_order_acquire)) return OkStatus();
  std::lock_guard<std::mutex> lock(mu_);
  auto it = errors_.lower_bound(first);
  if (it == errors_.end() || it->first > last) return OkStatus();
  return it->second;
}

}  // namespace tutti::exec
