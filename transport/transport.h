// The transport interface: a Connection moves frames (transport/frame.h) to and from one peer.
//
// Connections are driven by the communicator's progress engine: Enqueue() never blocks, and
// Progress() does whatever non-blocking work is possible (writes queued frames, reads arrived
// ones and hands them to the FrameSink). A frame's payload goes straight to the place the sink
// chooses, so a transport that can (TCP, shm) never stages a payload in a buffer of its own.
//
// One-sided access is optional: a transport that can reach a peer's memory (process_vm_readv
// today; CUDA IPC and RDMA later) exposes a buffer on one side (Expose: the registration, whose
// descriptor is what the peer needs) and posts reads and writes of it on the other. A posted
// access returns at once and ends later, reported once through FrameSink::OnAccessDone from
// Progress(), as a completion queue or a CUDA event would report it. Transports never include
// each other; core/ picks one per peer pair and each transport connects its pairs through
// transport/setup.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/base/status.h"
#include "transport/frame.h"

namespace tutti {

// Implemented by the protocol layer; called from inside Connection::Progress().
class FrameSink {
 public:
  virtual ~FrameSink() = default;
  // A header arrived (its envelope checked by ValidateEnvelope: the rest is the sink's to check).
  // Returns where its payload goes:
  // a buffer of at least h.payload_len bytes, or nullptr to discard it. An error fails the
  // connection (a protocol violation by the peer).
  virtual Result<void*> OnHeader(int peer, const FrameHeader& h) = 0;
  // The payload is in place.
  virtual Status OnFrame(int peer, const FrameHeader& h) = 0;
  // A frame enqueued with a non-zero cookie has been handed to the wire entirely.
  virtual void OnSent(int peer, uint64_t cookie) = 0;
  // The one-sided access posted with `cookie` ended: OK, kUnavailable (this pair cannot do it
  // after all; the protocol falls back to sending the data), or an error.
  virtual void OnAccessDone(int peer, uint64_t cookie, const Status& st) = 0;
};

// Memory a transport made reachable for the peer (CMA: pid and address; RDMA: a memory region
// and its key; CUDA IPC: an exported handle). Held while the peer may access it; released with
// the last reference.
class ExposedRegion {
 public:
  virtual ~ExposedRegion() = default;
  const std::string& descriptor() const { return descriptor_; }  // at most kMaxDescriptorBytes

 protected:
  explicit ExposedRegion(std::string descriptor) : descriptor_(std::move(descriptor)) {}

 private:
  std::string descriptor_;
};

// Lets a rank that waits sleep until a peer writes to it (shm: a futex doorbell the peers
// ring). Prepare, re-check for work, Wait (returns at once if woken since Prepare), Done.
class WakeSource {
 public:
  virtual ~WakeSource() = default;
  virtual uint32_t Prepare() = 0;
  virtual void Wait(uint32_t seen, int timeout_us) = 0;
  virtual void Done() = 0;
};

class Connection {
 public:
  virtual ~Connection() = default;

  virtual const char* name() const = 0;  // "shm", "tcp"
  int peer() const { return peer_; }

  // Queues a frame. `payload` (h.payload_len bytes) must stay valid until OnSent(cookie) when
  // cookie != 0, or until the protocol knows the peer has it (an ACK) otherwise.
  virtual Status Enqueue(const FrameHeader& h, const void* payload, uint64_t cookie) = 0;
  // Non-blocking work. Returns true if anything moved. An error means the connection is broken.
  virtual Result<bool> Progress(FrameSink& sink) = 0;
  // Largest payload of one frame this transport accepts (bulk data is cut into such pieces).
  virtual size_t max_payload() const = 0;
  // The peer is about to send `bytes` of payload in frames flagged kFrameBulk (the protocol asked
  // for them): a transport that carries those on lanes of their own watches the lanes until they
  // came.
  virtual void ExpectBulk(uint64_t bytes) {}
  // Bytes queued and not yet on the wire (for pacing bulk data).
  virtual size_t queued_bytes() const = 0;
  // Whether Progress has work that no wait fd shows: frames queued, or frames handed to the wire
  // whose OnSent is not reported yet (a progress context must name such a connection).
  virtual bool HasLocalWork() const { return queued_bytes() > 0 || !sent_.empty(); }
  // File descriptors that become readable when data arrives (none: waiters sleep and poll).
  virtual void AppendWaitFds(std::vector<int>* fds) const {}
  // A cheap check that the peer still exists (called while waiting). Error: peer is gone.
  virtual Status CheckPeerAlive() { return OkStatus(); }

