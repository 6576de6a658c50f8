// P2PEngine: progress and waiting. A progress pass asks each transport's context which
// connections have work and drives them (ProgressLocked); a thread that waits for an operation
// drives progress itself (spin, yield, then sleep on the transports' wake-ups); the progress
// thread moves along what nobody waits on and sends heartbeats.
#include <poll.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdint>

#include "core/base/deadline.h"
#include "core/base/logging.h"
#include "core/p2p/engine.h"
#include "core/p2p/waiter.h"

namespace tutti {

namespace {
using Clock = std::chrono::steady_clock;
constexpr auto kPeerCheckInterval = std::chrono::milliseconds(100);
constexpr int kMaxSleepUs = 1000;
}  // namespace

bool P2PEngine::ProgressLocked() {
  bool moved = false;
  for (Peer& p : peers_)
    if (p.conn && p.closed.ok() && !p.streaming.empty()) PumpStreamingLocked(p);
  // One question per transport: which of its connections may have work. (The list is taken
  // out of the member while in use, should a handler below ever progress again.)
  std::vector<Connection*> ready;
  ready.swap(ready_);
  ready.clear();
  for (auto& [name, ctx] : contexts_) ctx->Ready(&ready);
  for (Connection* conn : ready) {
    const int i = conn->peer();
    if (peers_[i].conn.get() != conn) continue;
    moved = ProgressPeerLocked(i) || moved;
  }
  ready_.swap(ready);
  return moved;
}

bool P2PEngine::ProgressPeerLocked(int i) {
  Peer& p = peers_[i];
  if (!p.conn || !p.closed.ok()) return false;
  Result<bool> r = p.conn->Progress(*this);
  if (r.ok()) return *r;
  if (!p.closed.ok()) {  // the peer said CLOSE, then its end went away: expected
    p.conn->Close();
    return false;
  }
  FailPeerLocked(i, r.status(), true);
  return false;
}

void P2PEngine::CheckPeersLocked() {
  auto now = CoarseNow();  // on every progress pass: the cheap clock
  if (now - last_check_ < kPeerCheckInterval) return;
  last_check_ = now;
  for (size_t i = 0; i < peers_.size(); ++i) {
    Peer& p = peers_[i];
    if (!p.conn || !p.closed.ok()) continue;
    Status st = p.conn->CheckPeerAlive();
    if (!st.ok()) FailPeerLocked(static_cast<int>(i), st, true);
  }
  if (opts_.heartbeat_timeout_s > 0) HeartbeatLocked(now);
}

void P2PEngine::HeartbeatLocked(Clock::time_point now) {
  const auto timeout = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(opts_.heartbeat_timeout_s));
  const auto interval = timeout / 10;
  // Silence counts only while we listened: if this process did not run for a while (stopped,
  // starved, a debugger), what the peers sent meanwhile is still unread, not missing.
  if (now - last_heartbeat_check_ > 2 * interval + kPeerCheckInterval)
    for (Peer& p : peers_) p.last_heard = std::max(p.last_heard, now - interval);
  last_heartbeat_check_ = now;
  const bool ping = now - last_ping_ >= interval;
  if (ping) last_ping_ = now;
  for (size_t i = 0; i < peers_.size(); ++i) {
    Peer& p = peers_[i];
    if (!p.conn || !p.closed.ok() || !failed_.ok()) continue;
    if (now - p.last_heard > timeout) {
      char secs[32];
      snprintf(secs, sizeof(secs), "%.3g", std::chrono::duration<double>(now - p.last_heard).count());
      FailPeerLocked(static_cast<int>(i),
                     UnavailableError("rank " + std::to_string(opts_.rank) + ": nothing heard from rank " + std::to_string(i) + " for " +
                                      secs + " s, not even a heartbeat (TUTTI_HEARTBEAT_TIMEOUT): it is stopped or "
                                      "hung, or the network between us is down"),
                     true);
      SayGoodbyeLocked();
      return;
    }
    if (ping) SendControlLocked(p, FrameType::kPing, 0, 0);
  }
}

