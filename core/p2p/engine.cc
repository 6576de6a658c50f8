// P2PEngine: connections, posting operations, failures, shutdown. Progress and waiting are in
// engine_progress.cc, frame handling in engine_protocol.cc.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdint>

#include "core/base/logging.h"
#include "core/p2p/engine.h"

namespace tutti {

namespace {
using Clock = std::chrono::steady_clock;
}  // namespace

P2PEngine::P2PEngine(const EngineOptions& opts)
    : opts_(opts), peers_(opts.size), live_(new std::atomic<Connection*>[opts.size]) {
  for (int i = 0; i < opts.size; ++i) live_[i].store(nullptr);
  last_check_ = Clock::now();
}

P2PEngine::~P2PEngine() {
  StopProgressThread();
  std::lock_guard<std::mutex> lock(mu_);
  FailAllLocked(AbortedError("rank " + std::to_string(opts_.rank) + ": communicator destroyed"));
  for (Peer& p : peers_)
    if (p.conn) p.conn->Close();
}

void P2PEngine::SetConnection(int peer, std::unique_ptr<Connection> conn) {
  std::lock_guard<std::mutex> lock(mu_);
  Peer& p = peers_[peer];
  if (p.conn || !failed_.ok() || aborted_.load()) {  // arrived after the end (lazy): unused
    conn->Close();
    return;
  }
  p.conn = std::move(conn);
  p.last_heard = Clock::now();
  TransportContext* ctx = nullptr;
  for (auto& [name, c] : contexts_)
    if (name == p.conn->name()) ctx = c.get();
  if (ctx == nullptr) {
    contexts_.emplace_back(p.conn->name(), std::make_unique<PollEveryConnection>());
    ctx = contexts_.back().second.get();
  }
  ctx->Attach(p.conn.get());
  live_[peer].store(p.conn.get(), std::memory_order_release);
  {
    std::lock_guard<std::mutex> fl(fds_mu_);
    p.conn->AppendWaitFds(&wait_fds_);
  }
  // Sends posted while the connection was being made go out now, in the order posted.
  std::deque<std::shared_ptr<Op>> deferred = std::move(p.deferred);
  for (auto& op : deferred) StartSendLocked(p, op);
  ProgressLocked();
}

void P2PEngine::AddContext(const std::string& transport, std::unique_ptr<TransportContext> ctx) {
  std::lock_guard<std::mutex> lock(mu_);
  contexts_.emplace_back(transport, std::move(ctx));
}

void P2PEngine::ConnectFailed(int peer, const Status& why) {
  std::lock_guard<std::mutex> lock(mu_);
  if (peers_[peer].conn || !failed_.ok()) return;
  TUTTI_LOG(Warn, P2P, "rank %d: %s", opts_.rank, why.ToString().c_str());
  FailAllLocked(why);
  SayGoodbyeLocked();
}

std::string P2PEngine::TransportName(int peer) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (peer < 0 || peer >= opts_.size) return "none";
  if (peer == opts_.rank) return "self";
  return peers_[peer].conn ? peers_[peer].conn->name() : "none";
}

Status P2PEngine::failure() const {
  if (!has_failed_.load(std::memory_order_acquire)) return OkStatus();
  std::lock_guard<std::mutex> lock(mu_);
  return failed_;
}

Status P2PEngine::CheckPostable(int peer, const char* what, size_t bytes, int tag) const {
  // Every post passes here: the messages are built only when something is wrong.
  const bool bad_peer = peer < 0 || peer >= opts_.size || peer == opts_.rank;
  if (!bad_peer && !aborted_.load() && failed_.ok() && (peers_[peer].conn || connector_)) return OkStatus();
  const std::string me = "rank " + std::to_string(opts_.rank);
  const std::string op = std::string(what) + " of " + std::to_string(bytes) + " bytes";
  if (peer < 0 || peer >= opts_.size)
    return InvalidArgument(me + ": " + op + " names rank " + std::to_string(peer) + ", outside 0.." +
                           std::to_string(opts_.size - 1));
  if (peer == opts_.rank) return InvalidArgument(me + ": " + op + " to itself");
  if (aborted_.load()) return AbortedError(me + ": communicator aborted");
  if (!failed_.ok()) return failed_;
  return InvalidUsage(me + ": no connection to rank " + std::to_string(peer));
}

