// Shared-memory connection between two ranks on one host: two frame rings (one per direction)
// in one segment, plus process_vm_readv (cross-memory attach) for large messages, so that the
// receiver copies straight from the sender's buffer into its own (one copy, no staging).
#pragma once

#include <sys/types.h>

#include <deque>
#include <memory>
#include <vector>

#include "transport/shm/shm_ring.h"
#include "transport/shm/shm_segment.h"
#include "transport/transport.h"

namespace tutti {

struct ShmOptions {
  size_t fifo_bytes = 1 << 20;  // per direction, power of two
  bool use_cma = true;
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
  size_t max_payload() const override { return out_.max_payload(); }
  size_t queued_bytes() const override { return queued_bytes_; }
  Status CheckPeerAlive() override;
  std::string DescribeBuffer(const void* buf, size_t len) override;
  Status ReadRemote(const std::string& descriptor, size_t offset, void* dst, size_t len) override;
  Status WriteRemote(const std::string& descriptor, size_t offset, const void* src, size_t len) override;
  void Close() override;

  // The creator calls this once the peer has attached, so the name does not outlive the job.
  void UnlinkName() { if (seg_) seg_->Unlink(); }

 private:
  ShmConnection(int peer, pid_t peer_pid, const ShmOptions& opts)
      : Connection(peer), peer_pid_(peer_pid), opts_(opts) {}
  bool Flush();
  Status Transfer(const std::string& descriptor, size_t offset, void* local, size_t len, bool write);

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
  std::vector<uint64_t> sent_;  // cookies written, to report in Progress
  size_t queued_bytes_ = 0;
  bool closed_ = false;
};

}  // namespace tutti
