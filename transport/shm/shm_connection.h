// Shared-memory connection between two ranks on one host: two frame rings (one per direction)
// in one segment. Large messages stream through the ring in cache-sized pieces: the sender
// copies a piece in while the receiver copies the previous one out, straight into the user's
// buffer (no intermediate buffer). Optionally (TUTTI_SHM_CMA=1) large messages are instead moved
// with process_vm_readv/writev (one copy, split between both processes), posted and carried out
// by RunAccesses outside the protocol's lock; on the machines
// measured the pipelined ring was faster (see README), so that is the default.
#pragma once

#include <sys/types.h>

#include <algorithm>
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
  bool use_cma = false;            // offer process_vm_readv/writev for large messages
};

class ShmConnection : public Connection {
 public:
  // Bytes of the segment shared by a pair.
  static size_t SegmentBytes(const ShmOptions& o) { return 2 * ShmRing::BytesFor(o.fifo_bytes); }
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
  }

 private:
  Status PostAccess(const std::string& descriptor, size_t offset, void* local, size_t len, uint64_t cookie,
                    bool write);
  Status Copy(const Access& a) const;

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
};

}  // namespace tutti