Result<std::shared_ptr<Op>> P2PEngine::PostSend(const void* buf, size_t bytes, int peer, int tag, uint32_t sig) {
  return Post(Op::Kind::kSend, const_cast<void*>(buf), bytes, peer, tag, sig);
}

Result<std::shared_ptr<Op>> P2PEngine::PostRecv(void* buf, size_t bytes, int peer, int tag, uint32_t sig, bool copy) {
  return Post(Op::Kind::kRecv, buf, bytes, peer, tag, sig, copy);
}

Result<std::shared_ptr<Op>> P2PEngine::Post(Op::Kind kind, void* buf, size_t bytes, int peer, int tag, uint32_t sig,
                                             bool copy) {
  if (bytes > 0 && buf == nullptr)
    return InvalidArgument("rank " + std::to_string(opts_.rank) + ": null buffer for " + std::to_string(bytes) + " bytes");
  if (kind == Op::Kind::kRecv && peer == kAnySource) return PostAnySourceRecv(buf, bytes, tag);
  auto op = std::make_shared<Op>();
  op->kind = kind;
  op->peer = peer;
  op->tag = tag;
  op->buf = static_cast<char*>(buf);
  op->size = bytes;
  op->sig = sig;
  op->copy = copy;
  {
    std::lock_guard<std::mutex> lock(mu_);
    TUTTI_RETURN_IF_ERROR(CheckPostable(peer, kind == Op::Kind::kSend ? "send" : "recv", bytes, tag));
    Peer& p = peers_[peer];
    op->seq = next_seq_++;
    if (!p.closed.ok()) {
      if (kind == Op::Kind::kSend) return p.closed.WithContext("rank " + std::to_string(opts_.rank) + ": " + op->Describe());
    }
    pending_.fetch_add(1);
    if (!p.conn && !p.connect_requested) {
      p.connect_requested = true;
      connector_(peer);
    }
    if (kind == Op::Kind::kSend) {
      if (p.conn) {
        StartSendLocked(p, op);
      } else {
        p.deferred.push_back(op);
      }
    } else {
      if (std::shared_ptr<Incoming> in = p.unexpected.PopFront(tag)) {
        MatchLocked(p, op, in);
      } else if (!p.closed.ok()) {
        Complete(op, p.closed.WithContext("rank " + std::to_string(opts_.rank) + ": " + op->Describe()));
      } else {
        p.posted.Push(tag, op);
      }
    }
    TUTTI_LOG(Trace, P2P, "posted %s", op->Describe().c_str());
    // Only this peer's connection: a send goes out (or is queued) as it is started; what other
    // connections have is left to the next progress pass, which the caller's wait makes anyway
    // (a pass asks every transport's context, an epoll_wait for tcp, per posted operation).
    ProgressPeerLocked(peer);
  }
  return op;
}

Result<std::shared_ptr<Op>> P2PEngine::PostAnySourceRecv(void* buf, size_t bytes, int tag) {
  const std::string me = "rank " + std::to_string(opts_.rank);
  const std::string what = "recv of " + std::to_string(bytes) + " bytes from any rank";
  if (tag < 0) return InvalidArgument(me + ": " + what + " with tag " + std::to_string(tag) + ": user tags (>= 0) only");
  if (opts_.size < 2) return InvalidArgument(me + ": " + what + " in a communicator of one rank: nobody can send");
  auto op = std::make_shared<Op>();
  op->kind = Op::Kind::kRecv;
  op->peer = kAnySource;
  op->any_source = true;
  op->tag = tag;
  op->buf = static_cast<char*>(buf);
  op->size = bytes;
  std::lock_guard<std::mutex> lock(mu_);
  if (aborted_.load()) return AbortedError(me + ": communicator aborted");
  if (!failed_.ok()) return failed_;
  op->seq = next_seq_++;
  pending_.fetch_add(1);
  // The earliest message with this tag that arrived unmatched, from whichever rank.
  int from = -1;
  uint64_t first = UINT64_MAX;
  bool open = false;
  for (int i = 0; i < opts_.size; ++i) {
    if (i == opts_.rank) continue;
    const Peer& p = peers_[i];
    open = open || p.closed.ok();
    const std::shared_ptr<Incoming>* early = p.unexpected.Front(tag);
    if (early && (*early)->arrival < first) {
      first = (*early)->arrival;
      from = i;
    }
  }
  if (from >= 0) {
    op->peer = from;
    MatchLocked(peers_[from], op, peers_[from].unexpected.PopFront(tag));
  } else if (!open) {
    Complete(op, RemoteError(me + ": " + op->Describe() + ": every other rank has closed its communicator"));
  } else {
    any_posted_.Push(tag, op);
  }
  TUTTI_LOG(Trace, P2P, "posted %s", op->Describe().c_str());
  ProgressLocked();
  return op;
}

