#include "transport/shm/shm_connection.h"

#include <signal.h>
#include <unistd.h>

#include <sched.h>

#include <chrono>
#include <cstring>

#include "core/base/logging.h"
#include "core/base/process.h"

namespace tutti {

namespace {
constexpr char kCmaTag[4] = {'c', 'm', 'a', '1'};
struct CmaDescriptor {
  char tag[4];
  int32_t pid;
  uint64_t addr;
  uint64_t len;
};
constexpr int kMaxFramesPerProgress = 64;
}  // namespace

Result<std::unique_ptr<ShmConnection>> ShmConnection::Make(int peer, pid_t peer_pid,
                                                           std::unique_ptr<ShmSegment> seg,
                                                           bool creator, bool lower,
                                                           const ShmOptions& opts) {
  if (seg->size() != SegmentBytes(opts)) return InternalError("shm segment size mismatch");
  auto c = std::unique_ptr<ShmConnection>(new ShmConnection(peer, peer_pid, opts));
  char* base = static_cast<char*>(seg->data());
  char* ring0 = base;  // lower -> higher
  char* ring1 = base + ShmRing::BytesFor(opts.fifo_bytes);
  if (creator) {
    ShmRing::Format(ring0, opts.fifo_bytes);
    ShmRing::Format(ring1, opts.fifo_bytes);
  }
  // (The pages are reserved already, by the creator's fallocate: this only maps them.)
  if (!seg->Populate()) TUTTI_LOG(Trace, Shm, "shm segment %s: pages fault in on first use", seg->name().c_str());
  TUTTI_RETURN_IF_ERROR(c->out_.Attach(lower ? ring0 : ring1, opts.fifo_bytes));
  TUTTI_RETURN_IF_ERROR(c->in_.Attach(lower ? ring1 : ring0, opts.fifo_bytes));
  // The guard lines follow the rings (zero in a fresh segment): the lower rank's first.
  Guard* guards = reinterpret_cast<Guard*>(base + 2 * ShmRing::BytesFor(opts.fifo_bytes));
  c->my_guard_ = &guards[lower ? 0 : 1];
  c->peer_guard_ = &guards[lower ? 1 : 0];
  c->seg_ = std::move(seg);
  return c;
}

Status ShmConnection::Enqueue(const FrameHeader& h, const void* payload, uint64_t cookie) {
  if (closed_) return InvalidUsage("shm connection to rank " + std::to_string(peer()) + " is closed");
  if (h.payload_len > max_payload())
    return InternalError("shm frame payload " + std::to_string(h.payload_len) + " > max");
  if (pending_.empty() && out_.TryWrite(h, payload)) {
    NoteSent(cookie);
    if (peer_bell_) peer_bell_->Ring();
    return OkStatus();
  }
  pending_.push_back({h, payload, cookie});
  queued_bytes_ += h.payload_len;
  return OkStatus();
}

bool ShmConnection::Flush() {
  bool moved = false;
  while (!pending_.empty()) {
    Pending& p = pending_.front();
    if (!out_.TryWrite(p.h, p.payload)) break;
    queued_bytes_ -= p.h.payload_len;
    NoteSent(p.cookie);
    pending_.pop_front();
    moved = true;
  }
  if (moved && peer_bell_) peer_bell_->Ring();
  return moved;
}

Result<bool> ShmConnection::Progress(FrameSink& sink) {
  if (closed_) return false;
  bool moved = false;
  for (auto& [cookie, st] : access_.TakeDone()) {
    sink.OnAccessDone(peer(), cookie, st);
    moved = true;
    if (closed_) return true;
  }
  moved = Flush() || moved;
  // Frames out before the ones that arrive are read: the protocol must learn that a send left
  // before it hears that the peer closed (and fails what is still in flight to it).
  moved = ReportSent(sink) || moved;
  bool consumed = false;
  for (int i = 0; i < kMaxFramesPerProgress; ++i) {
    FrameHeader h;
    TUTTI_ASSIGN_OR_RETURN(bool have, in_.Peek(&h, in_.max_payload()));
    if (!have) break;
    TUTTI_ASSIGN_OR_RETURN(void* dst, sink.OnHeader(peer(), h));
    in_.Consume(h, dst);
    consumed = true;
    TUTTI_RETURN_IF_ERROR(sink.OnFrame(peer(), h));
    moved = true;
    if (closed_) return true;
  }
  // A writer blocked on a full ring may be asleep: tell it there is room now.
  if (consumed && peer_bell_) peer_bell_->Ring();
  if (!pending_.empty()) moved = Flush() || moved;
  moved = ReportSent(sink) || moved;  // frames the sink queued meanwhile
  return moved;
}

Status ShmConnection::CheckPeerAlive() {
  if (peer_pid_ <= 0 || peer_pid_ == getpid()) return OkStatus();
  if (ProcessGone(peer_pid_))  // a killed peer that is not reaped yet counts as gone
    return RemoteError("rank " + std::to_string(peer()) + " (pid " + std::to_string(peer_pid_) +
                       ") has died");
  return OkStatus();
}

namespace {
class CmaRegion : public ExposedRegion {
 public:
  explicit CmaRegion(std::string d) : ExposedRegion(std::move(d)) {}
};
}  // namespace

std::shared_ptr<const ExposedRegion> ShmConnection::Expose(const void* buf, size_t len) {
  if (!opts_.use_cma) return nullptr;
  CmaDescriptor d;
  std::memcpy(d.tag, kCmaTag, 4);
  d.pid = getpid();
  d.addr = reinterpret_cast<uint64_t>(buf);
  d.len = len;
  return std::make_shared<CmaRegion>(std::string(reinterpret_cast<const char*>(&d), sizeof(d)));
}

Status ShmConnection::PostRead(const std::string& descriptor, size_t offset, void* dst, size_t len,
                               uint64_t cookie) {
  return PostAccess(descriptor, offset, dst, len, cookie, false);
}

Status ShmConnection::PostWrite(const void* src, const std::string& descriptor, size_t offset, size_t len,
                                uint64_t cookie) {
  return PostAccess(descriptor, offset, const_cast<void*>(src), len, cookie, true);
}

Status ShmConnection::PostAccess(const std::string& descriptor, size_t offset, void* local, size_t len,
                                 uint64_t cookie, bool write) {
  if (!opts_.use_cma) return UnavailableError("cross-memory attach disabled");
  if (closed_) return UnavailableError("connection to rank " + std::to_string(peer()) + " closed");
  CmaDescriptor d;
  if (descriptor.size() != sizeof(d)) return UnavailableError("not a CMA descriptor");
  std::memcpy(&d, descriptor.data(), sizeof(d));
  if (std::memcmp(d.tag, kCmaTag, 4) != 0) return UnavailableError("not a CMA descriptor");
  if (offset > d.len || len > d.len - offset)
    return ProtocolError("CMA range [" + std::to_string(offset) + ", +" + std::to_string(len) +
                         ") outside the peer's " + std::to_string(d.len) + "-byte buffer");
  if (d.pid != peer_pid_) return ProtocolError("CMA descriptor names another process");
  Access a;
  a.write = write;
  a.descriptor = descriptor;
  a.offset = offset;
  a.local = local;
  a.len = len;
  a.cookie = cookie;
  access_.Post(std::move(a));
  return OkStatus();
}

bool ShmConnection::RunAccesses() {
  if (!access_.has_queued()) return false;
  return access_.Run([this](const Access& a) { return Copy(a); });
}

// Runs without the protocol's lock: touches only the access (checked when posted), constants and
// the guard lines.
Status ShmConnection::Copy(const Access& a) const {
  my_guard_->busy.fetch_add(1, std::memory_order_seq_cst);
  Status st;
  if (peer_guard_->revoked.load(std::memory_order_seq_cst) != 0) {
    st = UnavailableError(std::string("rank ") + std::to_string(peer()) + " let go of the buffer this rank was to " +
                          (a.write ? "write into" : "read from") + " (its communicator failed or closed)");
  } else {
    st = CopyBytes(a);
  }
  my_guard_->busy.fetch_sub(1, std::memory_order_seq_cst);
  return st;
}

void ShmConnection::RevokeAndWait() {
  if (revoked_ || my_guard_ == nullptr) return;
  revoked_ = true;
  BeginRelease();
  if (peer_guard_->busy.load(std::memory_order_seq_cst) == 0) return;
  // A copy of the peer's is running on our memory: it ends by itself (a bounded copy), unless
  // the peer's process is gone (then nothing copies any more).
  const auto start = std::chrono::steady_clock::now();
  auto checked = start;
  while (peer_guard_->busy.load(std::memory_order_seq_cst) != 0) {
    const auto now = std::chrono::steady_clock::now();
    if (now - checked >= std::chrono::milliseconds(1)) {
      checked = now;
      if (peer_pid_ > 0 && peer_pid_ != getpid() && ProcessGone(peer_pid_)) return;
      if (now - start >= std::chrono::duration<double>(kGuardWaitSeconds)) {
        TUTTI_LOG(Warn, Shm, "rank %d's copy on the memory of this process (pid %d) still runs after %.0f s; going on",
                  peer(), static_cast<int>(getpid()), kGuardWaitSeconds);
        return;
      }
    }
    sched_yield();
  }
}

Status ShmConnection::CopyBytes(const Access& a) const {
  CmaDescriptor d;
  std::memcpy(&d, a.descriptor.data(), sizeof(d));
  Status st = CopyProcessMemory(d.pid, a.local, d.addr + a.offset, a.len, a.write);
  if (st.ok()) return st;
  return st.WithContext(std::string(a.write ? "writing to rank " : "reading from rank ") + std::to_string(peer()));
}

void ShmConnection::Close() {
  access_.Release();
  RevokeAndWait();
  if (closed_) return;
  closed_ = true;
  pending_.clear();
  my_guard_ = peer_guard_ = nullptr;  // (in the segment; no copy runs after access_.Release)
  seg_.reset();
}

}  // namespace tutti