bool P2PEngine::Test(const std::shared_ptr<Op>& op) {
  if (op->done.load(std::memory_order_acquire)) return true;
  Poll();
  return op->done.load(std::memory_order_acquire);
}

bool P2PEngine::RunAccesses() {
  if (accesses_posted_.load(std::memory_order_acquire) <= 0) return false;
  bool ran = false;
  // A connection, once installed, stays until the engine is destroyed (Close keeps the object).
  for (int i = 0; i < opts_.size; ++i)
    if (Connection* c = live_[i].load(std::memory_order_acquire)) ran = c->RunAccesses() || ran;
  return ran;
}

Status P2PEngine::Wait(const std::shared_ptr<Op>& op, double timeout_s) {
  if (op->done.load(std::memory_order_acquire)) return op->status;  // finished while it was posted
  waiters_.fetch_add(1);
  struct Leave {
    std::atomic<int>& n;
    ~Leave() { n.fetch_sub(1); }
  } leave{waiters_};
  auto aborted = [&] {
    return AbortedError("rank " + std::to_string(opts_.rank) + ": communicator aborted during " + op->Describe());
  };
  // A peer a moment behind: caught before any clock or waiter bookkeeping (a clock read costs as
  // much as a poll).
  for (int i = 0; i < 16 && opts_.spin_us > 0; ++i) {
    if (aborted_.load(std::memory_order_relaxed)) return aborted();
    const bool moved = Poll();
    if (op->done.load(std::memory_order_acquire)) return op->status;
#if defined(__x86_64__) || defined(__i386__)
    if (!moved) __builtin_ia32_pause();
#endif
  }
  if (timeout_s < 0) timeout_s = opts_.timeout_s;
  const auto start = Clock::now();
  const auto deadline = start + WaitDuration(timeout_s);  // inf / NaN (TUTTI_TIMEOUT=inf): ~3 years
  // (An any-source receive may wait for any rank.)
  const int spin_us =
      op->peer >= 0 ? SpinUs(op->peer, op->peer + 1, opts_.spin_us) : SpinUs(0, opts_.size, opts_.spin_us);
  Waiter waiter(spin_us, opts_.yield_us, [this](int us) { BlockUntilActivity(us); });
  // While spinning, a few polls per look at the clock.
  const int polls = spin_us > 0 ? 8 : 1;
  while (true) {
    bool moved = false;
    for (int i = 0; i < polls && !moved; ++i) {
      if (op->done.load(std::memory_order_acquire)) return op->status;
      if (aborted_.load(std::memory_order_relaxed)) return aborted();
      moved = Poll();
      if (op->done.load(std::memory_order_acquire)) return op->status;
    }
    auto now = Clock::now();
    if (now >= deadline) {
      std::lock_guard<std::mutex> lock(mu_);
      if (op->done.load()) return op->status;
      return TimeoutLocked(op, std::chrono::duration<double>(now - start).count());
    }
    waiter.Pause(moved, now);
  }
}

Status P2PEngine::TimeoutLocked(const std::shared_ptr<Op>& op, double waited_s) {
  char secs[32];
  snprintf(secs, sizeof(secs), "%.3g", waited_s);
  std::string what = "rank " + std::to_string(opts_.rank) + ": " + op->Describe() + " timed out after " + secs + " s";
  if (op->peer == kAnySource) {  // an any-source receive nothing matched: withdrawn
    any_posted_.Remove(op->tag, op);
    Complete(op, TimeoutError(what + ": no message with its tag arrived from any rank"));
    return op->status;
  }
  Peer& p = peers_[op->peer];
  if (op->kind == Op::Kind::kRecv && !op->matched) {
    p.posted.Remove(op->tag, op);
    Complete(op, TimeoutError(what + ": no matching send from rank " + std::to_string(op->peer) + " arrived"));
    return op->status;
  }
  std::string why = !p.conn ? ": no connection to rank " + std::to_string(op->peer) + " yet (lazy connection)"
                    : op->kind == Op::Kind::kSend && !op->matched
                        ? ": rank " + std::to_string(op->peer) + " did not post a matching recv"
                        : ": the transfer did not finish";
  Status st = TimeoutError(what + why + " (the communicator is unusable now)");
  FailAllLocked(st);
  return st;
}