std::shared_ptr<Op> P2PEngine::TakePostedLocked(Peer& p, int peer, int tag) {
  if (any_posted_.empty()) return p.posted.PopFront(tag);
  const std::shared_ptr<Op>* any = any_posted_.Front(tag);
  if (!any) return p.posted.PopFront(tag);
  const std::shared_ptr<Op>* mine = p.posted.Front(tag);
  if (mine && (*mine)->seq < (*any)->seq) return p.posted.PopFront(tag);
  std::shared_ptr<Op> op = any_posted_.PopFront(tag);
  op->peer = peer;
  return op;
}

void P2PEngine::AddUnexpectedLocked(Peer& p, std::shared_ptr<Incoming> in) {
  in->arrival = next_arrival_++;
  const int tag = in->tag;
  p.unexpected.Push(tag, std::move(in));
}

void P2PEngine::FailAnySourceLocked(const Status& why) {
  any_posted_.ForEach([&](int, const std::shared_ptr<Op>& op) {
    Complete(op, why.WithContext("rank " + std::to_string(opts_.rank) + ": " + op->Describe()));
  });
  any_posted_.Clear();
}

void P2PEngine::Complete(const std::shared_ptr<Op>& op, Status st) {
  if (op->done.load(std::memory_order_relaxed)) return;
  op->status = std::move(st);
  op->done.store(true, std::memory_order_release);
  pending_.fetch_sub(1);
}


void P2PEngine::FailPeerOpsLocked(Peer& p, const Status& why) {
  // The failed operations' owners may free or reuse their buffers once they are completed: first
  // nothing queued or posted may touch them any more (nor, over shm, a copy of the peer's).
  if (p.conn) p.conn->ReleaseBuffers();
  auto fail = [&](const std::shared_ptr<Op>& op) {
    if (op) Complete(op, why.WithContext("rank " + std::to_string(opts_.rank) + ": " + op->Describe()));
  };
  for (auto& [id, op] : p.sends) fail(op);
  for (auto& [id, op] : p.bulk_recvs) fail(op);
  for (auto& op : p.streaming) fail(op);
  p.posted.ForEach([&](int, const std::shared_ptr<Op>& op) { fail(op); });
  p.unexpected.ForEach([&](int, const std::shared_ptr<Incoming>& in) { fail(in->waiting); });
  fail(p.cur_op);
  if (p.cur_in) fail(p.cur_in->waiting);
  for (auto& op : p.deferred) fail(op);
  p.deferred.clear();
  if (!p.accesses.empty()) {
    for (auto& [cookie, a] : p.accesses) fail(a.op);
    accesses_posted_.fetch_sub(static_cast<int>(p.accesses.size()));
    p.accesses.clear();
  }
  p.sends.clear();
  p.bulk_recvs.clear();
  p.streaming.clear();
  p.posted.Clear();
  p.cur_op.reset();
  p.cur_in.reset();
  p.eager_inflight = 0;
}

void P2PEngine::FailAllLocked(const Status& why) {
  if (failed_.ok()) {
    failed_ = why;
    has_failed_.store(true, std::memory_order_release);
    if (failure_hook_) failure_hook_(why);
  }
  FailAnySourceLocked(why);
  // Every connection stops its peer's copies first, so that the waits for copies still running
  // (FailPeerOpsLocked lets go of each connection's buffers) overlap.
  for (Peer& p : peers_)
    if (p.conn) p.conn->BeginRelease();
  for (Peer& p : peers_) {
    FailPeerOpsLocked(p, why);
    p.unexpected.Clear();
  }
}

