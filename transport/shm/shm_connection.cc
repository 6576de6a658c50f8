#include "transport/shm/shm_connection.h"

#include <signal.h>
#include <sys/uio.h>
#include <unistd.h>

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
  TUTTI_RETURN_IF_ERROR(c->out_.Attach(lower ? ring0 : ring1, opts.fifo_bytes));
  TUTTI_RETURN_IF_ERROR(c->in_.Attach(lower ? ring1 : ring0, opts.fifo_bytes));
  c->seg_ = std::move(seg);
  return c;
}

Status ShmConnection::Enqueue(const FrameHeader& h, const void* payload, uint64_t cookie) {
  if (closed_) return InvalidUsage("shm connection to rank " + std::to_string(peer()) + " is closed");
  if (h.payload_len > max_payload())
    return InternalError("shm frame payload " + std::to_string(h.payload_len) + " > max");
  if (pending_.empty() && out_.TryWrite(h, payload)) {
    if (cookie != 0) sent_.push_back(cookie);
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
    if (p.cookie != 0) sent_.push_back(p.cookie);
    pending_.pop_front();
    moved = true;
  }
  if (moved && peer_bell_) peer_bell_->Ring();
  return moved;
}

Result<bool> ShmConnection::Progress(FrameSink& sink) {
  if (closed_) return false;
  bool moved = Flush();
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
  if (!sent_.empty()) {
    std::vector<uint64_t> done;
    done.swap(sent_);
    for (uint64_t c : done) sink.OnSent(peer(), c);
    moved = true;
  }
  if (!pending_.empty()) moved = Flush() || moved;
  return moved;
}

Status ShmConnection::CheckPeerAlive() {
  if (peer_pid_ <= 0 || peer_pid_ == getpid()) return OkStatus();
  if (ProcessGone(peer_pid_))  // a killed peer that is not reaped yet counts as gone
    return RemoteError("rank " + std::to_string(peer()) + " (pid " + std::to_string(peer_pid_) +
                       ") has died");
  return OkStatus();
}

std::string ShmConnection::DescribeBuffer(const void* buf, size_t len) {
  if (!opts_.use_cma) return "";
  CmaDescriptor d;
  std::memcpy(d.tag, kCmaTag, 4);
  d.pid = getpid();
  d.addr = reinterpret_cast<uint64_t>(buf);
  d.len = len;
  return std::string(reinterpret_cast<const char*>(&d), sizeof(d));
}

Status ShmConnection::ReadRemote(const std::string& descriptor, size_t offset, void* dst, size_t len) {
  return Transfer(descriptor, offset, dst, len, false);
}

Status ShmConnection::WriteRemote(const std::string& descriptor, size_t offset, const void* src, size_t len) {
  return Transfer(descriptor, offset, const_cast<void*>(src), len, true);
}

Status ShmConnection::Transfer(const std::string& descriptor, size_t offset, void* local_buf, size_t len,
                               bool write) {
  if (!opts_.use_cma) return UnavailableError("cross-memory attach disabled");
  CmaDescriptor d;
  if (descriptor.size() != sizeof(d)) return UnavailableError("not a CMA descriptor");
  std::memcpy(&d, descriptor.data(), sizeof(d));
  if (std::memcmp(d.tag, kCmaTag, 4) != 0) return UnavailableError("not a CMA descriptor");
  if (offset > d.len || len > d.len - offset)
    return ProtocolError("CMA range [" + std::to_string(offset) + ", +" + std::to_string(len) +
                         ") outside the peer's " + std::to_string(d.len) + "-byte buffer");
  if (d.pid != peer_pid_) return ProtocolError("CMA descriptor names another process");
  const char* what = write ? "process_vm_writev to rank " : "process_vm_readv from rank ";
  size_t done = 0;
  while (done < len) {
    iovec local{static_cast<char*>(local_buf) + done, len - done};
    iovec remote{reinterpret_cast<void*>(d.addr + offset + done), len - done};
    ssize_t n = write ? process_vm_writev(d.pid, &local, 1, &remote, 1, 0)
                      : process_vm_readv(d.pid, &local, 1, &remote, 1, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EPERM || errno == ENOSYS)
        return UnavailableError(std::string(what) + std::to_string(peer()) + ": " + strerror(errno));
      return SystemError(what + std::to_string(peer()));
    }
    if (n == 0) return RemoteError(what + std::to_string(peer()) + " moved nothing");
    done += static_cast<size_t>(n);
  }
  return OkStatus();
}

void ShmConnection::Close() {
  if (closed_) return;
  closed_ = true;
  pending_.clear();
  seg_.reset();
}

}  // namespace tutti
