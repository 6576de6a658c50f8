// The transport interface: a Connection moves frames (transport/frame.h) to and from one peer.
//
// Connections are driven by the communicator's progress engine: Enqueue() never blocks, and
// Progress() does whatever non-blocking work is possible (writes queued frames, reads arrived
// ones and hands them to the FrameSink). A frame's payload goes straight to the place the sink
// chooses, so a transport that can (TCP, shm) never stages a payload in a buffer of its own.
//
// One-sided access is optional: a transport that can read a peer's memory (process_vm_readv
// today; CUDA IPC and RDMA reads later) exposes a buffer as a descriptor on one side and reads
// it on the other. Transports never include each other; core/ picks one per peer pair and each
// transport connects its pairs through transport/setup.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "transport/frame.h"

namespace tutti {

// Implemented by the protocol layer; called from inside Connection::Progress().
class FrameSink {
 public:
  virtual ~FrameSink() = default;
  // A header arrived (already validated by ValidateFrameHeader). Returns where its payload goes:
  // a buffer of at least h.payload_len bytes, or nullptr to discard it. An error fails the
  // connection (a protocol violation by the peer).
  virtual Result<void*> OnHeader(int peer, const FrameHeader& h) = 0;
  // The payload is in place.
  virtual Status OnFrame(int peer, const FrameHeader& h) = 0;
  // A frame enqueued with a non-zero cookie has been handed to the wire entirely.
  virtual void OnSent(int peer, uint64_t cookie) = 0;
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
  // Bytes queued and not yet on the wire (for pacing bulk data).
  virtual size_t queued_bytes() const = 0;
  // File descriptors that become readable when data arrives (none: waiters sleep and poll).
  virtual void AppendWaitFds(std::vector<int>* fds) const {}
  // A cheap check that the peer still exists (called while waiting). Error: peer is gone.
  virtual Status CheckPeerAlive() { return OkStatus(); }

  // One-sided reads. DescribeBuffer returns "" when this transport cannot expose memory.
  virtual std::string DescribeBuffer(const void* buf, size_t len) { return ""; }
  // Reads len bytes at `offset` of the peer's buffer named by `descriptor` (from the peer's
  // DescribeBuffer) into dst. kUnavailable: not possible (the protocol then sends the data).
  virtual Status ReadRemote(const std::string& descriptor, size_t offset, void* dst, size_t len) {
    return UnavailableError("one-sided reads not supported");
  }
  // Writes len bytes from src at `offset` of the peer's described buffer. kUnavailable as above.
  virtual Status WriteRemote(const std::string& descriptor, size_t offset, const void* src, size_t len) {
    return UnavailableError("one-sided writes not supported");
  }

  // After the communicator failed, the buffers of its operations may be released by their
  // owners at any moment, so the connection must not touch them again: every queued frame that
  // has not started is forgotten, one already partly on the wire is finished with zeros (the
  // stream stays framed for what follows, CLOSE), and a payload being received is discarded.
  virtual void ReleaseBuffers() = 0;

  // Releases resources. After Close, nothing is sent or received.
  virtual void Close() = 0;

 protected:
  explicit Connection(int peer) : peer_(peer) {}

 private:
  int peer_;
};

}  // namespace tutti