void P2PEngine::FailPeerLocked(int peer, const Status& why, bool whole_communicator) {
  Status st = why.code() == Code::kRemoteError || why.code() == Code::kProtocol ||
                      why.code() == Code::kSystemError
                  ? Status(why.code(), "rank " + std::to_string(peer) + " failed: " + why.message())
                  : why;
  TUTTI_LOG(Warn, P2P, "rank %d: connection to rank %d failed: %s", opts_.rank, peer, st.ToString().c_str());
  if (peers_[peer].conn) peers_[peer].conn->Close();
  if (peers_[peer].closed.ok()) peers_[peer].closed = st;
  if (whole_communicator) {
    FailAllLocked(st);
  } else {
    FailPeerOpsLocked(peers_[peer], st);
  }
}

void P2PEngine::SayGoodbyeLocked() {
  // Once: a queued CLOSE frame points into close_reason_.
  if (said_goodbye_) return;
  said_goodbye_ = true;
  close_reason_ = failed_.ok() ? "" : failed_.message().substr(0, kMaxCloseReasonBytes);
  for (Peer& p : peers_)
    if (p.conn && p.closed.ok()) SendControlLocked(p, FrameType::kClose, 0, 0, &close_reason_);
}

void P2PEngine::Fail(const Status& why) {
  std::lock_guard<std::mutex> lock(mu_);
  FailAllLocked(why);
}

void P2PEngine::FailAndNotify(const Status& why) {
  std::lock_guard<std::mutex> lock(mu_);
  FailAllLocked(why);
  SayGoodbyeLocked();
  ProgressLocked();
}

std::vector<int> P2PEngine::PeersWithForeignMessages(int tag, uint32_t sig) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<int> out;
  for (size_t i = 0; i < peers_.size(); ++i) {
    const TagQueues<Incoming>::Queue* q = peers_[i].unexpected.Find(tag);
    if (!q) continue;
    bool foreign = false;
    q->ForEach([&](const std::shared_ptr<Incoming>& in) { foreign = foreign || in->sig != sig; });
    if (foreign) out.push_back(static_cast<int>(i));
  }
  return out;
}

P2PEngine::Stats P2PEngine::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  Stats st;
  st.pending_ops = static_cast<size_t>(std::max(0, pending_.load()));
  for (const Peer& p : peers_) {
    st.tracked += p.sends.size() + p.bulk_recvs.size() + p.streaming.size() + p.deferred.size() + p.accesses.size();
    st.tag_queues += p.posted.tags() + p.unexpected.tags();
    st.tracked += p.posted.items() + p.unexpected.items();
  }
  st.tag_queues += any_posted_.tags();
  st.tracked += any_posted_.items();
  return st;
}

void P2PEngine::Abort(const std::string& why) {
  aborted_.store(true);
  std::lock_guard<std::mutex> lock(mu_);
  FailAllLocked(AbortedError("rank " + std::to_string(opts_.rank) + ": communicator aborted" +
                             (why.empty() ? "" : " (" + why + ")")));
  // One non-blocking attempt to tell peers, so they fail now instead of at their timeout.
  SayGoodbyeLocked();
  ProgressLocked();
  for (Peer& p : peers_)
    if (p.conn) p.conn->Close();
}

void P2PEngine::Shutdown() {
  StopProgressThread();
  std::unique_lock<std::mutex> lock(mu_);
  SayGoodbyeLocked();
  const auto deadline = Clock::now() + std::chrono::seconds(2);
  while (Clock::now() < deadline) {
    ProgressLocked();
    bool flushed = true;
    for (Peer& p : peers_)
      if (p.conn && p.closed.ok() && p.conn->queued_bytes() > 0) flushed = false;
    if (flushed) break;
    lock.unlock();
    timespec ts{0, 100000};
    nanosleep(&ts, nullptr);
    lock.lock();
  }
  FailAllLocked(InvalidUsage("rank " + std::to_string(opts_.rank) + ": communicator destroyed"));
  for (Peer& p : peers_)
    if (p.conn) p.conn->Close();
}

}  // namespace tutti