  // One-sided access. Expose returns nullptr when this transport cannot expose memory.
  virtual std::shared_ptr<const ExposedRegion> Expose(const void* buf, size_t len) { return nullptr; }
  // Posts a read of len bytes at `offset` of the peer's region named by `descriptor` (from the
  // peer's Expose) into dst, or a write of src there. OK: posted; its end is reported once by
  // OnAccessDone(cookie) and the local buffer must stay valid until then (or until
  // ReleaseBuffers). An error now (nothing is reported later): kUnavailable when this transport
  // cannot (the protocol then sends the data), kProtocol for a range outside the region or a
  // descriptor naming another process.
  virtual Status PostRead(const std::string& descriptor, size_t offset, void* dst, size_t len, uint64_t cookie) {
    return UnavailableError("one-sided access not supported");
  }
  virtual Status PostWrite(const void* src, const std::string& descriptor, size_t offset, size_t len,
                           uint64_t cookie) {
    return UnavailableError("one-sided access not supported");
  }
  // Carries out posted accesses that need a CPU to copy. The protocol calls it without its own
  // lock, from any of its threads (several at once), so one peer's large copy never holds up the
  // progress of the others; it may run beside this connection's other calls. True if it copied.
  virtual bool RunAccesses() { return false; }

  // After the communicator failed, the buffers of its operations may be released by their
  // owners at any moment, so the connection must not touch them again: every queued frame that
  // has not started is forgotten, one already partly on the wire is finished with zeros (the
  // stream stays framed for what follows, CLOSE), and a payload being received is discarded.
  // Posted one-sided accesses that have not started are forgotten, running ones are waited
  // for, and none is reported afterwards. Where the peer copies into or out of this side's
  // memory itself (shm's cross-memory attach), its copies are refused from now on (for good)
  // and its running ones are waited for (bounded), so this may block for as long as such a copy
  // takes.
  virtual void ReleaseBuffers() = 0;
  // The first step of ReleaseBuffers (which also takes it): the peer starts no more copies on
  // this side's memory. A protocol letting go of several connections calls it on each first, so
  // their waits for running copies overlap.
  virtual void BeginRelease() {}

  // Releases resources (and the buffers, as ReleaseBuffers). After Close, nothing is sent or
  // received and no memory is accessed.
  virtual void Close() = 0;

 protected:
  explicit Connection(int peer) : peer_(peer) {}
  // A frame enqueued with `cookie` is on the wire entirely (0: nobody asked).
  void NoteSent(uint64_t cookie) {
    if (cookie != 0) sent_.push_back(cookie);
  }
  // Reports the noted frames through OnSent. Progress does so before it hands arrived frames to
  // the sink (the protocol must learn that a send left before it hears that the peer closed),
  // and again at its end for frames the sink queued meanwhile. True if it reported any.
  bool ReportSent(FrameSink& sink) {
    if (sent_.empty()) return false;
    reporting_.swap(sent_);  // OnSent may queue frames, which note cookies of their own
    for (uint64_t c : reporting_) sink.OnSent(peer_, c);
    reporting_.clear();
    return true;
  }

 private:
  int peer_;
  std::vector<uint64_t> sent_, reporting_;
};

}  // namespace tutti