bool P2PEngine::Poll() {
  bool moved = false;
  {
    std::unique_lock<std::mutex> lock(mu_, std::try_to_lock);
    if (lock.owns_lock()) {
      moved = ProgressLocked();
      CheckPeersLocked();
    }
  }
  return RunAccesses() || moved;
}

void P2PEngine::BlockUntilActivity(int timeout_us) {
  std::vector<int> fds;
  {
    std::lock_guard<std::mutex> fl(fds_mu_);
    fds = wait_fds_;
  }
  if (wake_ == nullptr && fds.empty()) {
    timespec ts{0, timeout_us * 1000L};
    nanosleep(&ts, nullptr);
    return;
  }
  uint32_t seen = wake_ ? wake_->Prepare() : 0;
  if (!Poll()) {
    if (!fds.empty()) {
      // TCP peers: block on their sockets (shm peers, if any, are checked again within 1 ms).
      std::vector<pollfd> pfds;
      for (int fd : fds) pfds.push_back({fd, POLLIN, 0});
      poll(pfds.data(), pfds.size(), std::max(1, std::min(timeout_us / 1000, 1)));
    } else {
      wake_->Wait(seen, timeout_us);
    }
  }
  if (wake_) wake_->Done();
}

void P2PEngine::SetBackgroundWork(std::function<bool()> fn) { background_work_ = std::move(fn); }

void P2PEngine::StartProgressThread() {
  progress_thread_ = std::thread([this] { ProgressThreadMain(); });
}

void P2PEngine::StopProgressThread() {
  {
    std::lock_guard<std::mutex> l(thread_mu_);
    stop_thread_ = true;
  }
  thread_cv_.notify_all();
  if (!progress_thread_.joinable()) return;
  // The last reference to the engine can be dropped by the progress thread itself (it holds
  // collectives in flight for a moment); it cannot join itself, so it lets itself go.
  if (progress_thread_.get_id() == std::this_thread::get_id()) {
    progress_thread_.detach();
  } else {
    progress_thread_.join();
  }
}

void P2PEngine::ProgressThreadMain() {
  // Moves operations along that nobody is waiting on (an isend whose Wait comes much later).
  // It is never woken per operation: it naps, briefly while such work exists, and longer (up to
  // 20 ms) while there is none, so an idle communicator costs next to nothing.
  int nap_us = 1000;
  auto last_beat = Clock::now();
  while (true) {
    {
      std::unique_lock<std::mutex> l(thread_mu_);
      thread_cv_.wait_for(l, std::chrono::microseconds(nap_us), [&] { return stop_thread_; });
      if (stop_thread_) return;
    }
    bool background = waiters_.load() == 0 && background_work_ && background_work_();
    if (!background && (pending_.load() == 0 || waiters_.load() > 0)) {
      nap_us = std::min(nap_us * 2, 20000);
      // Idle, or a waiting thread polls: heartbeats still go out and come in when due.
      if (opts_.heartbeat_timeout_s > 0 && waiters_.load() == 0 &&
          Clock::now() - last_beat >= std::chrono::duration<double>(opts_.heartbeat_timeout_s / 20)) {
        last_beat = Clock::now();
        std::unique_lock<std::mutex> lock(mu_, std::try_to_lock);
        if (lock.owns_lock()) {
          ProgressLocked();
          CheckPeersLocked();
        }
      }
      continue;
    }
    const bool moved = Poll();
    nap_us = moved || background ? 20 : std::min(nap_us * 2, kMaxSleepUs);
  }
}

}  // namespace tutti
