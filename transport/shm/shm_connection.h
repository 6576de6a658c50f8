// Shared-memory connection between two ranks on one host: two frame rings (one per direction)
// in one segment, and a guard line per side. Large messages stream through the ring in
// cache-sized pieces (the sender copies a piece in while the receiver copies the previous one
// out, straight into the user's buffer), or, when the connection offers it (use_cma) and the
// kernel allows it, move with process_vm_readv/writev: one copy, split between both processes,
// posted and carried out by RunAccesses outside the protocol's lock. Which messages take which
// is the receiver's choice (EngineOptions::one_sided_all, TUTTI_SHM_CMA: by default only those
// that are copies; see the README).
//
// The guard keeps a peer's copies out of buffers their owner has let go. Each side counts the
// copies it runs on the other's memory (`busy`) and says when its own buffers are gone
// (`revoked`, set by ReleaseBuffers and Close). A copy raises busy, then looks at the owner's
// revoked (failing the copy if set); the owner sets revoked, then waits until busy is 0 before
// ReleaseBuffers / Close return, so a buffer is not copied from or into once its owner may
// reuse it (both sides' steps are sequentially consistent: either the copy sees revoked, or the
// owner sees it running and waits for it). The wait is bounded: it ends when the peer's process
// is gone, or after kGuardWaitSeconds (a peer stopped in the middle of a copy; a warning names
// it, and its copy may then still touch the buffer). A refused copy is kUnavailable: the
// protocol then asks for the data by message, and learns why the peer let go from its CLOSE.
#pragma once

#include <sys/types.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "transport/access_queue.h"
#include "transport/shm/doorbell.h"
#include "transport/shm/shm_ring.h"
#include "transport/shm/shm_segment.h"
#include "transport/transport.h"

namespace tutti {

struct ShmOptions {
  size_t fifo_bytes = 4 << 20;     // per direction, power of two
  size_t piece_bytes = 512 << 10;  // largest frame payload: bulk data moves in such pieces
  bool use_cma = false;            // offer process_vm_readv/writev for large messages (TUTTI_SHM_CMA != 0)
};

class ShmConnection : public Connection {
 public:
  // The guard line of one side (see the top of this file).
  struct alignas(64) Guard {
    std::atomic<uint32_t> busy;     // copies this side is running on the other side's memory
    std::atomic<uint32_t> revoked;  // 1: this side's buffers are gone (no copy may touch them)
  };
  static constexpr double kGuardWaitSeconds = 10;
  // Bytes of the segment shared by a pair.
  static size_t SegmentBytes(const ShmOptions& o) { return 2 * ShmRing::BytesFor(o.fifo_bytes) + 2 * sizeof(Guard); }
  // The lower rank of the pair formats the segment (creator = true) before the peer attaches.
  static Result<std::unique_ptr<ShmConnection>> Make(int peer, pid_t peer_pid,
                                                     std::unique_ptr<ShmSegment> seg, bool creator,
                                                     bool lower, const ShmOptions& opts);
  ~ShmConnection() override { Close(); }

  const char* name() const override { return "shm"; }
  Status Enqueue(const FrameHeader& h, const void* payload, uint64_t cookie) override;
  Result<bool> Progress(FrameSink& sink) override;
  size_t max_payload() const override { return std::min(out_.max_payload(), opts_.piece_bytes); }
  size_t queued_bytes() const override { return queued_bytes_; }
  bool HasLocalWork() const override { return !pending_.empty() || Connection::HasLocalWork(); }
  Status CheckPeerAlive() override;
  std::shared_ptr<const ExposedRegion> Expose(const void* buf, size_t len) override;
  Status PostRead(const std::string& descriptor, size_t offset, void* dst, size_t len, uint64_t cookie) override;
  Status PostWrite(const void* src, const std::string& descriptor, size_t offset, size_t len,
                   uint64_t cookie) override;
  bool RunAccesses() override;
  void Close() override;

  // The creator calls this once the peer has attached, so the name does not outlive the job.
  void UnlinkName() { if (seg_) seg_->Unlink(); }
  // Copies the peer is running on this side's memory now (its guard's busy count).
  uint32_t PeerCopiesRunning() const {
    return peer_guard_ != nullptr ? peer_guard_->busy.load(std::memory_order_seq_cst) : 0;
  }
  // The peer's doorbell, rung after every frame written for it.
  void SetPeerDoorbell(std::unique_ptr<Doorbell> bell) { peer_bell_ = std::move(bell); }

 private:
  ShmConnection(int peer, pid_t peer_pid, const ShmOptions& opts)
      : Connection(peer), peer_pid_(peer_pid), opts_(opts) {}
  bool Flush();

 public:
  void ReleaseBuffers() override {
    pending_.clear();  // frames enter the ring whole: nothing queued has started
    queued_bytes_ = 0;
    access_.Release();
    RevokeAndWait();
  }
  void BeginRelease() override {
    if (my_guard_ != nullptr) my_guard_->revoked.store(1, std::memory_order_seq_cst);
  }

 private:
  Status PostAccess(const std::string& descriptor, size_t offset, void* local, size_t len, uint64_t cookie,
                    bool write);
  Status Copy(const Access& a) const;
  Status CopyBytes(const Access& a) const;
  // Marks this side's buffers gone and waits (bounded) until no copy of the peer's touches them.
  void RevokeAndWait();

  struct Pending {
    FrameHeader h;
    const void* payload;
    uint64_t cookie;
  };
  pid_t peer_pid_;
  ShmOptions opts_;
  std::unique_ptr<ShmSegment> seg_;
  ShmRing out_, in_;
  std::deque<Pending> pending_;
  size_t queued_bytes_ = 0;
  bool closed_ = false;
  std::unique_ptr<Doorbell> peer_bell_;
  AccessQueue access_;  // posted one-sided copies (CMA)
  Guard* my_guard_ = nullptr;    // in the segment
  Guard* peer_guard_ = nullptr;
  bool revoked_ = false;         // RevokeAndWait has run
};

}  // namespace tutti
